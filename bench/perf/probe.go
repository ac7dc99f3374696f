package perf

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"coupond/bench/harness"
	"coupond/bench/load"
)

// ProbeConfig is one constant-rate probe: redemptions of distinct coupons at
// Rate per second for Duration, with the server's CPU profile recorded.
type ProbeConfig struct {
	Env      harness.Env
	Rate     float64
	Duration time.Duration
	// MaxConns is the server's pool size (0: its default).
	MaxConns int
	// ServerProcs is the server's GOMAXPROCS (0: as in the perf run, half
	// the cores; -1: Go's default, every core).
	ServerProcs int
	// GeneratorProcs is this process's GOMAXPROCS during the probe (0: as
	// in the perf run).
	GeneratorProcs int
	// Webhook subscribes one endpoint, at a receiver on loopback that
	// verifies every signature, to every event type, runs the server's jobs
	// (its delivery worker among them) and reports how long the deliveries
	// took to drain after the load and their lag.
	Webhook bool
	// Jobs runs the server's background jobs (their schedules as in serve's
	// defaults); Webhook turns them on too.
	Jobs bool
	// Sample scrapes the server's /metrics every 200 ms during the load, as
	// the perf rows do for RSS and goroutines.
	Sample bool
	// WarmAtRate runs redemptions at Rate for warmUpFor, unmeasured,
	// before the probe, as the knee's steps do, so the probe measures a
	// server past its cold start.
	WarmAtRate bool
	// Ledger, when set, seeds a ledger of that many coupons first (most
	// redeemed, with their flows, transitions and orders: seedLedger), so
	// the probe runs beside a history like the full run's.
	Ledger int
	// PreRate, when set, runs redemptions at PreRate for PreFor, unmeasured,
	// before the probe's warm-up, as the full run's knee steps (some past
	// the knee) run before its row at half the knee.
	PreRate float64
	PreFor  time.Duration
	// Filler issues this many more coupons first, in a campaign of their
	// own, so the probe measures a coupons table (and its indexes) the size
	// of the full run's rather than a fresh one.
	Filler int
	// DirtyBackgroundBytes is the kernel's vm.dirty_background_bytes during
	// the probe, as Config's for a run; 0 leaves the host's.
	DirtyBackgroundBytes int64
	Log                  func(format string, a ...any)
}

// Probe runs one constant-rate redemption load against a fresh server and
// returns a text report: latency percentiles, CPU per redemption and the
// pprof top of the server (its CPU profile and its allocations since start
// stay in the scratch directory, probe.cpu.pprof and probe.allocs.pprof).
// It is the quick loop for finding where the time goes; the full report is
// Run's.
func Probe(ctx context.Context, cfg ProbeConfig) (string, error) {
	env := cfg.Env
	gp := generatorProcs
	if cfg.GeneratorProcs > 0 {
		gp = cfg.GeneratorProcs
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(gp))
	wb, ownWriteback := setWriteback(cfg.DirtyBackgroundBytes)
	defer ownWriteback()
	procs := cfg.ServerProcs
	if procs == 0 {
		procs = serverProcs()
	}
	dbg, err := harness.FreePort()
	if err != nil {
		return "", err
	}
	fx, err := env.NewFixture(ctx, "coupond_bench_probe", harness.ServerConfig{GoMaxProcs: procs, Name: "probe-server", Jobs: cfg.Webhook || cfg.Jobs,
		HoldTimeout: 2 * time.Minute, CompensateEvery: 30 * time.Second, MaxConns: cfg.MaxConns, DebugPort: dbg,
		AllowPrivateWebhooks: cfg.Webhook})
	if err != nil {
		return "", err
	}
	defer func() { fx.Close(); _ = env.DropDB(context.Background(), "coupond_bench_probe") }()
	var rcv *harness.Receiver
	if cfg.Webhook {
		if rcv, err = harness.StartReceiver(); err != nil {
			return "", err
		}
		defer rcv.Down()
		if _, err := harness.Subscribe(ctx, fx.Admin, rcv); err != nil {
			return "", err
		}
	}
	if cfg.Filler > 0 {
		cfg.Log("issuing %d filler codes", cfg.Filler)
		if _, err := issueCodes(ctx, fx, "filler", cfg.Filler); err != nil {
			return "", err
		}
	}
	if cfg.Ledger > 0 {
		cfg.Log("seeding a ledger of %d coupons", cfg.Ledger)
		if err := seedLedger(ctx, fx, cfg.Ledger); err != nil {
			return "", err
		}
	}
	n := int(cfg.Rate*cfg.Duration.Seconds()) + 500 + int(cfg.PreRate*cfg.PreFor.Seconds())
	if cfg.WarmAtRate {
		n += int(cfg.Rate * warmUpFor.Seconds())
	}
	cfg.Log("issuing %d codes", n)
	_, _, list, err := fx.Campaign(ctx, "probe", n)
	if err != nil {
		return "", err
	}
	if q := os.Getenv("PROBE_SQL"); q != "" {
		if _, err := fx.Pool.Exec(ctx, q); err != nil {
			return "", err
		}
	}
	if err := settle(ctx, fx); err != nil {
		return "", err
	}
	pool := &codes{list: list}
	var rid atomic.Int64
	next := func(int) load.Op {
		return load.Redeem("redeem", pool.take(), fx.StoreID, "probe-"+strconv.FormatInt(rid.Add(1), 10))
	}
	url := fx.Server.URL() + "/graphql"
	load.Run(ctx, load.Attack{Name: "warm-up", URL: url, Token: fx.Clerk, Pacer: load.Constant{PerSec: 50},
		Duration: 3 * time.Second, MaxOps: 150, Next: next})
	if cfg.PreRate > 0 {
		cfg.Log("unmeasured load at %.0f/s for %s", cfg.PreRate, cfg.PreFor)
		recs := load.Run(ctx, load.Attack{Name: "before", URL: url, Token: fx.Clerk, Pacer: load.Constant{PerSec: cfg.PreRate},
			Duration: cfg.PreFor, MaxOps: int(cfg.PreRate * cfg.PreFor.Seconds()), Next: next})
		st := load.Summarise(recs, nil)
		cfg.Log("  ok %d fail %d unknown %d, p99 %.1f ms", st.OK, st.Fail, st.Unknown, st.P99)
	}
	if cfg.WarmAtRate {
		warmUpAt(ctx, url, fx.Clerk, cfg.Rate, next)
	}
	cfg.Log("probe at %.0f/s for %s", cfg.Rate, cfg.Duration)
	if rcv != nil {
		if err := drainDeliveries(ctx, fx, 2*time.Minute); err != nil {
			return "", err
		}
		rcv.ResetLags()
	}
	profPath := filepath.Join(env.Dir, "probe.cpu.pprof")
	profErr := make(chan error, 1)
	go func() { profErr <- fx.Server.CPUProfile(ctx, cfg.Duration-time.Second, profPath) }()
	prof := startProfiler(ctx, fx, env)
	var sm *harness.Sampler
	if cfg.Sample {
		sm = harness.StartSampler(fx.Server, 200*time.Millisecond)
	}
	host0 := harness.ReadHostCPU()
	wal0, tables0 := readWAL(ctx, fx), tableWrites(ctx, fx)
	recs := load.Run(ctx, load.Attack{Name: "probe", URL: url, Token: fx.Clerk, Pacer: load.Constant{PerSec: cfg.Rate},
		Duration: cfg.Duration, MaxOps: int(cfg.Rate * cfg.Duration.Seconds()), Next: next})
	sampled := ""
	if sm != nil {
		r := sm.Stop()
		sampled = fmt.Sprintf("server peaks during the load: RSS %.0f MB, %.0f goroutines, %.0f HTTP connections\n", r.RSSMB, r.Goroutines, r.Conns)
	}
	drain := ""
	if rcv != nil {
		t0 := time.Now()
		if err := drainDeliveries(ctx, fx, 5*time.Minute); err != nil {
			return "", err
		}
		p50, _ := rcv.LagQuantile(0.5)
		p99, n := rcv.LagQuantile(0.99)
		drain = fmt.Sprintf("webhooks: drained %s after the load; %d events, lag p50 %.0f ms p99 %.0f ms, bad signatures %d\n",
			time.Since(t0).Round(10*time.Millisecond), n, ms(p50), ms(p99), rcv.BadSignatures())
	}
	host := harness.ReadHostCPU().Since(host0)
	time.Sleep(1500 * time.Millisecond) // the statistics reach the views within a second
	wal1, tables1 := readWAL(ctx, fx), tableWrites(ctx, fx)
	allocPath := filepath.Join(env.Dir, "probe.allocs.pprof")
	if err := fx.Server.SaveProfile(ctx, "allocs", allocPath); err != nil {
		cfg.Log("no allocation profile: %v", err)
	}
	waits, cpu := prof.stop()
	st := load.Summarise(recs, nil)
	out := fmt.Sprintf("rate %.0f/s: ops %d ok %d fail %d unknown %d; p50 %.1f p95 %.1f p99 %.1f p99.9 %.1f max %.1f ms; ok/s %.0f\n",
		cfg.Rate, st.Ops, st.OK, st.Fail, st.Unknown, st.P50, st.P95, st.P99, st.P999, st.Max, st.OKPerSec)
	out += sampled + drain
	out += fmt.Sprintf("kernel writeback: %s", wb.During)
	switch {
	case wb.Set:
		out += fmt.Sprintf(" (set for the probe; the host's: %s)", wb.Before)
	case wb.Err != "":
		out += fmt.Sprintf(" (the host's; not set: %s)", wb.Err)
	}
	out += "\n"
	out += fmt.Sprintf("CPU seconds (load and drain): %v\nhost CPU: idle %.1f%%, steal %.1f%%\nwait events: %v\n", cpu, host.IdlePct, host.StealPct, waits)
	out += "p50/p99 ms by second of intended send:"
	for _, w := range windows(recs) {
		out += fmt.Sprintf(" %.0f/%.0f", w.P50, w.P99)
	}
	out += "\n"

	out += slowest(recs, 12)
	if st.OK > 0 {
		n := float64(st.OK)
		out += fmt.Sprintf("WAL per redemption (load and drain): %.1f records, %.2f full pages, %.0f bytes\n",
			(wal1.Records-wal0.Records)/n, (wal1.FPI-wal0.FPI)/n, (wal1.Bytes-wal0.Bytes)/n)
		out += "table writes per redemption (inserts, updates, of them in place):"
		for _, t := range slices.Sorted(maps.Keys(tables1)) {
			w, w0 := tables1[t], tables0[t]
			if ins, upd, hot := w[0]-w0[0], w[1]-w0[1], w[2]-w0[2]; ins+upd > 0 {
				out += fmt.Sprintf(" %s %.2f/%.2f/%.2f;", t, float64(ins)/n, float64(upd)/n, float64(hot)/n)
			}
		}
		out += "\n"
	}
	if st.OK > 0 {
		out += fmt.Sprintf("server CPU per redemption: %.2f ms\n", cpu["coupond server"]*1000/float64(st.OK))
	}
	if err := <-profErr; err != nil {
		return out, err
	}
	top, err := harness.PprofTop(ctx, env.Bin, profPath, 30)
	if err != nil {
		return out, err
	}
	return out + "\n" + top, nil
}

// tableWrites reads each table's rows inserted, updated, and updated in
// place (heap-only), by table name.
func tableWrites(ctx context.Context, fx *harness.Fixture) map[string][3]int64 {
	out := map[string][3]int64{}
	rows, err := fx.Pool.Query(ctx, "SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables")
	if err != nil {
		return out
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var w [3]int64
		if rows.Scan(&t, &w[0], &w[1], &w[2]) == nil {
			out[t] = w
		}
	}
	return out
}

// slowest lists the n slowest requests by latency from the intended send,
// split into the wait before the request left the generator and the time
// from leaving to the answer, so a tail can be told apart as the
// generator's (its pacer) or the server's, and placed in the run.
func slowest(recs []*load.Record, n int) string {
	s := append([]*load.Record(nil), recs...)
	sort.Slice(s, func(i, j int) bool { return s[i].Latency() > s[j].Latency() })
	out := "slowest (intended at s: latency = wait to send + answer, ms):"
	for _, r := range s[:min(n, len(s))] {
		out += fmt.Sprintf(" %.3f: %.0f = %.0f + %.0f;", r.Intended.Seconds(), ms(r.Latency()), ms(r.Sent-r.Intended), ms(r.Done-r.Sent))
	}
	return out + "\n"
}

// drainDeliveries waits until the fixture has no PENDING webhook delivery,
// or fails after limit.
func drainDeliveries(ctx context.Context, fx *harness.Fixture, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		n, err := fx.PendingDeliveries(ctx)
		if err != nil || n == 0 {
			return err
		}
		if time.Now().After(deadline) {
			// The server's goroutines say what its delivery worker waits
			// for; they are kept beside its log.
			dump := filepath.Join(fx.Env.Dir, "drain-goroutines.txt")
			saved := "saved in " + dump
			if err := fx.Server.SaveProfile(ctx, "goroutine?debug=2", dump); err != nil {
				saved = "not saved: " + err.Error()
			}
			return fmt.Errorf("%d webhook deliveries still pending after %s: %s; the server's goroutines %s", n, limit,
				fx.PendingBreakdown(ctx), saved)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// settle prepares the database after bulk issuance for a measurement:
// VACUUM ANALYZE sets the visibility map and statistics of the fresh coupons,
// and CHECKPOINT writes the pages that dirtied, so neither autovacuum nor the
// checkpointer's burst of writes (which slows every commit's WAL flush for
// seconds) lands inside the measured window.
func settle(ctx context.Context, fx *harness.Fixture) error {
	for _, q := range []string{"VACUUM ANALYZE coupons", "VACUUM ANALYZE campaigns", "CHECKPOINT"} {
		if _, err := fx.Pool.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}
