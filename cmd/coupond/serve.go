package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"

	"coupond/graph"
	"coupond/httpapi"
	"coupond/jobs"
	"coupond/models"
	"coupond/services"
	"coupond/web"
)

type serveConfig struct {
	addr            string
	databaseURL     string
	demo            bool
	playground      bool
	holdTimeout     time.Duration
	fulfilTimeout   time.Duration
	compensateEvery time.Duration
	expireEvery     time.Duration
	// reconcileSchedule and statementSchedule are the cron specs (UTC) of
	// reconciliation and the daily statement; jobs.Off schedules none.
	reconcileSchedule string
	statementSchedule string
	jobs              bool
	webhookURL        string
	webhookSecret     string
	limitTokenRPS     float64
	limitStoreRPS     float64
	limitLookups      float64
	// limitCustomerRPS and limitCustomerLookups limit what an APP token
	// relays for one customerRef.
	limitCustomerRPS     float64
	limitCustomerLookups float64
	maxConns             int
	logLevel             string
	shutdownGrace        time.Duration
	tokenCacheTTL        time.Duration
	debugAddr            string
	maxInflight          int
	inflightWait         time.Duration
	maxHTTPConns         int
	redisURL             string
	readURLs             []string
	readMaxLag           time.Duration
	queryExecMode        string
	otlpEndpoint         string
	otlpRatio            float64
	// allowPrivateWebhooks accepts webhook endpoints on private addresses.
	allowPrivateWebhooks bool
	// webhookConcurrency bounds the attempts in flight per endpoint.
	webhookConcurrency int
	// runJobWait is how long runJob waits for its run before returning it
	// RUNNING.
	runJobWait time.Duration
	// optionHooks apply the flags of serveFlagHooks to the services' options.
	optionHooks []func(*services.Options) error
}

// serveFlagHooks add the flags of optional builds to serve (crashpoints.go,
// built only with -tags crashpoints); each returns what applies its flags to
// the services' options once they are parsed.
var serveFlagHooks []func(fs flagSet) func(*services.Options) error

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", stderr)
	var c serveConfig
	addr := fs.String("addr", ":8080", "listen address")
	dbURL := fs.databaseURL()
	demo := fs.Bool("demo", false, "on an empty database, create merchant demo with stores, campaigns and coupons, and print sign-in tokens")
	playground := fs.Bool("playground", false, "serve the GraphQL playground at /playground/ and allow introspection")
	hold := fs.Duration("hold-timeout", 2*time.Minute, "how long a redemption may hold a coupon before compensation resolves it")
	fulfil := fs.Duration("fulfil-timeout", 10*time.Second, "deadline of one call to the fulfillment adapter")
	every := fs.Duration("compensate-every", 30*time.Second, "interval of the compensation job")
	expireEvery := fs.Duration("expire-every", time.Minute, "interval of the expiry job, which marks coupons whose validity ended EXPIRED")
	reconcileSchedule := fs.String("reconcile-schedule", "@hourly", "cron spec (UTC) of reconciliation, e.g. \"30 3 * * *\" for 03:30 every day; \"off\" schedules none (runJob, the console and coupond audit still run it)")
	statementSchedule := fs.String("statement-schedule", "10 0 * * *", "cron spec (UTC) of the daily statement; \"off\" schedules none")
	runJobs := fs.Bool("jobs", true, "run the background jobs in this process (safe on every replica)")
	runJobWait := fs.Duration("run-job-wait", 20*time.Second, "how long the runJob mutation waits for its run; a run still going then is returned RUNNING and goes on in the background (keep it under your proxies' request timeouts)")
	whURL := fs.String("webhook-url", "", "fulfil orders through the merchant's order system at this base URL instead of the builtin orders table")
	whSecret := fs.String("webhook-secret", "", "HMAC-SHA256 key shared with the order system (required with --webhook-url)")
	tokenRPS := fs.Float64("limit-token-rps", 100, "redemption requests per second per token, burst twice that (0: no limit)")
	storeRPS := fs.Float64("limit-store-rps", 100, "redemption requests per second per store, burst twice that (0: no limit)")
	lookups := fs.Float64("limit-failed-lookups-per-minute", 30, "unknown-code answers per minute per token before RATE_LIMITED, burst 10 (0: no limit)")
	customerRPS := fs.Float64("limit-customer-rps", 2, "requests per second an APP token relays for one customerRef, burst five times that, charged before the token's own limit (0: no limit)")
	customerLookups := fs.Float64("limit-customer-failed-lookups-per-minute", 10, "unknown-code answers per minute per customerRef of an APP token, burst 5, before the token's own limit (0: no limit)")
	tokenTTL := fs.Duration("token-cache-ttl", 10*time.Second, "how long an authenticated token is trusted before asking the database again (revocations reach other replicas within it; 0: no cache)")
	maxConns := fs.Int("max-conns", 0, "database connection pool size (0: 8)")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	debugAddr := fs.String("debug-addr", "", "serve Go's pprof profiles on this separate address, e.g. 127.0.0.1:6060 (off when empty; never expose it)")
	grace := fs.Duration("shutdown-grace", 20*time.Second, "how long to drain requests on shutdown")
	maxInflight := fs.Int("max-inflight", 512, "GraphQL requests served at once; as many more wait for a slot up to --max-inflight-wait, then get 503 OVERLOADED (0: no limit)")
	inflightWait := fs.Duration("max-inflight-wait", time.Second, "how long a GraphQL request over --max-inflight waits for a slot before 503 OVERLOADED")
	maxHTTPConns := fs.Int("max-http-conns", 1024, "client connections held open at once (twice --max-inflight: the requests served and waiting); more wait to be accepted, and at the limit idle ones are closed (0: no limit)")
	redisURL := fs.String("redis-url", "", "Redis shared by the replicas, e.g. redis://127.0.0.1:6379/0: answers duplicate request ids and hot coupons' scans before the database (off when empty; the database decides either way)")
	allowPrivate := fs.Bool("allow-private-webhooks", false, "accept webhook endpoints on loopback, private and link-local addresses (on-premise installs, tests); refused otherwise")
	whConcurrency := fs.Int("webhook-concurrency", services.DefaultWebhookConcurrency, "webhook attempts in flight at once per endpoint in this process")
	readURLs := fs.List("read-database-url", "a streaming replica of the primary, e.g. postgres://replica1:5432/coupond, for lists, statements, exports, the overview and reconciliation's reads; repeat for more (decisions stay on the primary)")
	readMaxLag := fs.Duration("read-max-lag", 30*time.Second, "a read replica lagging by more than this, or not answering, serves no reads until it catches up (checked every 5 s); with none serving, their reads go to the primary")
	execMode := fs.String("query-exec-mode", "", "pgx's default_query_exec_mode for the primary and the replicas when their URLs do not set it: cache_describe (or exec, simple_protocol) through pgbouncer in transaction mode, which has no prepared statements; empty keeps pgx's cache_statement")
	otlp := fs.String("otlp-endpoint", "", "send OpenTelemetry traces to this OTLP/HTTP collector, e.g. http://127.0.0.1:4318 (off when empty)")
	otlpRatio := fs.Float64("otlp-sample-ratio", 0.01, "share of requests traced with --otlp-endpoint, 0 to 1 (a request whose traceparent is sampled is always traced)")
	var hooks []func(*services.Options) error
	for _, h := range serveFlagHooks {
		hooks = append(hooks, h(fs))
	}
	if err := fs.parse(args); err != nil {
		return err
	}
	c = serveConfig{addr: *addr, databaseURL: *dbURL, demo: *demo, playground: *playground, holdTimeout: *hold,
		fulfilTimeout: *fulfil, compensateEvery: *every, expireEvery: *expireEvery, jobs: *runJobs,
		reconcileSchedule: *reconcileSchedule, statementSchedule: *statementSchedule, webhookURL: *whURL, webhookSecret: *whSecret,
		limitTokenRPS: *tokenRPS, limitStoreRPS: *storeRPS, limitLookups: *lookups, maxConns: *maxConns,
		limitCustomerRPS: *customerRPS, limitCustomerLookups: *customerLookups,
		logLevel: *level, shutdownGrace: *grace, tokenCacheTTL: *tokenTTL, debugAddr: *debugAddr,
		maxInflight: *maxInflight, inflightWait: *inflightWait, maxHTTPConns: *maxHTTPConns, redisURL: *redisURL, readURLs: *readURLs, readMaxLag: *readMaxLag, queryExecMode: *execMode,
		otlpEndpoint: *otlp, otlpRatio: *otlpRatio, optionHooks: hooks,
		allowPrivateWebhooks: *allowPrivate, webhookConcurrency: *whConcurrency, runJobWait: *runJobWait}
	if c.webhookConcurrency < 1 {
		return errors.New("--webhook-concurrency must be at least 1")
	}
	if c.webhookURL != "" && c.webhookSecret == "" {
		return errors.New("--webhook-url needs --webhook-secret")
	}
	if c.queryExecMode != "" && !slices.Contains(models.QueryExecModes, c.queryExecMode) {
		return fmt.Errorf("--query-exec-mode %q: want one of %s", c.queryExecMode, strings.Join(models.QueryExecModes, ", "))
	}
	if c.maxInflight < 0 || c.inflightWait < 0 || c.maxHTTPConns < 0 {
		return errors.New("--max-inflight, --max-inflight-wait and --max-http-conns must not be negative")
	}
	return serve(ctx, c, stdout, newLogger(stderr, c.logLevel))
}

func (c serveConfig) limits() services.Limits {
	rl := func(perSecond float64, burst int) services.RateLimit {
		if perSecond <= 0 {
			return services.RateLimit{}
		}
		return services.RateLimit{PerSecond: perSecond, Burst: burst}
	}
	return services.Limits{
		RedeemsPerToken:          rl(c.limitTokenRPS, int(2*c.limitTokenRPS)),
		RedeemsPerStore:          rl(c.limitStoreRPS, int(2*c.limitStoreRPS)),
		FailedLookupsPerToken:    rl(c.limitLookups/60, 10),
		RedeemsPerCustomer:       rl(c.limitCustomerRPS, max(int(5*c.limitCustomerRPS), 1)),
		FailedLookupsPerCustomer: rl(c.limitCustomerLookups/60, 5),
	}
}

// serve runs the server until ctx is cancelled, then drains: readiness turns
// 503 at once so load balancers stop sending, in-flight requests finish within
// the grace period, the jobs finish their runs, and the database closes last.
func serve(ctx context.Context, c serveConfig, stdout io.Writer, log *slog.Logger) error {
	db, err := openDB(ctx, c.databaseURL, models.OpenOptions{MaxOpenConns: c.maxConns, Logger: log, Warm: true, QueryExecMode: c.queryExecMode})
	if err != nil {
		return err
	}
	defer models.Close(db)
	var tp trace.TracerProvider
	if c.otlpEndpoint != "" {
		var stop func(context.Context)
		tp, stop, err = startTracing(ctx, c.otlpEndpoint, c.otlpRatio, db, log)
		if err != nil {
			return err
		}
		// Deferred after the database's close, so it runs first: the spans
		// of the last requests are flushed while the process still can.
		defer stop(context.WithoutCancel(ctx))
	}
	replicas, err := openReadReplicas(ctx, db, c, log)
	if err != nil {
		return err
	}
	for _, r := range replicas {
		defer models.Close(r.DB)
	}
	var svc *services.Services
	m, err := newMetrics(db, func() *services.Services { return svc }, log)
	if err != nil {
		return err
	}
	opts := services.Options{HoldTimeout: c.holdTimeout, FulfilTimeout: c.fulfilTimeout, CompensateEvery: c.compensateEvery,
		Logger: log, Limits: c.limits(), OnRedemption: m.observeRedemption, TokenCacheTTL: c.tokenCacheTTL,
		AllowPrivateWebhooks: c.allowPrivateWebhooks, ReadReplicas: replicas, TracerProvider: tp}
	if c.redisURL != "" {
		cache, err := openRedis(ctx, c.redisURL, log)
		if err != nil {
			return err
		}
		defer cache.Close()
		opts.Cache = cache
	}
	if c.webhookURL != "" {
		wh, err := services.NewWebhookFulfiller(services.WebhookConfig{URL: c.webhookURL, Secret: []byte(c.webhookSecret)})
		if err != nil {
			return err
		}
		opts.Fulfiller = wh
	}
	for _, apply := range c.optionHooks {
		if err := apply(&opts); err != nil {
			return err
		}
	}
	svc = services.New(db, opts)
	if c.demo {
		if err := seedDemo(ctx, svc, stdout); err != nil {
			return err
		}
	}
	sched, err := jobs.New(svc.JobRuns, jobs.Config{CompensateEvery: c.compensateEvery, ExpireEvery: c.expireEvery,
		ReconcileSpec: c.reconcileSchedule, StatementSpec: c.statementSchedule, RunNowWait: c.runJobWait, Logger: log, OnRun: m.observeJob})
	if err != nil {
		return fmt.Errorf("--reconcile-schedule, --statement-schedule: %w", err)
	}
	deliverCtx, stopDelivering := context.WithCancel(context.Background())
	defer stopDelivering()
	delivered := make(chan struct{})
	if c.jobs {
		sched.Start()
		// Webhook delivery runs wherever jobs do: every attempt is claimed by a
		// conditional update, so replicas share the work without sending one
		// attempt twice.
		// Delivery gives way to this process's redemptions while they wait
		// for the database.
		d := services.NewDeliverer(db, time.Now, log, services.DelivererOptions{Concurrency: c.webhookConcurrency,
			AllowPrivate: c.allowPrivateWebhooks, Yield: svc.Redemptions.Waiting})
		m.deliverer.Store(d)
		go func() { defer close(delivered); d.Run(deliverCtx) }()
	} else {
		close(delivered)
	}

	// The replicas' health decides which of them serve reads.
	go svc.Replicas.WatchHealth(deliverCtx, replicaHealthEvery, c.readMaxLag, func(st services.ReplicaState, why string) {
		if st.Serving {
			log.Info("read replica serves reads again", "replica", st.Name)
		} else {
			log.Warn("read replica serves no reads; they go to the other replicas or the primary", "replica", st.Name, "why", why)
		}
	})

	var draining atomic.Bool
	mux := http.NewServeMux()
	inflight := newInflightLimit(c.maxInflight, c.inflightWait, m.reg)
	mux.Handle("/graphql", inflight.wrap(graph.NewHandler(svc, graph.Options{Introspection: c.playground, Logger: log, JobRunner: sched.RunNow, TracerProvider: tp})))
	mux.Handle("/export/", httpapi.NewExportHandler(svc, log))
	mux.Handle("/import/", httpapi.NewImportHandler(svc, log))
	if c.playground {
		mux.Handle("/playground", web.PlaygroundHandler())
		mux.Handle("/playground/", web.PlaygroundHandler())
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /readyz", readyz(db, &draining))
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	mux.Handle("/", web.Handler())

	if c.debugAddr != "" {
		if err := serveDebug(c.debugAddr, log); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.addr, err)
	}
	conns := &connLimit{max: c.maxHTTPConns, log: log}
	ln = conns.listen(ln)
	srv := &http.Server{Handler: withTraceContext(withRequestID(mux)), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 5 * time.Minute, IdleTimeout: 120 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ConnState: conns.connState(m.connState)}
	conns.srv = srv
	log.Info("coupond serving", "addr", ln.Addr().String(), "database", string(models.DialectOf(c.databaseURL)), "jobs", c.jobs)
	fmt.Fprintf(stdout, "coupond listening on http://%s (console /, GraphQL /graphql)\n", displayAddr(ln.Addr()))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", c.shutdownGrace)
	draining.Store(true)
	sctx, cancel := context.WithTimeout(context.Background(), c.shutdownGrace)
	defer cancel()
	err = srv.Shutdown(sctx)
	// Without --jobs nothing is scheduled, but runJob's runs may still be
	// going in the background.
	if jerr := sched.Stop(sctx); jerr != nil {
		log.Warn("jobs did not stop in time", "err", jerr)
	}
	// Attempts in flight finish (within the webhook timeout) and record their
	// outcome; one cut short by the grace period is sent again after its
	// lease, with the same webhook-id.
	stopDelivering()
	select {
	case <-delivered:
	case <-sctx.Done():
		log.Warn("webhook attempts did not finish in time")
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// replicaHealthEvery is how often the read replicas' health is checked.
const replicaHealthEvery = 5 * time.Second

// openReadReplicas opens and checks --read-database-url: a replica that
// cannot be reached or is at another schema version stops start-up, one that
// is not in recovery is a warning.
func openReadReplicas(ctx context.Context, db *gorm.DB, c serveConfig, log *slog.Logger) ([]models.ReadReplica, error) {
	if len(c.readURLs) == 0 {
		return nil, nil
	}
	if models.DialectOfDB(db) != models.Postgres {
		return nil, errors.New("--read-database-url needs a PostgreSQL --database-url")
	}
	replicas, warnings, err := models.OpenReadReplicas(ctx, db, c.readURLs,
		models.OpenOptions{MaxOpenConns: c.maxConns, Logger: log, Warm: true, QueryExecMode: c.queryExecMode}, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("--read-database-url: %w", err)
	}
	for _, w := range warnings {
		log.Warn(w)
	}
	for _, r := range replicas {
		log.Info("reading lists, statements, exports and reconciliation from replica", "replica", r.Name)
	}
	return replicas, nil
}

// openRedis connects to the Redis at url. A malformed URL is an error; a
// Redis that does not answer now is only a warning, since the client
// connects on use and coupond answers correctly without it meanwhile.
func openRedis(ctx context.Context, url string, log *slog.Logger) (services.Cache, error) {
	cache, err := services.NewRedisCache(url)
	if err != nil {
		return nil, fmt.Errorf("--redis-url: %w", err)
	}
	if err := services.PingCache(ctx, cache); err != nil {
		log.Warn("redis unreachable; serving without it until it answers", "err", err)
	} else {
		log.Info("redis connected")
	}
	return cache, nil
}

// serveDebug serves net/http/pprof on its own listener, apart from the API, so
// profiles are reachable only where the operator binds them.
func serveDebug(addr string, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	log.Info("pprof serving", "addr", ln.Addr().String())
	go func() { _ = http.Serve(ln, mux) }()
	return nil
}

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// withRequestID gives every request an id, the caller's X-Request-Id when it is
// well formed, and echoes it in the response.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !requestIDPattern.MatchString(id) {
			b := make([]byte, 8)
			_, _ = rand.Read(b)
			id = hex.EncodeToString(b)
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(services.WithRequestID(r.Context(), id)))
	})
}

func displayAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if ok && tcp.IP.IsUnspecified() {
		return fmt.Sprintf("localhost:%d", tcp.Port)
	}
	return a.String()
}

// readyz answers 200 when the database answers and its schema is at the
// binary's migration head, and 503 otherwise or while draining.
func readyz(db *gorm.DB, draining *atomic.Bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if draining.Load() {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		sqlDB, err := db.DB()
		if err == nil {
			err = sqlDB.PingContext(ctx)
		}
		if err != nil {
			http.Error(w, "database unreachable", http.StatusServiceUnavailable)
			return
		}
		if pending, err := models.MigrationsPending(ctx, db); err != nil || pending {
			http.Error(w, "migrations pending", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ready\n")
	}
}

func seedDemo(ctx context.Context, svc *services.Services, stdout io.Writer) error {
	res, err := svc.SeedDemo(ctx)
	if err != nil {
		return err
	}
	if res.Created {
		fmt.Fprintln(stdout, "demo data created: merchant demo, 3 stores, 2 campaigns, 1,000 coupons")
	} else {
		fmt.Fprintln(stdout, "demo merchant already exists; minted fresh tokens")
	}
	fmt.Fprintf(stdout, "ADMIN token:   %s\nCLERK token:   %s (store SH001)\nFINANCE token: %s\n",
		res.AdminToken, res.ClerkToken, res.FinanceToken)
	return nil
}
