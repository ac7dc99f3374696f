package perf

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"coupond/bench/harness"
	"coupond/bench/history"
	"coupond/bench/load"
)

// syncCommitKnees measures what synchronous replication costs: the same
// throughput ramp against one server on a Patroni pair (two PostgreSQL
// nodes, one etcd, on this machine) with synchronous_mode on, where every
// commit waits for the standby's WAL flush, and then off. Both nodes share
// the machine's 2 cores with the server and the load generator, so the
// ratio is what the report states, not the absolute knees.
func syncCommitKnees(ctx context.Context, cfg Config, res *Result) error {
	rampTo, rampOver := 4000.0, 40*time.Second
	if cfg.Quick {
		rampTo, rampOver = 3000, 15*time.Second
	}
	pc, err := harness.StartPatroni(ctx, true)
	if err != nil {
		return fmt.Errorf("patroni cluster: %w", err)
	}
	defer pc.Stop()
	if err := pc.WaitStandby(ctx, 90*time.Second); err != nil {
		return err
	}
	env := pc.Env(cfg.Env)
	hold, every := 2*time.Minute, 30*time.Second
	fx, err := env.NewFixture(ctx, "coupond_bench_sync", harness.ServerConfig{GoMaxProcs: serverProcs(), Name: "bench-sync", Jobs: true,
		HoldTimeout: hold, CompensateEvery: every, MaxConns: 8})
	if err != nil {
		return err
	}
	defer fx.Close()
	perRow := int((50+rampTo)/2*rampOver.Seconds()) + 200
	var rid atomic.Int64
	var all []*load.Record
	for i, sync := range []bool{true, false} {
		name := "1 server on a Patroni pair, synchronous commit"
		if !sync {
			name = "1 server on a Patroni pair, asynchronous"
			if err := pc.SetSync(ctx, false); err != nil {
				return err
			}
			if err := pc.WaitStandby(ctx, 90*time.Second); err != nil {
				return err
			}
		}
		cfg.logf("sync commit %d/2: %s", i+1, name)
		_, _, list, err := fx.Campaign(ctx, "sync-"+strconv.Itoa(i), perRow)
		if err != nil {
			return err
		}
		if err := settle(ctx, fx); err != nil {
			return err
		}
		pool := &codes{list: list}
		next := func(prefix string) func(int) load.Op {
			return func(int) load.Op {
				return load.Redeem("redeem", pool.take(), fx.StoreID, prefix+strconv.FormatInt(rid.Add(1), 10))
			}
		}
		url := fx.Server.URL() + "/graphql"
		load.Run(ctx, load.Attack{Name: "warm-up", URL: url, Token: fx.Clerk, Pacer: load.Constant{PerSec: 50},
			Duration: 3 * time.Second, MaxOps: 150, Next: next("ywarm-")})
		ramp := rampUntilBroken(ctx, "ramp", url, fx.Clerk, rampTo, rampOver, next("yramp-"))
		row := ScaleRow{Name: name, Servers: 1, Path: "direct (multi-host URL)", QueryMode: "cache_statement", Tracing: "off"}
		row.Ramp, row.Knee, row.KneeReason = knee(ramp, load.Ramp{From: 50, To: rampTo, Over: rampOver})
		row.Stats = load.Summarise(ramp, nil)
		all = append(all, ramp...)
		cfg.logf("  %s: knee %.0f/s (%s); %d ops, p50 %.1f p99 %.1f ms", name, row.Knee, row.KneeReason, row.Stats.Ops, row.Stats.P50, row.Stats.P99)
		res.SyncCommit = append(res.SyncCommit, row)
	}
	h, err := history.Check(ctx, fx.Pool, all)
	if err != nil {
		return err
	}
	a, err := env.Audit(ctx, fx.DBURL, hold, every)
	if err != nil {
		return err
	}
	for i := range res.SyncCommit {
		res.SyncCommit[i].Violations = append(append([]string{}, a.Violations...), h.Violations...)
	}
	return nil
}
