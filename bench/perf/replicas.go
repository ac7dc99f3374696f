package perf

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"coupond/bench/harness"
	"coupond/bench/history"
	"coupond/bench/load"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Replicas is how many `coupond serve` processes share the database in the
// Redis on/off comparison.
const Replicas = 3

// ReplicaRun is one scenario on the replicas with Redis off or on.
type ReplicaRun struct {
	Stats load.Stats `json:"stats"`
	// AnsweredPerSec is every answer (success or not) per second, from the
	// first intended send to the last answer.
	AnsweredPerSec float64 `json:"answered_per_sec"`
	// DBXactsPerOp is PostgreSQL transactions (commits and rollbacks of the
	// database, pg_stat_database) per request: the database's work.
	DBXactsPerOp float64 `json:"db_xacts_per_op"`
	// Redis is the replicas' coupond_redis_*_total during the scenario.
	Redis harness.RedisCounters `json:"redis"`
	Extra map[string]any        `json:"extra,omitempty"`
	// Violations are the audit's and the client history's.
	Violations []string `json:"violations,omitempty"`
}

// ReplicaScenario compares one scenario on the replicas with Redis off and on.
type ReplicaScenario struct {
	Name string     `json:"name"`
	Off  ReplicaRun `json:"redis_off"`
	On   ReplicaRun `json:"redis_on"`
}

// replicaWorld is three servers on one database, and a Redis of the
// harness's own that they use when it is on.
type replicaWorld struct {
	cfg     Config
	fx      *harness.Fixture
	servers []*harness.Server
	redis   *harness.Redis
	admin   *pgxpool.Pool // to the admin database, to read statistics from
	pool    *codes
	rid     atomic.Int64
}

func (w *replicaWorld) close() {
	for _, s := range w.servers[1:] {
		s.Stop()
	}
	if w.fx != nil {
		w.fx.Close()
	}
	if w.redis != nil {
		w.redis.Close()
	}
	if w.admin != nil {
		w.admin.Close()
	}
}

// setRedis restarts every replica with Redis on or off.
func (w *replicaWorld) setRedis(ctx context.Context, on bool) error {
	url := ""
	if on {
		url = w.redis.URL()
	}
	for _, s := range w.servers {
		s.Stop()
		s.SetRedisURL(url)
		if err := s.Start(ctx); err != nil {
			return err
		}
	}
	return nil
}

// spread sends n operations (all at once when rate is 0, else at rate per
// second overall) evenly over the replicas, and returns every record.
func (w *replicaWorld) spread(ctx context.Context, name string, rate float64, d time.Duration, n int, next func() load.Op) []*load.Record {
	perSec := 100000.0
	if rate > 0 {
		perSec = rate / float64(len(w.servers))
	}
	return w.spreadPaced(ctx, name, load.Constant{PerSec: perSec}, d, n, next, nil)
}

// spreadPaced sends n operations over the replicas, each replica paced by
// pacer (a share of the whole), and calls onDone after each.
func (w *replicaWorld) spreadPaced(ctx context.Context, name string, pacer load.Pacer, d time.Duration, n int, next func() load.Op,
	onDone func(*load.Record)) []*load.Record {
	var mu sync.Mutex
	var wg sync.WaitGroup
	var out []*load.Record
	k := len(w.servers)
	for i, s := range w.servers {
		share := n / k
		if i < n%k {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs := load.Run(ctx, load.Attack{Name: name, URL: s.URL() + "/graphql", Token: w.fx.Clerk, Pacer: pacer,
				Duration: d, MaxOps: share, Timeout: 30 * time.Second, Next: func(int) load.Op { return next() }, OnDone: onDone})
			mu.Lock()
			out = append(out, rs...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

func (w *replicaWorld) redisCounters() harness.RedisCounters {
	var t harness.RedisCounters
	for _, s := range w.servers {
		if c, ok := s.RedisCounters(); ok {
			t = t.Add(c)
		}
	}
	return t
}

// xacts reads the database's committed and rolled-back transactions once
// the count has settled: backends report theirs at most once a second, and
// a burst's are reported over the next few. It reads every 500 ms until two
// readings 1 s apart agree (at most 8 s), through a connection to another
// database so that the readings are not counted; what the replicas' jobs
// do meanwhile is counted too, alike with Redis off and on.
func (w *replicaWorld) xacts(ctx context.Context) float64 {
	read := func() float64 {
		var n float64
		_ = w.admin.QueryRow(ctx, "SELECT (xact_commit + xact_rollback)::float8 FROM pg_stat_database WHERE datname = $1", w.fx.DBName).Scan(&n)
		return n
	}
	var seen []float64
	for deadline := time.Now().Add(8 * time.Second); ; {
		time.Sleep(500 * time.Millisecond)
		seen = append(seen, read())
		if k := len(seen); k >= 3 && seen[k-1] == seen[k-3] || time.Now().After(deadline) {
			return seen[len(seen)-1]
		}
	}
}

// measure runs one scenario and fills a ReplicaRun with its load figures,
// the database's transactions and the Redis counters.
// A scrape of /metrics reads the database (the REDEEMING gauges), so the
// counters are read outside the window the transactions are counted in.
func (w *replicaWorld) measure(ctx context.Context, run func() []*load.Record) (ReplicaRun, []*load.Record) {
	r0 := w.redisCounters()
	x0 := w.xacts(ctx)
	recs := run()
	x1 := w.xacts(ctx)
	r1 := w.redisCounters()
	st := load.Summarise(recs, nil)
	w.cfg.logf("    database transactions %.0f -> %.0f", x0, x1)
	out := ReplicaRun{Stats: st, Redis: r1.Sub(r0), Extra: map[string]any{}}
	if st.Seconds > 0 {
		out.AnsweredPerSec = round(float64(st.Ops) / st.Seconds)
	}
	if st.Ops > 0 {
		out.DBXactsPerOp = round(max(0, x1-x0) / float64(st.Ops))
	}
	return out, recs
}

// redisReplicas runs the duplicate storm, the hot coupon and a fixed rate at
// half the single server's knee on three replicas sharing one database,
// with Redis off and then on (the knee search itself would take too long on
// three replicas).
func redisReplicas(ctx context.Context, cfg Config, res *Result, knee float64) error {
	env := cfg.Env
	rate := max(knee/2, 25)
	secs := 15 * time.Second
	if cfg.Quick {
		secs = 5 * time.Second
	}
	res.ReplicaKnee, res.ReplicaRate = knee, rate
	cfg.logf("three replicas, Redis off and on: duplicate storm, hot coupon, %.0f/s for %s", rate, secs)
	w := &replicaWorld{cfg: cfg}
	defer w.close()
	var err error
	if w.redis, err = harness.NewRedis(); err != nil {
		return err
	}
	if err := w.redis.Start(ctx); err != nil {
		return err
	}
	hold, every := 2*time.Minute, 30*time.Second
	sc := harness.ServerConfig{GoMaxProcs: serverProcs(), Name: "bench-replica-a", Jobs: true, HoldTimeout: hold, CompensateEvery: every}
	if w.fx, err = env.NewFixture(ctx, "coupond_bench_replicas", sc); err != nil {
		return err
	}
	if w.admin, err = pgxpool.New(ctx, env.DBURL(env.AdminDB, 0)+"&application_name=coupond-bench"); err != nil {
		return err
	}
	w.servers = []*harness.Server{w.fx.Server}
	for i := 1; i < Replicas; i++ {
		c := sc
		c.Name = fmt.Sprintf("bench-replica-%c", 'a'+i)
		c.DatabaseURL = w.fx.DBURL
		s, err := env.StartServer(ctx, c)
		if err != nil {
			return err
		}
		w.servers = append(w.servers, s)
	}
	kneeTo, kneeOver, kneeHold := replicaKneeSizes(cfg.Quick)
	n := 2*(int(rate*secs.Seconds())+1) + 2*(4+150) + 2*(int(kneeTo*kneeOver.Seconds()/2)+4*int(kneeTo*kneeHold.Seconds()))
	_, _, list, err := w.fx.Campaign(ctx, "replicas", n)
	if err != nil {
		return err
	}
	w.pool = &codes{list: list}
	if err := settle(ctx, w.fx); err != nil {
		return err
	}
	rid := func(p string) string { return p + strconv.FormatInt(w.rid.Add(1), 10) }
	scs := []ReplicaScenario{{Name: "duplicate storm: one request id 1,000 times"}, {Name: "hot coupon: 1,000 concurrent redeems of one coupon"},
		{Name: fmt.Sprintf("fixed rate: %.0f/s (half the single server's knee) for %s", rate, secs)},
		{Name: kneeReplicaScenario}}
	for _, on := range []bool{false, true} {
		mode := "off"
		if on {
			mode = "on"
		}
		if err := w.setRedis(ctx, on); err != nil {
			return err
		}
		if on {
			if _, err := w.redis.Do("FLUSHALL"); err != nil {
				return err
			}
		}
		w.spread(ctx, "warm-up", 50, 3*time.Second, 150, func() load.Op {
			return load.Redeem("redeem", w.pool.take(), w.fx.StoreID, rid("rwarm-"))
		})
		pick := func(s *ReplicaScenario) *ReplicaRun {
			if on {
				return &s.On
			}
			return &s.Off
		}
		var all []*load.Record

		cfg.logf("  Redis %s: duplicate storm", mode)
		dupCode, dupID := w.pool.take(), rid("rdup-")
		op := load.Redeem("redeem", dupCode, w.fx.StoreID, dupID)
		r, recs := w.measure(ctx, func() []*load.Record {
			return w.spread(ctx, "dup", 0, 5*time.Second, 1000, func() load.Op { return op })
		})
		answers := map[uint64]int{}
		for _, rec := range recs {
			answers[rec.AnswerHash]++
		}
		var flows int
		_ = w.fx.Pool.QueryRow(ctx, "SELECT count(*) FROM redemption_flows WHERE request_id = $1", dupID).Scan(&flows)
		r.Extra = map[string]any{"executions": flows, "distinct_answers": len(answers)}
		*pick(&scs[0]) = r
		all = append(all, recs...)

		cfg.logf("  Redis %s: hot coupon", mode)
		hot := w.pool.take()
		r, recs = w.measure(ctx, func() []*load.Record {
			return w.spread(ctx, "hot", 0, 5*time.Second, 1000, func() load.Op { return load.Redeem("redeem", hot, w.fx.StoreID, rid("rhot-")) })
		})
		r.Extra = map[string]any{"successes": countResult(recs, "SUCCEEDED"),
			"losers_p99_ms": load.Summarise(recs, func(x *load.Record) bool { return x.Result != "SUCCEEDED" }).P99}
		*pick(&scs[1]) = r
		all = append(all, recs...)

		cfg.logf("  Redis %s: %.0f/s for %s", mode, rate, secs)
		r, recs = w.measure(ctx, func() []*load.Record {
			return w.spread(ctx, "fixed", rate, secs, int(rate*secs.Seconds())+1, func() load.Op {
				return load.Redeem("redeem", w.pool.take(), w.fx.StoreID, rid("rfix-"))
			})
		})
		*pick(&scs[2]) = r
		all = append(all, recs...)

		cfg.logf("  Redis %s: the knee over %d replicas", mode, Replicas)
		r, recs = w.knee(ctx, func() load.Op { return load.Redeem("redeem", w.pool.take(), w.fx.StoreID, rid("rknee-")) })
		*pick(&scs[3]) = r
		all = append(all, recs...)

		h, err := history.Check(ctx, w.fx.Pool, all)
		if err != nil {
			return err
		}
		a, err := env.Audit(ctx, w.fx.DBURL, hold, every)
		if err != nil {
			return err
		}
		for i := range scs {
			pr := pick(&scs[i])
			pr.Violations = append(append([]string{}, a.Violations...), h.Violations...)
			cfg.logf("  %s, Redis %s: %d ops ok %d p50 %.1f p99 %.1f ms, %.0f answered/s, %.2f db xacts/op, redis %+v",
				scs[i].Name, mode, pr.Stats.Ops, pr.Stats.OK, pr.Stats.P50, pr.Stats.P99, pr.AnsweredPerSec, pr.DBXactsPerOp, pr.Redis)
		}
		if len(a.Violations)+len(h.Violations) > 0 {
			cfg.logf("  Redis %s: %d audit and %d history violations", mode, len(a.Violations), len(h.Violations))
		}
	}
	res.Replicas = scs
	return nil
}

// kneeReplicaScenario names the knee search on the replicas.
const kneeReplicaScenario = "knee: ramp, then the step-down to a sustained rate, over three replicas"

// replicaKneeSizes are the replicas' ramp's top rate and length, and the
// length of each constant run of the step-down.
func replicaKneeSizes(quick bool) (float64, time.Duration, time.Duration) {
	if quick {
		return 2000, 10 * time.Second, 4 * time.Second
	}
	return 3000, 30 * time.Second, 10 * time.Second
}

// knee finds the replicas' knee as the single server's is found: a ramp
// spread over them, then constant runs stepping down by 10% from the ramp's
// knee until one holds p99 <= 100 ms without errors (at most four). The
// run's stats are those of the last constant run; Extra has the ramp's knee,
// the sustained knee and the steps.
func (w *replicaWorld) knee(ctx context.Context, next func() load.Op) (ReplicaRun, []*load.Record) {
	to, over, hold := replicaKneeSizes(w.cfg.Quick)
	k := float64(len(w.servers))
	rctx, cancel := context.WithCancel(ctx)
	var slow atomic.Int64
	ramp := w.spreadPaced(rctx, "knee-ramp", load.Ramp{From: 50 / k, To: to / k, Over: over}, over, int(to*over.Seconds()/2)+len(w.servers),
		next, func(r *load.Record) {
			if r.Latency() > time.Second && slow.Add(1) > 200 {
				cancel()
			}
		})
	cancel()
	_, rampKnee, reason := knee(ramp, load.Ramp{From: 50, To: to, Over: over})
	all := ramp
	time.Sleep(2 * time.Second)
	var (
		last  []*load.Record
		steps []string
	)
	rate := max(rampKnee, 50)
	for try := 0; try < 4; try++ {
		last = w.spread(ctx, "knee-hold", rate, hold, int(rate*hold.Seconds())+1, next)
		all = append(all, last...)
		st := load.Summarise(last, nil)
		held := st.P99 <= 100 && st.ErrorRate == 0 && st.Unknown == 0
		steps = append(steps, fmt.Sprintf("%.0f/s p99 %.0f ms", rate, st.P99))
		if held || try == 3 {
			break
		}
		rate = math.Round(rate * 0.9)
		time.Sleep(2 * time.Second)
	}
	st := load.Summarise(last, nil)
	run := ReplicaRun{Stats: st, Redis: harness.RedisCounters{}, Extra: map[string]any{"ramp_knee": rampKnee, "ramp_reason": reason,
		"knee": rate, "steps": strings.Join(steps, "; ")}}
	if st.Seconds > 0 {
		run.AnsweredPerSec = round(float64(st.Ops) / st.Seconds)
	}
	return run, all
}
