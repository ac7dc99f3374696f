package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"coupond/graph"
	"coupond/models"
	"coupond/services"
	"coupond/web"
)

type serveConfig struct {
	addr          string
	databaseURL   string
	demo          bool
	playground    bool
	holdTimeout   time.Duration
	fulfilTimeout time.Duration
	maxConns      int
	logLevel      string
	shutdownGrace time.Duration
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", stderr)
	var c serveConfig
	fs.StringVar(&c.addr, "addr", envOr("addr", ":8080"), "listen address (env COUPOND_ADDR)")
	dbURL := fs.databaseURL()
	demo := fs.Bool("demo", false, "on an empty database, create merchant demo with stores, campaigns and coupons, and print sign-in tokens")
	playground := fs.Bool("playground", false, "serve the GraphQL playground at /playground and allow introspection")
	hold := fs.Duration("hold-timeout", 2*time.Minute, "how long a redemption may hold a coupon before compensation resolves it")
	fulfil := fs.Duration("fulfil-timeout", 10*time.Second, "deadline of one call to the fulfillment adapter")
	maxConns := fs.Int("max-conns", 0, "database connection pool size (0: 16 for PostgreSQL, 8 for SQLite)")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	grace := fs.Duration("shutdown-grace", 20*time.Second, "how long to drain requests on shutdown")
	if err := fs.parse(args); err != nil {
		return err
	}
	c.databaseURL, c.demo, c.playground, c.holdTimeout, c.fulfilTimeout = *dbURL, *demo, *playground, *hold, *fulfil
	c.maxConns, c.logLevel, c.shutdownGrace = *maxConns, *level, *grace
	return serve(ctx, c, stdout, newLogger(stderr, c.logLevel))
}

func envOr(flagName, def string) string {
	if v, ok := lookupEnv(envName(flagName)); ok {
		return v
	}
	return def
}

// serve runs the server until ctx is cancelled, then drains: readiness turns
// 503 at once so load balancers stop sending, in-flight requests finish within
// the grace period, and the database closes last.
func serve(ctx context.Context, c serveConfig, stdout io.Writer, log *slog.Logger) error {
	db, err := openDB(ctx, c.databaseURL, models.OpenOptions{MaxOpenConns: c.maxConns, Logger: log})
	if err != nil {
		return err
	}
	defer models.Close(db)
	svc := services.New(db, services.Options{HoldTimeout: c.holdTimeout, FulfilTimeout: c.fulfilTimeout, Logger: log})
	if c.demo {
		if err := seedDemo(ctx, svc, stdout); err != nil {
			return err
		}
	}
	var draining atomic.Bool
	mux := http.NewServeMux()
	mux.Handle("/graphql", graph.NewHandler(svc, graph.Options{Introspection: c.playground, Logger: log}))
	if c.playground {
		mux.Handle("/playground", web.PlaygroundHandler())
		mux.Handle("/playground/", web.PlaygroundHandler())
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /readyz", readyz(db, &draining))
	mux.Handle("/", web.Handler())

	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.addr, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	log.Info("coupond serving", "addr", ln.Addr().String(), "database", string(models.DialectOf(c.databaseURL)))
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
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
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
