// Command coupond-bench runs coupond's benchmark scenarios (perf) or its
// fault suite (faults) against a coupond binary and the local PostgreSQL, and
// writes the reports.
//
//	coupond-bench perf   -bin BIN [-quick] -doc docs/PERFORMANCE.md -json bench/results/DATE.json
//	coupond-bench faults -bin BIN [-ci]    -doc docs/RELIABILITY.md -json bench/results/DATE-faults.json
//	coupond-bench probe  -bin BIN -rate 300 -for 15s   (one constant-rate run with the server's pprof top)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"coupond/bench/faults"
	"coupond/bench/harness"
	"coupond/bench/perf"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: coupond-bench perf|faults [flags]")
		os.Exit(2)
	}
	cmd := os.Args[1]
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	bin := fs.String("bin", "", "coupond binary (required)")
	pgHost := fs.String("pg-host", "127.0.0.1", "PostgreSQL host")
	pgPort := fs.Int("pg-port", 5432, "PostgreSQL port")
	adminDB := fs.String("admin-db", "test", "existing database used to create and drop the bench databases")
	dir := fs.String("dir", os.TempDir(), "scratch directory for logs")
	quick := fs.Bool("quick", false, "perf: small sizes and short steps (under 2 minutes)")
	ci := fs.Bool("ci", false, "faults: the short subset (about 70 s)")
	only := fs.String("only", "", "faults, perf: run only this group (redis: the Redis faults, or the Redis on/off scenarios on three replicas; patroni: the failover faults of a Patroni cluster; webhooks: the webhook faults and the PostgreSQL restarts, or the webhook knees and delivery lag; scale: the knees through pgbouncer, behind haproxy, with tracing and with synchronous commit; reconciliation: the reconciliation row on a seeded ledger; export: the ledger export row on a seeded ledger; products: the knee with weekday and time rules against without, and the per-store daily limit's rate; sqlite: the embedded SQLite rows, FULL against NORMAL)")
	control := fs.Bool("control", false, "perf -only reconciliation or export: first a control row, the same load beside nothing but a sleep")
	knee := fs.Float64("knee", 0, "perf -only redis, reconciliation or export: the single server's knee, whose half is the replicas' (or the background row's) fixed rate (default: the latest record's)")
	doc := fs.String("doc", "", "write the Markdown report here")
	out := fs.String("json", "", "write the JSON record here")
	command := fs.String("command", "", "the command line to print in the report")
	rate := fs.Float64("rate", 200, "probe: redemptions per second")
	probeWarm := fs.Bool("warm", false, "probe: run redemptions at the probe's rate for 3 s, unmeasured, before it, as the knee's steps do")
	probeSample := fs.Bool("sample", false, "probe: scrape /metrics every 200 ms during the load, as the perf rows do")
	serverProcs := fs.Int("server-procs", 0, "probe: the server's GOMAXPROCS (0: half the cores, as in the perf run; -1: Go's default, every core)")
	generatorProcs := fs.Int("generator-procs", 0, "probe: this process's GOMAXPROCS while it generates load (0: as in the perf run)")
	secs := fs.Duration("for", 15*time.Second, "probe: how long")
	maxConns := fs.Int("max-conns", 0, "probe: the server's pool size (0: its default)")
	probeJobs := fs.Bool("jobs", false, "probe: run the server's background jobs")
	preRate := fs.Float64("before-rate", 0, "probe: redemptions per second of an unmeasured load before the probe's warm-up")
	preFor := fs.Duration("before-for", 15*time.Second, "probe: how long the load of -before-rate runs")
	ledger := fs.Int("ledger", 0, "probe: seed a ledger of this many coupons first, most of them redeemed, with their flows, transitions and orders")
	filler := fs.Int("filler", 0, "probe: issue this many more coupons first, in a campaign of their own, so the probe runs on a coupons table the size of the full run's (about 2,800,000)")
	dirtyBackground := fs.Int64("dirty-background-bytes", perf.DefaultDirtyBackgroundBytes, "perf, probe: the kernel's vm.dirty_background_bytes during the run, given back afterwards (0: leave the host's writeback settings; docs/operations.md says why)")
	webhook := fs.Bool("webhook", false, "probe: with one webhook endpoint subscribed to every event type, at a receiver on loopback")
	_ = fs.Parse(os.Args[2:])
	if *bin == "" && !strings.HasPrefix(cmd, "render") {
		fmt.Fprintln(os.Stderr, "-bin is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := harness.Env{Bin: *bin, PGHost: *pgHost, PGPort: *pgPort, AdminDB: *adminDB, Dir: *dir}
	logf := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, a...)...)
	}
	var md string
	var rec any
	failed := false
	switch cmd {
	case "perf":
		if *only == "redis" && *knee <= 0 {
			*knee = latestKnee(filepath.Dir(*out), "bench/results")
			if *knee <= 0 {
				fmt.Fprintln(os.Stderr, "perf -only redis: no record with a knee found; give -knee (KNEE=N)")
				os.Exit(2)
			}
			logf("single-server knee %.0f/s, from the latest record", *knee)
		}
		res, err := perf.Run(ctx, perf.Config{Quick: *quick, Only: *only, Knee: *knee, Control: *control, DirtyBackgroundBytes: *dirtyBackground, Env: env, Log: logf})
		if err != nil {
			fmt.Fprintln(os.Stderr, "perf:", err)
			os.Exit(1)
		}
		if *only == "" {
			res.Separate = separateRuns(filepath.Dir(*out))
		}
		md, rec = res.Markdown(*command), res
	case "probe":
		out, err := perf.Probe(ctx, perf.ProbeConfig{Env: env, Rate: *rate, Duration: *secs, MaxConns: *maxConns, ServerProcs: *serverProcs, GeneratorProcs: *generatorProcs, Webhook: *webhook, Jobs: *probeJobs, Sample: *probeSample, WarmAtRate: *probeWarm, Filler: *filler, PreRate: *preRate, Ledger: *ledger, PreFor: *preFor, DirtyBackgroundBytes: *dirtyBackground, Log: logf})
		fmt.Print(out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "probe:", err)
			os.Exit(1)
		}
		return
	case "faults":
		res, err := faults.Run(ctx, faults.Config{CI: *ci, Only: *only, Env: env, Log: logf})
		if err != nil {
			fmt.Fprintln(os.Stderr, "faults:", err)
			os.Exit(1)
		}
		md, rec = res.Markdown(*command), res
		failed = res.Violations() > 0 || res.RedisCaused() > 0
	case "render-perf", "render-faults":
		// Re-render a report from its JSON record (-json is read, not written).
		b, err := os.ReadFile(*out)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if cmd == "render-perf" {
			var res perf.Result
			err = json.Unmarshal(b, &res)
			if res.Only == "" {
				res.Separate = separateRuns(filepath.Dir(*out))
			}
			md = res.Markdown(*command)
		} else {
			var res faults.Result
			err = json.Unmarshal(b, &res)
			md = res.Markdown(*command)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		*out = ""
	default:
		fmt.Fprintln(os.Stderr, "unknown command", cmd)
		os.Exit(2)
	}
	if *doc != "" {
		if err := os.WriteFile(*doc, []byte(md), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	} else {
		fmt.Print(md)
	}
	if *out != "" {
		b, _ := json.MarshalIndent(rec, "", "  ")
		if err := os.WriteFile(*out, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if failed {
		fmt.Fprintln(os.Stderr, strings.Repeat("!", 3), "invariant violations or client errors caused by Redis found")
		os.Exit(1)
	}
}

// latestKnee returns the knee of the newest perf record in dirs that has
// one, or 0.
// separateRuns loads, from dir, the latest record of each ONLY run whose
// sections the full report carries (scale, reconciliation, webhooks).
func separateRuns(dir string) []perf.SeparateRun {
	var out []perf.SeparateRun
	for _, only := range []string{"scale", "reconciliation", "webhooks"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*-"+only+".json"))
		if len(files) == 0 {
			continue
		}
		sort.Strings(files)
		f := files[len(files)-1]
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var r perf.Result
		if json.Unmarshal(b, &r) != nil || r.Only != only {
			continue
		}
		out = append(out, perf.SeparateRun{File: filepath.ToSlash(f), Result: &r})
	}
	return out
}

func latestKnee(dirs ...string) float64 {
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		sort.Sort(sort.Reverse(sort.StringSlice(files)))
		for _, f := range files {
			if strings.HasSuffix(f, "-faults.json") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			var r struct {
				Knee float64 `json:"knee_per_sec"`
			}
			if json.Unmarshal(b, &r) == nil && r.Knee > 0 {
				return r.Knee
			}
		}
	}
	return 0
}
