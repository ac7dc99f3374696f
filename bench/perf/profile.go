package perf

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"coupond/bench/harness"
)

// profiler is the evidence available without a pprof endpoint in the
// server: samples of what the bench database's backends wait on, and the CPU
// time the server, PostgreSQL and the generator spend.
type profiler struct {
	stop0 chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	waits map[string]int
	cpu0  cpuReading
	fx    *harness.Fixture
}

func startProfiler(ctx context.Context, fx *harness.Fixture, env harness.Env) *profiler {
	p := &profiler{stop0: make(chan struct{}), waits: map[string]int{}, fx: fx}
	p.cpu0 = readCPU(fx)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop0:
				return
			case <-t.C:
			}
			rows, err := fx.Pool.Query(ctx, `SELECT COALESCE(wait_event_type || ':' || wait_event, state, 'unknown')
FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND state IS NOT NULL AND state <> 'idle'`, fx.DBName)
			if err != nil {
				continue
			}
			for rows.Next() {
				var w string
				if rows.Scan(&w) == nil {
					p.mu.Lock()
					p.waits[w]++
					p.mu.Unlock()
				}
			}
			rows.Close()
		}
	}()
	return p
}

func (p *profiler) stop() (map[string]int, map[string]float64) {
	close(p.stop0)
	p.wg.Wait()
	return p.waits, readCPU(p.fx).since(p.cpu0)
}

// cpuReading is the CPU seconds (user+system) of each process of interest,
// by pid, with the class it counts in, and the whole machine's busy CPU
// seconds (from /proc/stat).
type cpuReading struct {
	procs   map[int]procCPUReading
	machine float64
}

type procCPUReading struct {
	class string
	secs  float64
}

// since returns the CPU seconds spent since the earlier reading a by class:
// "coupond server", "generator (this process)", "postgresql (all
// processes)" and, within that, "postgresql client backends" and
// "postgresql autovacuum" and "postgresql other" (checkpointer, WAL writer,
// ...); and "machine (all processes)". A process that
// ended between the readings counts only in the machine's figure; one that
// started counts whole.
func (r cpuReading) since(a cpuReading) map[string]float64 {
	out := map[string]float64{"coupond server": 0, "generator (this process)": 0, "postgresql (all processes)": 0,
		"postgresql client backends": 0, "postgresql autovacuum": 0, "postgresql other": 0}
	for pid, c := range r.procs {
		d := c.secs - a.procs[pid].secs
		if prev, ok := a.procs[pid]; ok && prev.class != c.class {
			d = c.secs // a pid reused by another process
		}
		if strings.HasPrefix(c.class, "postgresql") {
			out["postgresql (all processes)"] += d
		}
		out[c.class] += d
	}
	out["machine (all processes)"] = r.machine - a.machine
	for k, v := range out {
		out[k] = round(v)
	}
	return out
}

// readCPU reads the CPU time of fx's server, of this generator, of every
// postgres process on the machine, and of the machine.
func readCPU(fx *harness.Fixture) cpuReading {
	r := cpuReading{procs: map[int]procCPUReading{
		fx.Server.PID(): {"coupond server", procCPU(fx.Server.PID())},
		os.Getpid():     {"generator (this process)", procCPU(os.Getpid())},
	}}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		comm, err := os.ReadFile(filepath.Join(d, "comm"))
		if err != nil || strings.TrimSpace(string(comm)) != "postgres" {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		// A backend's title is "postgres: user db host(port) state"; the
		// other processes name their role ("postgres: autovacuum worker",
		// "postgres: checkpointer", ...).
		title, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		class := "postgresql other"
		switch t := string(title); {
		case strings.Contains(t, "autovacuum"):
			class = "postgresql autovacuum"
		case strings.Contains(t, "("):
			class = "postgresql client backends"
		}
		r.procs[pid] = procCPUReading{class, procCPU(pid)}
	}
	h := harness.ReadHostCPU()
	r.machine = (h.Total - h.Idle - h.Steal) / 100
	return r
}

func procCPU(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100
}

// serverProcs is the GOMAXPROCS of the coupond servers the scenarios start
// on PostgreSQL: half the machine's cores, at least one, as
// docs/operations.md advises for a server that shares its machine with
// PostgreSQL. Here the generator shares it too; docs/TUNING.md has what the
// setting measured. The embedded SQLite rows keep Go's default: there the
// database runs inside coupond's own process.
func serverProcs() int { return max(1, runtime.NumCPU()/2) }

// generatorProcs is the GOMAXPROCS of this process while it generates load:
// one core is ample for its rates, and a second only adds the Go
// scheduler's wake-ups to a machine the server and PostgreSQL share.
const generatorProcs = 1
