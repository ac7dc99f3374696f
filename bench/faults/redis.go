package faults

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"coupond/bench/harness"
	"coupond/bench/load"
	"coupond/bench/proxy"
)

// replicas is how many `coupond serve` processes share the database and
// the Redis in the Redis faults.
const replicas = 3

// RedisOutcome is what a Redis fault did to the replicas' use of Redis and
// to the clients.
type RedisOutcome struct {
	Replicas int `json:"replicas"`
	// Before and After are the replicas' coupond_redis_*_total summed, read
	// at the start and the end of the load; Delta is After minus Before.
	Before harness.RedisCounters `json:"before"`
	After  harness.RedisCounters `json:"after"`
	Delta  harness.RedisCounters `json:"delta"`
	// BackMS is the time from the end of the injection until every replica
	// was on the Redis path again: the first 100 ms sample in which its
	// hits or misses grew and its fallbacks did not. -1 when some replica
	// never was before the load ended.
	BackMS float64 `json:"back_on_redis_path_ms"`
	// ErrorsByCode counts every answer of the load that was not a success,
	// by result (definite failures and unknowns alike).
	ErrorsByCode map[string]int `json:"errors_by_code"`
	// Caused are those of ErrorsByCode that the same load without a Redis
	// fault does not produce (see the baseline row): each is a failure of
	// the row.
	Caused map[string]int `json:"caused_by_redis"`
}

// count fills ErrorsByCode and Caused from the load's records; allowed are
// the results the baseline produced.
func (o *RedisOutcome) count(recs []*load.Record, allowed map[string]bool) {
	o.ErrorsByCode, o.Caused = map[string]int{}, map[string]int{}
	for _, r := range recs {
		if r == nil || r.Outcome == load.OK {
			continue
		}
		o.ErrorsByCode[r.Result]++
		if !allowed[r.Result] {
			o.Caused[r.Result]++
		}
	}
}

// redisSample is one scrape of every replica's Redis counters.
type redisSample struct {
	at time.Time
	c  []harness.RedisCounters
	ok []bool
}

// redisMonitor scrapes the replicas' Redis counters at a fixed interval
// while a fault's load runs.
type redisMonitor struct {
	servers []*harness.Server
	stopCh  chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	samples []redisSample
}

func startRedisMonitor(servers []*harness.Server, every time.Duration) *redisMonitor {
	m := &redisMonitor{servers: servers, stopCh: make(chan struct{}), done: make(chan struct{})}
	m.sample()
	go func() {
		defer close(m.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-m.stopCh:
				m.sample()
				return
			case <-t.C:
				m.sample()
			}
		}
	}()
	return m
}

func (m *redisMonitor) sample() {
	s := redisSample{at: time.Now(), c: make([]harness.RedisCounters, len(m.servers)), ok: make([]bool, len(m.servers))}
	var wg sync.WaitGroup
	for i, srv := range m.servers {
		wg.Add(1)
		go func() { defer wg.Done(); s.c[i], s.ok[i] = srv.RedisCounters() }()
	}
	wg.Wait()
	m.mu.Lock()
	m.samples = append(m.samples, s)
	m.mu.Unlock()
}

// stop ends the sampling and works out the outcome: the counters before and
// after, and when each replica was back on the Redis path after recovered.
func (m *redisMonitor) stop(recovered time.Time, n int) *RedisOutcome {
	close(m.stopCh)
	<-m.done
	o := &RedisOutcome{Replicas: n, BackMS: -1}
	ss := m.samples
	sum := func(s redisSample) harness.RedisCounters {
		var t harness.RedisCounters
		for i, c := range s.c {
			if s.ok[i] {
				t = t.Add(c)
			}
		}
		return t
	}
	o.Before, o.After = sum(ss[0]), sum(ss[len(ss)-1])
	o.Delta = o.After.Sub(o.Before)
	if recovered.IsZero() {
		return o
	}
	worst := time.Duration(0)
	for i := range m.servers {
		back := time.Duration(-1)
		for j := 1; j < len(ss); j++ {
			a, b := ss[j-1], ss[j]
			if a.at.Before(recovered) || !a.ok[i] || !b.ok[i] {
				continue
			}
			used := b.c[i].Hits+b.c[i].Misses > a.c[i].Hits+a.c[i].Misses
			if used && b.c[i].Fallbacks == a.c[i].Fallbacks {
				back = b.at.Sub(recovered)
				break
			}
		}
		if back < 0 {
			return o
		}
		worst = max(worst, back)
	}
	o.BackMS = float64(worst.Milliseconds())
	return o
}

// redisFault is one fault of the Redis in front of the database.
type redisFault struct {
	name, how string
	ci        bool
	// direct: the replicas reach Redis at its own port rather than
	// through the proxy (the absent-at-start fault, where nothing may
	// listen at the address they are given).
	direct bool
	inject func(ctx context.Context, w *world) (time.Time, string, error)
}

// baselineRedis names the row without a fault that the Redis faults'
// client errors are compared with.
const baselineRedis = "Redis healthy (baseline)"

var redisFaults = []redisFault{
	{name: "Redis absent at start", how: "the replicas start with --redis-url at a port where nothing listens; redis-server starts there 3 s into the load",
		direct: true, inject: func(ctx context.Context, w *world) (time.Time, string, error) {
			time.Sleep(3 * time.Second)
			if err := w.redis.Start(ctx); err != nil {
				return time.Time{}, "", err
			}
			return time.Now(), "", nil
		}},
	{name: baselineRedis, how: "no fault: the load of the Redis rows with Redis up throughout", inject: func(ctx context.Context, w *world) (time.Time, string, error) {
		return time.Now(), "", nil
	}},
	{name: "Redis killed and restarted", how: "redis-server SIGKILLed mid-run, started again (empty) on the same port 2 s later", ci: true,
		inject: func(ctx context.Context, w *world) (time.Time, string, error) {
			w.redis.Kill()
			time.Sleep(2 * time.Second)
			if err := w.redis.Start(ctx); err != nil {
				return time.Time{}, "", err
			}
			return time.Now(), "", nil
		}},
	{name: "Redis FLUSHALL", how: "`FLUSHALL` mid-run: every request key, marker and lock gone at once", inject: func(ctx context.Context, w *world) (time.Time, string, error) {
		n, _ := w.redis.Do("DBSIZE")
		if _, err := w.redis.Do("FLUSHALL"); err != nil {
			return time.Time{}, "", err
		}
		return time.Now(), "FLUSHALL removed " + n + " keys", nil
	}},
	{name: "latency to Redis", how: "200 ms added to every Redis call (100 ms each way through the proxy) for 3 s, under the replicas' 250 ms bound",
		inject: func(ctx context.Context, w *world) (time.Time, string, error) {
			w.rpx.SetLatency(100 * time.Millisecond)
			time.Sleep(3 * time.Second)
			w.rpx.SetLatency(0)
			return time.Now(), "", nil
		}},
	{name: "black-holed Redis", how: "bytes to and from Redis stop flowing for 3 s mid-request, connections stay open",
		inject: func(ctx context.Context, w *world) (time.Time, string, error) {
			w.rpx.SetBlackhole(true)
			time.Sleep(3 * time.Second)
			w.rpx.SetBlackhole(false)
			return time.Now(), "", nil
		}},
}

// runRedis runs the Redis faults under redemption load spread evenly over
// three replicas sharing one database and one Redis of the harness's own.
// The replicas reach PostgreSQL directly and Redis through a proxy, except
// in the absent-at-start fault, which runs first, on replicas started with
// Redis's own address while nothing listens there. Every fifth operation is
// a same-id resend of a redemption already answered, usually to another
// replica: without Redis the database replays it, with Redis a hit.
func runRedis(ctx context.Context, cfg Config, rate float64, secs time.Duration, ncodes int) ([]FaultResult, error) {
	var sel []redisFault
	for _, f := range redisFaults {
		if !cfg.CI || f.ci {
			sel = append(sel, f)
		}
	}
	if len(sel) == 0 {
		return nil, nil
	}
	env := cfg.Env
	w := &world{cfg: cfg, dupEvery: 5, allowed: map[string]bool{}}
	defer w.close()
	var err error
	if w.redis, err = harness.NewRedis(); err != nil {
		return nil, err
	}
	if w.rpx, err = proxy.Start(w.redis.Addr()); err != nil {
		return nil, err
	}
	viaProxy := fmt.Sprintf("redis://127.0.0.1:%d/0", w.rpx.Port())
	url := viaProxy
	if sel[0].direct {
		url = w.redis.URL()
	} else if err := w.redis.Start(ctx); err != nil {
		return nil, err
	}
	db := "coupond_faults_redis"
	sc := harness.ServerConfig{Name: db, Jobs: true, HoldTimeout: hold, CompensateEvery: every, FulfilTimeout: time.Second,
		DatabaseURL: env.DBURL(db, 0), MaxConns: 8, RedisURL: url}
	if w.fx, err = env.NewFixture(ctx, db, sc); err != nil {
		return nil, err
	}
	for i := 1; i < replicas; i++ {
		c := sc
		c.Name = fmt.Sprintf("%s-%c", db, 'a'+i)
		s, err := env.StartServer(ctx, c)
		if s != nil {
			w.replicas = append(w.replicas, s)
		}
		if err != nil {
			return nil, err
		}
	}
	if _, _, w.codes, err = w.fx.CampaignWith(ctx, "faults-redis", ncodes, map[string]any{"stackable": true}); err != nil {
		return nil, err
	}
	var out []FaultResult
	for _, f := range sel {
		if !f.direct && url != viaProxy {
			// From here on the replicas reach Redis through the proxy.
			url = viaProxy
			for _, s := range w.servers() {
				s.Stop()
				s.SetRedisURL(url)
				if err := s.Start(ctx); err != nil {
					return out, err
				}
			}
		}
		fr, err := w.run(ctx, f.name, f.how, rate, secs, f.inject)
		if err != nil {
			return out, fmt.Errorf("%s: %w", f.name, err)
		}
		if f.name == baselineRedis && fr.Redis != nil {
			for code := range fr.Redis.ErrorsByCode {
				w.allowed[code] = true
			}
		}
		out = append(out, fr)
		if f.direct && !w.redisUp() {
			if err := w.redis.Start(ctx); err != nil {
				return out, err
			}
		}
	}
	// The baseline runs second: judge every row against it once it is known.
	for i := range out {
		if r := out[i].Redis; r != nil {
			r.Caused = map[string]int{}
			for code, n := range r.ErrorsByCode {
				if !w.allowed[code] {
					r.Caused[code] = n
				}
			}
		}
	}
	return out, nil
}

func (w *world) redisUp() bool { _, err := w.redis.Do("PING"); return err == nil }

// codes lists a map's keys in order, "k n" joined by commas, or "-".
func codes(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := ""
	for i, k := range keys {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%s %d", k, m[k])
	}
	if out == "" {
		return "-"
	}
	return out
}
