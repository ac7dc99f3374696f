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
	cpu0  map[string]float64
	fx    *harness.Fixture
}

func startProfiler(ctx context.Context, fx *harness.Fixture, env harness.Env) *profiler {
	p := &profiler{stop0: make(chan struct{}), waits: map[string]int{}, fx: fx}
	p.cpu0 = p.cpu()
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
	c1 := p.cpu()
	out := map[string]float64{}
	for k, v := range c1 {
		out[k] = round(v - p.cpu0[k])
	}
	return p.waits, out
}

// cpu returns CPU seconds (user+system) of the server, of every postgres
// process on the machine, and of this generator.
func (p *profiler) cpu() map[string]float64 {
	out := map[string]float64{"coupond server": procCPU(p.fx.Server.PID()), "generator (this process)": procCPU(os.Getpid())}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	pg := 0.0
	for _, d := range dirs {
		comm, err := os.ReadFile(filepath.Join(d, "comm"))
		if err != nil || strings.TrimSpace(string(comm)) != "postgres" {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		pg += procCPU(pid)
	}
	out["postgresql (all processes)"] = pg
	return out
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
