package perf

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"time"

	"coupond/bench/harness"
	"coupond/bench/history"
	"coupond/bench/load"
)

// ScaleRow is one throughput ramp of the beyond-one-machine comparison, on
// the same database in the same run as the others.
type ScaleRow struct {
	Name string `json:"name"`
	// Servers is how many coupond processes served the load (behind
	// haproxy when more than one).
	Servers int `json:"servers"`
	// Path is how they reached PostgreSQL: direct or pgbouncer
	// (transaction mode).
	Path string `json:"path"`
	// QueryMode is pgx's default_query_exec_mode (cache_statement is pgx's
	// default).
	QueryMode string `json:"query_mode"`
	// Tracing is the OpenTelemetry sample ratio, or "off".
	Tracing    string     `json:"tracing"`
	Knee       float64    `json:"knee_per_sec"`
	KneeReason string     `json:"knee_reason"`
	Stats      load.Stats `json:"stats"`
	Ramp       []Step     `json:"ramp"`
	// Spans is how many OTLP export requests the collector received.
	Exports    int64    `json:"otlp_exports,omitempty"`
	Violations []string `json:"violations,omitempty"`
}

// scaleKnees ramps the redemption load, on one database and in one run,
// against: one server direct (pgx's default query mode); one server direct in
// cache_describe mode (the mode a pooler needs, without the pooler); one
// server through pgbouncer in transaction mode; three servers behind haproxy
// through pgbouncer; and one server direct with tracing sampled at 1%. Then
// the cost of synchronous commit on a Patroni pair (syncCommitKnees).
func scaleKnees(ctx context.Context, cfg Config, res *Result) error {
	env := cfg.Env
	rampTo, rampOver := 4000.0, 40*time.Second
	if cfg.Quick {
		rampTo, rampOver = 3000, 15*time.Second
	}
	perRow := int((50+rampTo)/2*rampOver.Seconds()) + 200
	hold, every := 2*time.Minute, 30*time.Second
	fx, err := env.NewFixture(ctx, "coupond_bench_scale", harness.ServerConfig{GoMaxProcs: serverProcs(), Name: "bench-scale-a", Jobs: true,
		HoldTimeout: hold, CompensateEvery: every, MaxConns: 8})
	if err != nil {
		return err
	}
	defer fx.Close()
	var exports atomic.Int64
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		exports.Add(1)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer sink.Close()
	bouncer, err := env.StartPgBouncer(ctx, 8)
	if err != nil {
		return err
	}
	defer bouncer.Stop()
	viaBouncer := env.DBURL(fx.DBName, bouncer.Port)
	var extra []*harness.Server
	defer func() {
		for _, s := range extra {
			s.Stop()
		}
	}()
	var rid atomic.Int64
	type row struct {
		ScaleRow
		setup func() (url string, servers []*harness.Server, cleanup func(), err error)
	}
	restartA := func(dbURL string, args ...string) error {
		fx.Server.Stop()
		fx.Server.Reconfigure(func(c *harness.ServerConfig) { c.DatabaseURL, c.ExtraArgs = dbURL, args })
		return fx.Server.Start(ctx)
	}
	one := func(dbURL string, args ...string) func() (string, []*harness.Server, func(), error) {
		return func() (string, []*harness.Server, func(), error) {
			return fx.Server.URL(), []*harness.Server{fx.Server}, func() {}, restartA(dbURL, args...)
		}
	}
	rows := []row{
		{ScaleRow{Name: "1 server, direct", Servers: 1, Path: "direct", QueryMode: "cache_statement", Tracing: "off"}, one(fx.DBURL)},
		{ScaleRow{Name: "1 server, direct, cache_describe", Servers: 1, Path: "direct", QueryMode: "cache_describe", Tracing: "off"},
			one(fx.DBURL, "--query-exec-mode", "cache_describe")},
		{ScaleRow{Name: "1 server through pgbouncer", Servers: 1, Path: "pgbouncer", QueryMode: "cache_describe", Tracing: "off"},
			one(viaBouncer, "--query-exec-mode", "cache_describe")},
		{ScaleRow{Name: "3 servers behind haproxy through pgbouncer", Servers: 3, Path: "pgbouncer", QueryMode: "cache_describe", Tracing: "off"},
			func() (string, []*harness.Server, func(), error) {
				args := []string{"--query-exec-mode", "cache_describe"}
				if err := restartA(viaBouncer, args...); err != nil {
					return "", nil, nil, err
				}
				servers := []*harness.Server{fx.Server}
				for i := 1; i < 3; i++ {
					s, err := env.StartServer(ctx, harness.ServerConfig{GoMaxProcs: serverProcs(), Name: fmt.Sprintf("bench-scale-%c", 'a'+i), Jobs: true,
						HoldTimeout: hold, CompensateEvery: every, MaxConns: 8, DatabaseURL: viaBouncer, ExtraArgs: args})
					if err != nil {
						return "", nil, nil, err
					}
					extra = append(extra, s)
					servers = append(servers, s)
				}
				lb, err := env.StartHAProxy(ctx, servers)
				if err != nil {
					return "", nil, nil, err
				}
				return fmt.Sprintf("http://127.0.0.1:%d", lb.Port), servers, func() {
					lb.Stop()
					for _, s := range extra {
						s.Stop()
					}
					extra = nil
				}, nil
			}},
		{ScaleRow{Name: "1 server, direct, tracing 1%", Servers: 1, Path: "direct", QueryMode: "cache_statement", Tracing: "0.01"},
			one(fx.DBURL, "--otlp-endpoint", sink.URL, "--otlp-sample-ratio", "0.01")},
	}
	var all []*load.Record
	for i, r := range rows {
		cfg.logf("scale %d/%d: %s", i+1, len(rows), r.Name)
		_, _, list, err := fx.Campaign(ctx, "scale-"+strconv.Itoa(i), perRow)
		if err != nil {
			return err
		}
		if err := settle(ctx, fx); err != nil {
			return err
		}
		base, _, cleanup, err := r.setup()
		if err != nil {
			return fmt.Errorf("%s: %w", r.Name, err)
		}
		pool := &codes{list: list}
		next := func(prefix string) func(int) load.Op {
			return func(int) load.Op {
				return load.Redeem("redeem", pool.take(), fx.StoreID, prefix+strconv.FormatInt(rid.Add(1), 10))
			}
		}
		url := base + "/graphql"
		load.Run(ctx, load.Attack{Name: "warm-up", URL: url, Token: fx.Clerk, Pacer: load.Constant{PerSec: 50},
			Duration: 3 * time.Second, MaxOps: 150, Next: next("swarm-")})
		e0 := exports.Load()
		ramp := rampUntilBroken(ctx, "ramp", url, fx.Clerk, rampTo, rampOver, next("sramp-"))
		r.Ramp, r.Knee, r.KneeReason = knee(ramp, load.Ramp{From: 50, To: rampTo, Over: rampOver})
		r.Stats = load.Summarise(ramp, nil)
		r.Exports = exports.Load() - e0
		cleanup()
		all = append(all, ramp...)
		cfg.logf("  %s: knee %.0f/s (%s); %d ops, p50 %.1f p99 %.1f ms", r.Name, r.Knee, r.KneeReason, r.Stats.Ops, r.Stats.P50, r.Stats.P99)
		res.Scale = append(res.Scale, r.ScaleRow)
	}
	// Back to one direct server for the audit, which reads the database.
	if err := restartA(fx.DBURL); err != nil {
		return err
	}
	h, err := history.Check(ctx, fx.Pool, all)
	if err != nil {
		return err
	}
	a, err := env.Audit(ctx, fx.DBURL, hold, every)
	if err != nil {
		return err
	}
	for i := range res.Scale {
		res.Scale[i].Violations = append(append([]string{}, a.Violations...), h.Violations...)
	}
	// What synchronous replication costs, on a cluster of its own.
	return syncCommitKnees(ctx, cfg, res)
}

// rampUntilBroken runs the throughput ramp from 50/s to rampTo over
// rampOver against url, stopping early once more than 200 answers took over
// a second (the knee is long past by then).
func rampUntilBroken(ctx context.Context, name, url, token string, rampTo float64, rampOver time.Duration,
	next func(int) load.Op) []*load.Record {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var slow atomic.Int64
	return load.Run(rctx, load.Attack{Name: name, URL: url, Token: token, Pacer: load.Ramp{From: 50, To: rampTo, Over: rampOver},
		Duration: rampOver, MaxOps: int(rampTo * rampOver.Seconds()), Timeout: 10 * time.Second, Next: next,
		OnDone: func(r *load.Record) {
			if r.Latency() > time.Second && slow.Add(1) > 200 {
				cancel()
			}
		}})
}
