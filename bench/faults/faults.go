// Package faults is coupond's fault suite: with redemption load running and
// every answer recorded, it kills, pauses and doubles the server, crashes it
// at the protocol's crash points, terminates and delays its PostgreSQL
// connections through a loopback proxy, restarts a private PostgreSQL cluster
// (fast and immediate shutdown) and makes the order service fail, then
// checks the invariants with `coupond audit`, the client history and the
// order service's orders. The crash points need a coupond built with
// -tags crashpoints (bench/run.sh faults builds one).
package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"coupond/bench/harness"
	"coupond/bench/history"
	"coupond/bench/load"
	"coupond/bench/ordersvc"
	"coupond/bench/proxy"
)

// Config sizes a run.
type Config struct {
	CI bool
	// Only, when "redis", runs the Redis faults alone; when "patroni", the
	// failover faults of a Patroni cluster alone; when "webhooks", the
	// webhook faults and the PostgreSQL restarts (whose rows check the
	// deliveries too) alone.
	Only string
	Env  harness.Env
	Log  func(format string, a ...any)
}

// FaultResult is one fault's outcome.
type FaultResult struct {
	Name             string         `json:"name"`
	Injection        string         `json:"injection"`
	Attempted        int            `json:"attempted"`
	OK               int            `json:"ok"`
	FailByCode       map[string]int `json:"fail_by_code"`
	Unknown          int            `json:"unknown"`
	UnknownResolved  int            `json:"unknown_resolved_by_retry"`
	AuditViolations  []string       `json:"audit_violations"`
	HistoryViolation []string       `json:"history_violations"`
	OrderViolations  []string       `json:"order_violations"`
	FirstSuccessMS   float64        `json:"time_to_first_success_ms"`
	OldestRedeeming  float64        `json:"oldest_redeeming_s"`
	Notes            string         `json:"notes,omitempty"`
	Seconds          float64        `json:"seconds"`
	// Redis is set for the faults of Redis in front of the database.
	Redis *RedisOutcome `json:"redis,omitempty"`
	// Webhooks is set for the faults run with a subscribed webhook endpoint.
	Webhooks *WebhookOutcome `json:"webhooks,omitempty"`
	// Patroni is set for the failover faults of a Patroni cluster.
	Patroni *PatroniOutcome `json:"patroni,omitempty"`
}

// Violations counts every invariant violation; an event lost by the
// webhooks is one.
func (f FaultResult) Violations() int {
	n := len(f.AuditViolations) + len(f.HistoryViolation) + len(f.OrderViolations)
	if f.Webhooks != nil {
		n += f.Webhooks.Lost
	}
	if f.Patroni != nil {
		// A lost acknowledged redemption is already a history violation;
		// a doubled one the history check cannot see across request ids.
		n += f.Patroni.Doubled
	}
	return n
}

// Result is the whole suite.
type Result struct {
	Date        string        `json:"date"`
	CI          bool          `json:"ci"`
	Faults      []FaultResult `json:"faults"`
	WallSeconds float64       `json:"wall_seconds"`
}

// Violations counts every invariant violation of every fault.
func (r *Result) Violations() int {
	n := 0
	for _, f := range r.Faults {
		n += f.Violations()
	}
	return n
}

// RedisCaused counts the client errors of the Redis faults that the same
// load without the fault does not produce.
func (r *Result) RedisCaused() int {
	n := 0
	for _, f := range r.Faults {
		if f.Redis != nil {
			for _, k := range f.Redis.Caused {
				n += k
			}
		}
	}
	return n
}

const (
	hold   = 3 * time.Second
	every  = time.Second
	secret = "faults-secret"
)

// world is the system under test for one group of faults.
type world struct {
	cfg   Config
	fx    *harness.Fixture
	px    *proxy.Proxy     // nil when the server reaches PostgreSQL directly
	pg    *harness.Cluster // the private cluster the database lives on, if any
	osvc  *ordersvc.Service
	codes []string
	next  atomic.Int64
	rid   atomic.Int64
	// cards are multi-use cards (see cardEvery); nextCard counts their uses.
	cards    []string
	nextCard atomic.Int64
	extra    *harness.Server // a second server, when running
	// rcv is the webhook receiver subscribed to every event type, if any.
	rcv *harness.Receiver
	// recovered is when the last fault's injection ended.
	recovered time.Time
	// replicas are servers besides fx.Server that run from the start of
	// every fault: the load is spread evenly over all of them.
	replicas []*harness.Server
	// With Redis in front: the server, the proxy the replicas reach it
	// through (nil when they reach it directly), every dupEvery-th operation
	// a same-id resend of a redemption already answered SUCCEEDED (so that
	// Redis hits have something to count), and the result codes the load
	// produces without a Redis fault.
	redis    *harness.Redis
	rpx      *proxy.Proxy
	dupEvery int64
	ops      atomic.Int64
	answered load.Pool
	allowed  map[string]bool
	// lastRecs are the records of the last run, retries included.
	lastRecs []*load.Record
}

// servers are every server the load is spread over from the start.
func (w *world) servers() []*harness.Server {
	return append([]*harness.Server{w.fx.Server}, w.replicas...)
}

// nextOp is the next redemption: a fresh coupon with a fresh request id, or,
// every dupEvery-th, a resend of one already answered.
func (w *world) nextOp() load.Op {
	if w.dupEvery > 0 && w.ops.Add(1)%w.dupEvery == 0 {
		if rid := w.answered.Take(); rid != "" {
			code, id, _ := strings.Cut(rid, " ")
			op := load.Redeem("retry", code, w.fx.StoreID, id)
			return op
		}
	}
	id := w.rid.Add(1)
	rid := "f-" + strconv.FormatInt(id, 10)
	if id%multiEvery == 0 {
		return load.RedeemMany("multi", []string{w.code(), w.code()}, w.fx.StoreID, rid)
	}
	if id%cardEvery == cardEvery/2 && len(w.cards) > 0 {
		return load.Redeem("card", w.card(), w.fx.StoreID, rid)
	}
	return load.Redeem("redeem", w.code(), w.fx.StoreID, rid)
}

// retryKind is the kind of a same-id resend of an operation of kind k: a
// several-code order stays one ("multi-retry"), a use of a card one
// ("card-retry").
func retryKind(k string) string {
	switch {
	case strings.HasPrefix(k, "multi"):
		return "multi-retry"
	case strings.HasPrefix(k, "card"):
		return "card-retry"
	}
	return "retry"
}

// multiEvery: every multiEvery-th new request of the load is a two-code
// order (redeemCoupons), so every fault also hits several-code orders.
const multiEvery = 10

// cardEvery: one new request in cardEvery, halfway between two-code orders,
// uses a multi-use card (usesPerCoupon cardUses) instead of a fresh coupon.
// Each card is sent cardTries uses, one more than it has, so every fault
// also hits cards between uses, cards' last uses and cards used up.
const (
	cardEvery = 10
	cardUses  = 3
	cardTries = cardUses + 1
)

// card is the card of the next card use: cardTries uses in a row per card.
func (w *world) card() string {
	i := int(w.nextCard.Add(1)-1) / cardTries
	if i >= len(w.cards) {
		return "0000000000000"
	}
	return w.cards[i]
}

func (w *world) code() string {
	i := int(w.next.Add(1)) - 1
	if i >= len(w.codes) {
		return "0000000000000"
	}
	return w.codes[i]
}

func (c Config) logf(format string, a ...any) {
	if c.Log != nil {
		c.Log(format, a...)
	}
}

// newWorld starts a proxy to PostgreSQL (unless direct), optionally an order
// service, and a server that reaches the database through the proxy or,
// direct, at PostgreSQL's own port.
func newWorld(ctx context.Context, cfg Config, db string, webhook, direct bool, ncodes int) (*world, error) {
	env := cfg.Env
	w := &world{cfg: cfg}
	sc := harness.ServerConfig{Name: db, Jobs: true, HoldTimeout: hold, CompensateEvery: every, FulfilTimeout: time.Second,
		DatabaseURL: env.DBURL(db, 0), MaxConns: 8, AllowPrivateWebhooks: true}
	if !direct {
		px, err := proxy.Start(fmt.Sprintf("%s:%d", env.PGHost, env.PGPort))
		if err != nil {
			return nil, err
		}
		w.px, sc.DatabaseURL = px, env.DBURL(db, px.Port())
	}
	var err error
	if webhook {
		if w.osvc, err = ordersvc.Start([]byte(secret)); err != nil {
			w.close()
			return nil, err
		}
		sc.WebhookURL, sc.WebhookSecret = w.osvc.URL, secret
	}
	if w.fx, err = env.NewFixture(ctx, db, sc); err != nil {
		w.close()
		return nil, err
	}
	// Stackable, so that the load's several-code orders can take two of its
	// coupons at once.
	if _, _, w.codes, err = w.fx.CampaignWith(ctx, "faults", ncodes, map[string]any{"stackable": true}); err != nil {
		w.close()
		return nil, err
	}
	// Enough cards for the card uses of every fault the world runs: about
	// one operation in cardEvery, cardTries uses per card, and a fresh card
	// at the start of each fault.
	if _, _, w.cards, err = w.fx.CampaignWith(ctx, "faults-cards", max(100, ncodes/(cardEvery*cardTries)+50),
		map[string]any{"usesPerCoupon": cardUses}); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

func (w *world) close() {
	if w.rcv != nil {
		w.rcv.Down()
	}
	if w.extra != nil {
		w.extra.Stop()
	}
	for _, r := range w.replicas {
		r.Stop()
	}
	if w.rpx != nil {
		w.rpx.Close()
	}
	if w.redis != nil {
		w.redis.Close()
	}
	if w.fx != nil {
		w.fx.Close()
	}
	if w.osvc != nil {
		w.osvc.Close()
	}
	if w.px != nil {
		w.px.Close()
	}
}

// Run runs the suite (the CI subset with cfg.CI).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	start := time.Now()
	res := &Result{Date: start.UTC().Format(time.RFC3339), CI: cfg.CI}
	rate, secs := 100.0, 12*time.Second
	kills, crashes := 10, 3
	// Far more fresh coupons than any fault uses; issuing them is part of the
	// wall time, which the CI subset keeps under 70 s (about 50 s, and 15 s for
	// the private cluster and its immediate restart).
	dbCodes, webhookCodes, restartCodes := 100_000, 50_000, 5_000
	redisCodes, patroniCodes := 20_000, 10_000
	if cfg.CI {
		rate, secs, kills, crashes = 60, 5*time.Second, 3, 1
		dbCodes, webhookCodes, restartCodes = 5_000, 5_000, 1_000
		redisCodes = 1_000
		patroniCodes = 1_000
	}
	if cfg.Only == "patroni" {
		frs, err := runPatroni(ctx, cfg, rate, secs, patroniCodes)
		res.Faults = frs
		res.WallSeconds = time.Since(start).Seconds()
		return res, err
	}
	if cfg.Only == "redis" {
		frs, err := runRedis(ctx, cfg, rate, secs, redisCodes)
		res.Faults = frs
		res.WallSeconds = time.Since(start).Seconds()
		return res, err
	}
	if cfg.Only == "webhooks" {
		frs, err := runWebhooks(ctx, cfg, rate, dbCodes)
		res.Faults = frs
		if err == nil {
			var modes []string
			for _, r := range restarts {
				modes = append(modes, r.mode)
			}
			frs, err = runRestarts(ctx, cfg, modes, rate, secs, restartCodes)
			res.Faults = append(res.Faults, frs...)
		}
		res.WallSeconds = time.Since(start).Seconds()
		return res, err
	}

	// Process and database faults, builtin adapter (audit checks orders too).
	w, err := newWorld(ctx, cfg, "coupond_faults", false, false, dbCodes)
	if err != nil {
		return nil, err
	}
	type fault struct {
		name, how string
		ci        bool
		inject    func(ctx context.Context, w *world) (time.Time, string, error)
	}
	dbFaults := []fault{
		{"SIGKILL and restart", fmt.Sprintf("%d kills at random moments, restart at once", kills), true, func(ctx context.Context, w *world) (time.Time, string, error) {
			var last time.Time
			for i := 0; i < kills; i++ {
				time.Sleep(500*time.Millisecond + time.Duration(rand.Int64N(int64(time.Second))))
				w.fx.Server.Kill()
				if err := w.fx.Server.Start(ctx); err != nil {
					return last, "", err
				}
				last = time.Now()
			}
			return last, "", nil
		}},
		{"pg_terminate_backend", "all of the bench database's backends terminated 5 times (3 in CI), 1 s apart", true, func(ctx context.Context, w *world) (time.Time, string, error) {
			var last time.Time
			n := 0
			times := 5
			if w.cfg.CI {
				times = 3
			}
			for i := 0; i < times; i++ {
				var k int
				_ = w.fx.Pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
WHERE datname = $1 AND pid <> pg_backend_pid() AND application_name <> 'coupond-bench'`, w.fx.DBName).Scan(&k)
				n += k
				last = time.Now()
				time.Sleep(time.Second)
			}
			return last, fmt.Sprintf("%d backends terminated", n), nil
		}},
		{"latency to PostgreSQL", "50 ms added to every chunk both ways for 3 s", false, func(ctx context.Context, w *world) (time.Time, string, error) {
			w.px.SetLatency(50 * time.Millisecond)
			time.Sleep(3 * time.Second)
			w.px.SetLatency(0)
			return time.Now(), "", nil
		}},
		{"black-holed PostgreSQL", "bytes stop flowing both ways for 3 s, connections stay open", false, func(ctx context.Context, w *world) (time.Time, string, error) {
			w.px.SetBlackhole(true)
			time.Sleep(3 * time.Second)
			w.px.SetBlackhole(false)
			return time.Now(), "", nil
		}},
		{"SIGSTOP past the hold timeout", "server paused 5 s (hold 3 s) while a second server runs compensation", false, func(ctx context.Context, w *world) (time.Time, string, error) {
			if err := w.second(ctx); err != nil {
				return time.Time{}, "", err
			}
			if err := w.fx.Server.Signal(syscall.SIGSTOP); err != nil {
				return time.Time{}, "", err
			}
			time.Sleep(hold + 2*time.Second)
			_ = w.fx.Server.Signal(syscall.SIGCONT)
			return time.Now(), "", nil
		}},
		{"two servers with jobs", "a second server with jobs on; load split across both", false, func(ctx context.Context, w *world) (time.Time, string, error) {
			err := w.second(ctx)
			return time.Now(), "", err
		}},
	}
	for _, f := range dbFaults {
		if cfg.CI && !f.ci {
			continue
		}
		d := secs
		if f.name == "SIGKILL and restart" {
			// Each restart takes about a second: keep the load running past the last one.
			d = time.Duration(kills)*2500*time.Millisecond + 3*time.Second
		}
		fr, err := w.run(ctx, f.name, f.how, rate, d, f.inject)
		if err != nil {
			w.close()
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		res.Faults = append(res.Faults, fr)
		if w.extra != nil {
			w.extra.Stop()
			w.extra = nil
		}
	}
	w.close()

	// Webhook faults: one subscribed endpoint at the suite's receiver, with
	// the receiver or coupond failing. Each waits out the retry schedule
	// (the second retry comes 5 minutes after the first), so the CI subset
	// leaves them out.
	if !cfg.CI {
		frs, err := runWebhooks(ctx, cfg, rate, dbCodes)
		if err != nil {
			return nil, fmt.Errorf("webhooks: %w", err)
		}
		res.Faults = append(res.Faults, frs...)
	}

	// The Redis faults need a world of their own (three replicas, a Redis):
	// even their one short row takes about 13 s, past what the CI subset's
	// 70 s allow, so CI runs it as a job of its own (CI=1 ONLY=redis).
	if !cfg.CI {
		frs, err := runRedis(ctx, cfg, rate, secs, redisCodes)
		if err != nil {
			return nil, fmt.Errorf("redis: %w", err)
		}
		res.Faults = append(res.Faults, frs...)
	}

	// The Patroni failover rows make a cluster of their own (about 10 s) and
	// wait for the old primary to rejoin between rows: past the CI subset's
	// 70 s, so CI runs their one short row as a job of its own
	// (CI=1 ONLY=patroni).
	if !cfg.CI {
		frs, err := runPatroni(ctx, cfg, rate, secs, patroniCodes)
		res.Faults = append(res.Faults, frs...)
		if err != nil {
			return nil, fmt.Errorf("patroni: %w", err)
		}
	}

	var modes []string
	for _, r := range restarts {
		if !cfg.CI || r.ci {
			modes = append(modes, r.mode)
		}
	}
	frs, err := runRestarts(ctx, cfg, modes, rate, secs, restartCodes)
	if err != nil {
		return nil, err
	}
	res.Faults = append(res.Faults, frs...)

	// Fulfillment adapter faults, webhook adapter to the reference order service.
	w, err = newWorld(ctx, cfg, "coupond_faults_webhook", true, false, webhookCodes)
	if err != nil {
		return nil, err
	}
	defer w.close()
	adapter := []struct {
		name, how string
		ci        bool
		p         ordersvc.Probabilities
	}{
		{"adapter fails before creating", "every fulfil answered 503 without an order for 3 s", false, ordersvc.Probabilities{FailBeforeCreate: 1}},
		{"adapter creates then fails", "every fulfil creates the order, then answers 502, for 3 s", true, ordersvc.Probabilities{FailAfterCreate: 1}},
		{"adapter hangs past the timeout", "every fulfil hangs past the 1 s fulfil timeout for 3 s", false, ordersvc.Probabilities{Hang: 1}},
		{"adapter rejects", "every fulfil answered 422 rejected for 3 s", false, ordersvc.Probabilities{Reject: 1}},
	}
	for _, a := range adapter {
		if cfg.CI && !a.ci {
			continue
		}
		p := a.p
		fr, err := w.run(ctx, a.name, a.how, rate, secs, func(ctx context.Context, w *world) (time.Time, string, error) {
			w.osvc.Set(p)
			time.Sleep(3 * time.Second)
			w.osvc.Set(ordersvc.Probabilities{})
			return time.Now(), "", nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.name, err)
		}
		res.Faults = append(res.Faults, fr)
	}
	for _, c := range crashPoints {
		if cfg.CI && !c.ci {
			continue
		}
		fr, err := w.crashFault(ctx, c, rate, crashes)
		if err != nil {
			return nil, fmt.Errorf("crash %s: %w", c.point, err)
		}
		res.Faults = append(res.Faults, fr)
	}
	if !cfg.CI {
		fr, err := w.fencedReplay(ctx)
		if err != nil {
			return nil, err
		}
		res.Faults = append(res.Faults, fr)
	}
	res.WallSeconds = time.Since(start).Seconds()
	return res, nil
}

// restart is a real restart of PostgreSQL under load, on a private cluster.
type restart struct {
	mode string // pg_ctl's shutdown mode
	how  string
	ci   bool
}

var restarts = []restart{
	{"fast", "`pg_ctl restart -m fast`: sessions terminated, in-flight transactions rolled back, shutdown checkpoint, start", false},
	{"immediate", "`pg_ctl restart -m immediate`: every PostgreSQL process killed without a checkpoint, like a crash; " +
		"on start, crash recovery replays the WAL", true},
}

// runRestarts creates a private PostgreSQL cluster (the machine's server is
// shared and must not be restarted), starts a server on it with the builtin
// adapter, reaching PostgreSQL directly as it would in production, and runs
// one restart fault per mode. The cluster is removed at the end, on failure
// too.
func runRestarts(ctx context.Context, cfg Config, modes []string, rate float64, secs time.Duration, ncodes int) ([]FaultResult, error) {
	if len(modes) == 0 {
		return nil, nil
	}
	t0 := time.Now()
	pg, err := harness.StartCluster(ctx)
	if err != nil {
		return nil, fmt.Errorf("private PostgreSQL cluster: %w", err)
	}
	defer pg.Stop()
	setup := time.Since(t0)
	cfg.logf("private PostgreSQL %s cluster on 127.0.0.1:%d: initdb and start %.1f s", pg.Version, pg.Port, setup.Seconds())
	cfg.Env = pg.Env(cfg.Env)
	w, err := newWorld(ctx, cfg, "coupond_faults_restart", false, true, ncodes)
	if err != nil {
		return nil, err
	}
	defer w.close()
	w.pg = pg
	if !cfg.CI {
		if err := w.subscribe(ctx); err != nil {
			return nil, err
		}
	}
	var out []FaultResult
	for _, m := range modes {
		i := slices.IndexFunc(restarts, func(r restart) bool { return r.mode == m })
		name := "PostgreSQL restart -m " + m
		fr, err := w.run(ctx, name, restarts[i].how, rate, secs, restartPG(m))
		if err != nil {
			return out, fmt.Errorf("%s: %w", name, err)
		}
		fr.Notes = fmt.Sprintf("PostgreSQL %s, private cluster made in %.1f s; %s", pg.Version, setup.Seconds(), fr.Notes)
		if w.rcv != nil {
			if fr.Webhooks, err = w.webhookCheck(ctx, w.recovered, webhookWait); err != nil {
				return out, err
			}
		}
		out = append(out, fr)
	}
	return out, nil
}

var (
	redoStart = regexp.MustCompile(`redo starts at ([0-9A-F]+)/([0-9A-F]+)`)
	redoDone  = regexp.MustCompile(`redo done at ([0-9A-F]+)/([0-9A-F]+)`)
)

// restartPG restarts w's cluster with pg_ctl restart -m mode. After an
// immediate shutdown the server log must show crash recovery replaying WAL,
// or the fault did not inject what it claims.
func restartPG(mode string) func(ctx context.Context, w *world) (time.Time, string, error) {
	return func(ctx context.Context, w *world) (time.Time, string, error) {
		off := w.pg.LogSize()
		start := time.Now()
		if err := w.pg.Restart(ctx, mode); err != nil {
			return time.Time{}, "", err
		}
		done := time.Now()
		note := fmt.Sprintf("pg_ctl restart returned after %d ms", done.Sub(start).Milliseconds())
		log, err := w.pg.LogSince(off)
		if err != nil {
			return done, "", err
		}
		if mode == "immediate" {
			from, to := redoStart.FindStringSubmatch(log), redoDone.FindStringSubmatch(log)
			if from == nil || to == nil || !strings.Contains(log, "not properly shut down") {
				return done, "", fmt.Errorf("no crash recovery in the server log after the immediate restart:\n%s", log)
			}
			note += fmt.Sprintf("; crash recovery replayed %.0f kB of WAL", float64(lsn(to)-lsn(from))/1024)
		}
		return done, note, nil
	}
}

// lsn reads a WAL position matched as its two hexadecimal halves.
func lsn(m []string) uint64 {
	hi, _ := strconv.ParseUint(m[1], 16, 32)
	lo, _ := strconv.ParseUint(m[2], 16, 32)
	return hi<<32 | lo
}

// second starts a second server with jobs on the same database.
func (w *world) second(ctx context.Context) error {
	c := w.fx.Server.Config()
	c.Name, c.Port = c.Name+"-b", 0
	s, err := w.cfg.Env.StartServer(ctx, c)
	w.extra = s
	return err
}

// run drives load for secs while inject runs after a short warm-up, then
// retries unknown outcomes with their request ids after compensation had
// its chance, and checks every invariant.
func (w *world) run(ctx context.Context, name, how string, rate float64, secs time.Duration,
	inject func(ctx context.Context, w *world) (time.Time, string, error)) (FaultResult, error) {
	w.cfg.logf("fault: %s", name)
	start := time.Now()
	fr := FaultResult{Name: name, Injection: how, FailByCode: map[string]int{}}
	// Each fault starts on a fresh card: the history check reads one
	// fault's records, so a card whose uses straddled two faults would look
	// taken in the second by uses it cannot see.
	if n := w.nextCard.Load(); n%cardTries != 0 {
		w.nextCard.Store(n + cardTries - n%cardTries)
	}
	var oldest atomic.Int64
	stopMon := make(chan struct{})
	var monWG sync.WaitGroup
	monWG.Add(1)
	go func() {
		defer monWG.Done()
		for {
			var age float64
			err := w.fx.Pool.QueryRow(ctx, `SELECT COALESCE(EXTRACT(EPOCH FROM now() - min(c.updated_at)), 0)::float8
FROM coupons c WHERE c.status = 'REDEEMING'`).Scan(&age)
			if err == nil && int64(age*1000) > oldest.Load() {
				oldest.Store(int64(age * 1000))
			}
			select {
			case <-stopMon:
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	var mu sync.Mutex
	var recs []*load.Record
	attack := func(url string, share float64, wg *sync.WaitGroup) {
		defer wg.Done()
		r := load.Run(ctx, load.Attack{Name: name, URL: url + "/graphql", Token: w.fx.Clerk, Pacer: load.Constant{PerSec: rate * share},
			Duration: secs, MaxOps: int(rate*share*secs.Seconds()) + 1, Timeout: 8 * time.Second,
			Next: func(int) load.Op { return w.nextOp() },
			OnDone: func(r *load.Record) {
				if w.dupEvery > 0 && r.Kind == "redeem" && r.Outcome == load.OK {
					w.answered.Put(r.Code + " " + r.RequestID)
				}
			}})
		mu.Lock()
		recs = append(recs, r...)
		mu.Unlock()
	}
	var mon *redisMonitor
	if w.redis != nil {
		mon = startRedisMonitor(w.servers(), 100*time.Millisecond)
	}
	var wg sync.WaitGroup
	loadStart := time.Now()
	all := w.servers()
	for _, s := range all {
		wg.Add(1)
		go attack(s.URL(), 1/float64(len(all)), &wg)
	}
	time.Sleep(time.Second)
	var recovered time.Time
	var note string
	var ierr error
	if name == "two servers with jobs" {
		recovered, note, ierr = inject(ctx, w)
		if ierr == nil {
			wg.Add(1)
			go attack(w.extra.URL(), 1, &wg)
		}
	} else {
		recovered, note, ierr = inject(ctx, w)
	}
	wg.Wait()
	w.recovered = recovered
	if mon != nil {
		fr.Redis = mon.stop(recovered, len(all))
	}
	if ierr != nil {
		close(stopMon)
		monWG.Wait()
		return fr, ierr
	}
	fr.Notes = note
	if fr.Redis != nil {
		fr.Redis.count(recs, w.allowed)
	}
	// Time to first success after the fault ended.
	rec := recovered.Sub(loadStart)
	first := time.Duration(-1)
	for _, r := range recs {
		if r.Outcome == load.OK && r.Sent >= rec && (first < 0 || r.Done < first) {
			first = r.Done
		}
	}
	if first >= 0 {
		fr.FirstSuccessMS = float64((first-rec)/time.Microsecond) / 1000
	} else {
		fr.FirstSuccessMS = -1
	}
	// Let compensation settle held coupons, then retry every unknown with its
	// request id: the answer must now be final.
	time.Sleep(hold + 2*every)
	var unknown []load.Op
	for _, r := range recs {
		switch r.Outcome {
		case load.OK:
			fr.OK++
		case load.Fail:
			fr.FailByCode[r.Result]++
		default:
			fr.Unknown++
			unknown = append(unknown, r.Op)
		}
	}
	fr.Attempted = len(recs)
	if len(unknown) > 0 {
		retries := load.Run(ctx, load.Attack{Name: "retry", URL: w.fx.Server.URL() + "/graphql", Token: w.fx.Clerk,
			Pacer: load.Constant{PerSec: 200}, Duration: time.Minute, MaxOps: len(unknown), Timeout: 8 * time.Second,
			Next: func(i int) load.Op { op := unknown[i]; op.Kind = retryKind(op.Kind); return op }})
		for _, r := range retries {
			if r.Outcome != load.Unknown {
				fr.UnknownResolved++
			}
		}
		recs = append(recs, retries...)
	}
	close(stopMon)
	monWG.Wait()
	fr.OldestRedeeming = float64(oldest.Load()) / 1000
	h, err := history.Check(ctx, w.fx.Pool, recs)
	if err != nil {
		return fr, err
	}
	fr.HistoryViolation = h.Violations
	w.lastRecs = recs
	var ignore []string
	if w.osvc != nil {
		ignore = []string{"ORDER_WITHOUT_REDEMPTION", "REDEMPTION_WITHOUT_ORDER"}
		if fr.OrderViolations, err = w.checkOrders(ctx); err != nil {
			return fr, err
		}
	}
	a, err := w.cfg.Env.Audit(ctx, w.fx.DBURL, hold, every, ignore...)
	if err != nil {
		return fr, err
	}
	fr.AuditViolations = a.Violations
	fr.Seconds = time.Since(start).Seconds()
	w.cfg.logf("  attempted %d ok %d fail %v unknown %d resolved %d; violations audit %d history %d orders %d; first success %.0f ms; oldest REDEEMING %.1f s",
		fr.Attempted, fr.OK, fr.FailByCode, fr.Unknown, fr.UnknownResolved, len(fr.AuditViolations), len(fr.HistoryViolation),
		len(fr.OrderViolations), fr.FirstSuccessMS, fr.OldestRedeeming)
	if r := fr.Redis; r != nil {
		w.cfg.logf("  redis: %d replicas; hits %+.0f misses %+.0f waits %+.0f errors %+.0f fallbacks %+.0f; errors by code %v, caused by Redis %v; back on the Redis path after %.0f ms",
			r.Replicas, r.Delta.Hits, r.Delta.Misses, r.Delta.Waits, r.Delta.Errors, r.Delta.Fallbacks, r.ErrorsByCode, r.Caused, r.BackMS)
	}
	return fr, nil
}

// checkOrders compares succeeded, unrefunded one-shot redemptions (a
// several-code order's as one) with the order service's live orders.
func (w *world) checkOrders(ctx context.Context) ([]string, error) {
	// A several-code order has one business order, keyed by its order's
	// number (its first flow's redemption number).
	rows, err := w.fx.Pool.Query(ctx, `SELECT DISTINCT COALESCE(g.order_no, f.redeem_no)
FROM redemption_flows f LEFT JOIN redemption_orders g ON g.merchant_id = f.merchant_id AND g.id = f.order_id
WHERE f.status = 'SUCCEEDED' AND f.operation = 'REDEEM'
AND NOT EXISTS (SELECT 1 FROM refund_flows r WHERE r.redemption_id = f.id)`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	n := 0
	for rows.Next() {
		var no string
		if err := rows.Scan(&no); err != nil {
			return nil, err
		}
		n++
		if o, ok := w.osvc.Inner.Order(no); !ok || o.Cancelled {
			if len(out) < 20 {
				out = append(out, "succeeded redemption (or order) "+no+" has no live order")
			}
		}
	}
	if live := w.osvc.Inner.LiveOrders(); live != n {
		out = append(out, fmt.Sprintf("%d live orders for %d succeeded redemptions and orders", live, n))
	}
	return out, rows.Err()
}

// fencedReplay replays a delayed create for every redemption compensation
// released and fenced: the order service must refuse each (the fence holds)
// and no order may appear.
func (w *world) fencedReplay(ctx context.Context) (FaultResult, error) {
	start := time.Now()
	w.cfg.logf("fault: delayed create replayed after the fence")
	fr := FaultResult{Name: "delayed create after the fence", Injection: "a signed /fulfil replayed for every redemption compensation released",
		FailByCode: map[string]int{}}
	// A several-code order's business order is keyed by its order's number.
	rows, err := w.fx.Pool.Query(ctx, `SELECT DISTINCT f.merchant_id, COALESCE(g.order_no, f.redeem_no)
FROM redemption_flows f LEFT JOIN redemption_orders g ON g.merchant_id = f.merchant_id AND g.id = f.order_id
WHERE f.status = 'RELEASED' AND (f.fenced_at IS NOT NULL OR g.fenced_at IS NOT NULL)`)
	if err != nil {
		return fr, err
	}
	type key struct {
		m  int64
		no string
	}
	var ks []key
	for rows.Next() {
		var k key
		if err := rows.Scan(&k.m, &k.no); err != nil {
			rows.Close()
			return fr, err
		}
		ks = append(ks, k)
	}
	rows.Close()
	for _, k := range ks {
		fr.Attempted++
		code, err := w.osvc.ReplayCreate(ctx, k.m, k.no)
		if err != nil {
			return fr, err
		}
		if code == 409 {
			fr.FailByCode["409 fenced"]++
		} else {
			fr.OK++
			fr.HistoryViolation = append(fr.HistoryViolation, fmt.Sprintf("replayed create of fenced %s answered %d", k.no, code))
		}
	}
	fr.OrderViolations, err = w.checkOrders(ctx)
	if err != nil {
		return fr, err
	}
	a, err := w.cfg.Env.Audit(ctx, w.fx.DBURL, hold, every, "ORDER_WITHOUT_REDEMPTION", "REDEMPTION_WITHOUT_ORDER")
	if err != nil {
		return fr, err
	}
	fr.AuditViolations = a.Violations
	fr.FirstSuccessMS = -1
	fr.Seconds = time.Since(start).Seconds()
	w.cfg.logf("  replayed %d fenced creates: %d refused", fr.Attempted, fr.FailByCode["409 fenced"])
	return fr, nil
}

// crashEnv arms the crash point of a coupond serve started while it is set:
// the environment fallback of serve --crash-at in a binary built with -tags
// crashpoints. The harness starts servers with its own arguments, so the
// suite reaches the flag through the environment the server inherits.
const crashEnv = "COUPOND_CRASH_AT"

// crashPoint is a deterministic crash of the server inside the redemption
// protocol, on the webhook adapter's two-transaction path.
type crashPoint struct {
	point string
	// means says what a crash there leaves behind and who must resolve it.
	means string
	// want is the end state of the redemption at the point once compensation
	// and the client's same-id retry have run.
	want      string
	wantFence bool
	wantOrder bool
	ci        bool
}

var crashPoints = []crashPoint{
	{point: "after-reserve-commit", means: "flow PROCESSING and coupon REDEEMING committed, the order service not called yet; compensation finds no order, fences the number and releases the coupon",
		want: "RELEASED", wantFence: true},
	{point: "after-order-created", means: "the order service created the order and answered, coupond had not confirmed; compensation finds the order and confirms",
		want: "SUCCEEDED", wantOrder: true, ci: true},
	{point: "after-confirm-commit", means: "flow SUCCEEDED and coupon REDEEMED committed, the answer not sent; the client's same-id retry gets SUCCEEDED",
		want: "SUCCEEDED", wantOrder: true},
}

// crashFault restarts the server armed to SIGKILL itself at c.point, runs
// load, and each time the server dies restarts it (armed again, the last time
// not), crashes times in all. Besides the usual checks, every redemption that
// was at the point when the process died must end as c.want.
func (w *world) crashFault(ctx context.Context, c crashPoint, rate float64, crashes int) (FaultResult, error) {
	defer os.Unsetenv(crashEnv)
	arm := func() {
		// Early in the load, a different redemption each time.
		_ = os.Setenv(crashEnv, fmt.Sprintf("%s:%d", c.point, 5+rand.IntN(30)))
	}
	arm()
	w.fx.Server.Stop()
	if err := w.fx.Server.Start(ctx); err != nil {
		return FaultResult{}, err
	}
	name := "crash " + c.point
	how := fmt.Sprintf("the server SIGKILLs itself the Nth time (N random, 5-34) a redemption reaches the point, %s, "+
		"restart at once (see Crash points)", times(crashes))
	// The point is reached within half a second of load and a restart takes
	// about one: keep the load running a little past the last one.
	d := time.Duration(crashes)*2*time.Second + 2*time.Second
	fr, err := w.run(ctx, name, how, rate, d, func(ctx context.Context, w *world) (time.Time, string, error) {
		var last time.Time
		for i := 0; i < crashes; i++ {
			if err := w.waitDead(ctx, 30*time.Second); err != nil {
				return last, "", fmt.Errorf("%w (was coupond built with -tags crashpoints?)", err)
			}
			if i == crashes-1 {
				_ = os.Unsetenv(crashEnv)
			} else {
				arm()
			}
			if err := w.fx.Server.Start(ctx); err != nil {
				return last, "", err
			}
			last = time.Now()
		}
		return last, "", nil
	})
	if err != nil {
		return fr, err
	}
	nos, err := w.crashedAt(c.point)
	if err != nil {
		return fr, err
	}
	if len(nos) != crashes {
		fr.HistoryViolation = append(fr.HistoryViolation, fmt.Sprintf("%d crash lines for %s in the server log, want %d", len(nos), c.point, crashes))
	}
	asWanted := 0
	for _, no := range nos {
		var status string
		var fenced bool
		if err := w.fx.Pool.QueryRow(ctx, `SELECT f.status, f.fenced_at IS NOT NULL OR g.fenced_at IS NOT NULL
FROM redemption_flows f LEFT JOIN redemption_orders g ON g.merchant_id = f.merchant_id AND g.id = f.order_id
WHERE f.redeem_no = $1`, no).
			Scan(&status, &fenced); err != nil {
			return fr, fmt.Errorf("redemption %s at the crash point: %w", no, err)
		}
		o, ok := w.osvc.Inner.Order(no)
		live := ok && !o.Cancelled
		if status != c.want || fenced != c.wantFence || live != c.wantOrder {
			fr.HistoryViolation = append(fr.HistoryViolation, fmt.Sprintf("redemption %s crashed %s ended %s (fenced %t, live order %t), want %s (fenced %t, live order %t)",
				no, c.point, status, fenced, live, c.want, c.wantFence, c.wantOrder))
			continue
		}
		asWanted++
	}
	state := c.want
	if c.wantFence {
		state += " and fenced"
	}
	if c.wantOrder {
		state += " with its order"
	}
	fr.Notes = fmt.Sprintf("crashed %s; %d of %d redemptions at the point ended %s", times(len(nos)), asWanted, len(nos), state)
	w.cfg.logf("  %s", fr.Notes)
	return fr, nil
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return strconv.Itoa(n) + " times"
}

// waitDead waits until the server process is gone.
func (w *world) waitDead(ctx context.Context, timeout time.Duration) error {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); {
		if w.fx.Server.Signal(0) != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("the server did not crash within %s", timeout)
}

var crashLine = regexp.MustCompile(`crash-at: (\S+) reached \d+ times, redemption (\S+): SIGKILL`)

// crashedAt returns the redemption numbers the server's log names as being at
// point when it killed itself.
func (w *world) crashedAt(point string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(w.cfg.Env.Dir, w.fx.Server.Config().Name+".log"))
	if err != nil {
		return nil, err
	}
	var nos []string
	for _, line := range strings.Split(string(b), "\n") {
		if m := crashLine.FindStringSubmatch(line); m != nil && m[1] == point {
			nos = append(nos, m[2])
		}
	}
	return nos, nil
}
