package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"gorm.io/gorm"

	"coupond/models"
	"coupond/services"
)

// metrics are coupond's Prometheus metrics.
type metrics struct {
	reg         *prometheus.Registry
	redemptions *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	jobRuns     *prometheus.CounterVec
	jobSeconds  *prometheus.HistogramVec
	// conns counts the HTTP connections open now.
	conns atomic.Int64
	// deliverer is the webhook worker of this process, when jobs run here.
	deliverer atomic.Pointer[services.Deliverer]
}

func newMetrics(db *gorm.DB, svc func() *services.Services, log *slog.Logger) (*metrics, error) {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.redemptions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "coupond_redemptions_total",
		Help: "Redeem and reserve requests by operation and outcome (flow status or error code)."}, []string{"operation", "outcome"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "coupond_redemption_duration_seconds",
		Help:    "Time to answer a redeem or reserve request, in the service.",
		Buckets: []float64{.001, .0025, .005, .01, .02, .05, .1, .25, .5, 1, 2.5, 10}}, []string{"operation"})
	m.jobRuns = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "coupond_job_runs_total",
		Help: "Background job runs by job and result."}, []string{"job", "result"})
	m.jobSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "coupond_job_duration_seconds",
		Help: "Duration of background job runs.", Buckets: prometheus.ExponentialBuckets(0.01, 4, 8)}, []string{"job"})
	holds := func(pick func(n int64, oldest time.Duration) float64) func() float64 {
		return func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			n, oldest, err := svc().Coupons.HoldStats(ctx, time.Now().UTC())
			if err != nil {
				return -1
			}
			return pick(n, oldest)
		}
	}
	findings := func(pick func(n int64, oldest time.Duration) float64) func() float64 {
		return func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			n, oldest, err := svc().Reconciliation.OpenFindingStats(ctx, time.Now().UTC())
			if err != nil {
				return -1
			}
			return pick(n, oldest)
		}
	}
	redis := func(name, help string, pick func(services.RedisStats) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "coupond_redis_" + name + "_total", Help: help},
			func() float64 { return float64(pick(svc().Redemptions.RedisStats())) })
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	m.reg.MustRegister(newWebhookCollector(svc, m.deliverer.Load, log))
	m.reg.MustRegister(m.redemptions, m.latency, m.jobRuns, m.jobSeconds,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "coupond_redeeming_coupons",
			Help: "Coupons held REDEEMING by a redemption whose outcome is not final."},
			holds(func(n int64, _ time.Duration) float64 { return float64(n) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "coupond_redeeming_oldest_seconds",
			Help: "Age of the oldest unfinished redemption; alert when it passes hold timeout plus the compensation interval."},
			holds(func(_ int64, d time.Duration) float64 { return d.Seconds() })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "coupond_findings_open",
			Help: "Reconciliation findings not yet resolved, all merchants."},
			findings(func(n int64, _ time.Duration) float64 { return float64(n) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "coupond_findings_open_oldest_seconds",
			Help: "Age of the oldest unresolved reconciliation finding; alert when finance has left one open past a day."},
			findings(func(_ int64, d time.Duration) float64 { return d.Seconds() })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "coupond_redemptions_coalesced_total",
			Help: "Redeem and reserve requests answered in their coupon's line behind an earlier request for it, instead of each asking the database: rejected in a batch because the coupon was taken for good, or given the known answer of their request id."},
			func() float64 { return float64(svc().Redemptions.Coalesced()) }),
		redis("hits", "Redeem and reserve requests Redis helped answer: duplicates that read their first flow instead of running, scans of a coupon marked taken for good.",
			func(r services.RedisStats) int64 { return r.Hits }),
		redis("misses", "Redis look-ups that found nothing to use (a fresh request id, a duplicate sent to the database).",
			func(r services.RedisStats) int64 { return r.Misses }),
		redis("waits", "Requests that waited through Redis for another: a duplicate for the first request of its id, a take for another replica's take of its coupon.",
			func(r services.RedisStats) int64 { return r.Waits }),
		redis("errors", "Redis calls that failed; each request went on without Redis.",
			func(r services.RedisStats) int64 { return r.Errors }),
		redis("fallbacks", "Steps of redeem and reserve requests that went on as if Redis were off: after a Redis error, a cached answer or marker the database contradicted, or a wait that ran out.",
			func(r services.RedisStats) int64 { return r.Fallbacks }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "coupond_http_open_connections",
			Help: "HTTP connections open now, active or idle; each holds buffers and a goroutine."},
			func() float64 { return float64(m.conns.Load()) }),
		collectors.NewDBStatsCollector(sqlDB, "coupond"),
		replicaCollector{svc: svc},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m, nil
}

func (m *metrics) observeRedemption(op models.Operation, outcome string, took time.Duration) {
	m.redemptions.WithLabelValues(string(op), outcome).Inc()
	m.latency.WithLabelValues(string(op)).Observe(took.Seconds())
}

// connState is the http.Server hook that counts open connections.
func (m *metrics) connState(_ net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		m.conns.Add(1)
	case http.StateClosed, http.StateHijacked:
		m.conns.Add(-1)
	}
}

func (m *metrics) observeJob(job string, took time.Duration, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.jobRuns.WithLabelValues(job, result).Inc()
	m.jobSeconds.WithLabelValues(job).Observe(took.Seconds())
}

// webhookCollector exports the outbox's figures, read from the database in
// the background, and the delivery attempts of this process.
type webhookCollector struct {
	svc       func() *services.Services
	deliverer func() *services.Deliverer
	// readOutbox reads the outbox's figures (services.Webhooks.Metrics),
	// and wait is how long a scrape waits for a reading in progress.
	readOutbox func(context.Context) (services.WebhookMetrics, error)
	wait       time.Duration
	events     *prometheus.Desc
	byStatus   *prometheus.Desc
	oldest     *prometheus.Desc
	attempts   *prometheus.Desc
	log        *slog.Logger

	mu sync.Mutex
	// last is the latest reading, taken at readAt (zero: none yet);
	// reading is closed when the reading in progress ends, nil when none
	// is.
	last    services.WebhookMetrics
	readAt  time.Time
	reading chan struct{}
}

func newWebhookCollector(svc func() *services.Services, deliverer func() *services.Deliverer, log *slog.Logger) *webhookCollector {
	read := func(ctx context.Context) (services.WebhookMetrics, error) { return svc().Webhooks.Metrics(ctx) }
	return &webhookCollector{svc: svc, deliverer: deliverer, log: log, readOutbox: read, wait: outboxMetricsWait,
		events: prometheus.NewDesc("coupond_webhook_events", "Events written to the outbox (committed changes only).", nil, nil),
		byStatus: prometheus.NewDesc("coupond_webhook_deliveries",
			"Webhook deliveries waiting (PENDING) or given up (FAILED); delivered ones are counted by coupond_webhook_attempts_total{outcome=\"delivered\"}.",
			[]string{"status"}, nil),
		oldest: prometheus.NewDesc("coupond_webhook_oldest_undelivered_seconds",
			"Age of the oldest undelivered event per endpoint.", []string{"merchant", "endpoint"}, nil),
		attempts: prometheus.NewDesc("coupond_webhook_attempts_total",
			"Delivery attempts of this process by outcome: delivered, retried, failed (given up), gone (410).", []string{"outcome"}, nil),
	}
}

func (c *webhookCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.events
	ch <- c.byStatus
	ch <- c.oldest
	ch <- c.attempts
}

// The outbox's figures (services.Webhooks.Metrics) are read at most every
// outboxMetricsEvery, when a scrape finds the last reading older, in the
// background: a scrape waits outboxMetricsWait at most for a reading in
// progress and otherwise shows the last one. A reading may take up to
// outboxMetricsTimeout: the first of a process counts every event of the
// outbox once (the later ones only the events since), which on a large
// outbox takes longer than a scrape should wait.
const (
	outboxMetricsEvery   = 30 * time.Second
	outboxMetricsWait    = 2 * time.Second
	outboxMetricsTimeout = 5 * time.Minute
)

// outbox returns the latest reading of the outbox's figures, and false
// when there has been none yet; it starts a new reading when the last is
// older than outboxMetricsEvery.
func (c *webhookCollector) outbox() (services.WebhookMetrics, bool) {
	c.mu.Lock()
	done := c.reading
	if done == nil && (c.readAt.IsZero() || time.Since(c.readAt) >= outboxMetricsEvery) {
		done = make(chan struct{})
		c.reading = done
		go c.read(done)
	}
	c.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-time.After(c.wait):
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last, !c.readAt.IsZero()
}

// read takes one reading of the outbox's figures and closes done; a reading
// that fails keeps the last one, and the next scrape tries again.
func (c *webhookCollector) read(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), outboxMetricsTimeout)
	defer cancel()
	m, err := c.readOutbox(ctx)
	c.mu.Lock()
	if err == nil {
		c.last, c.readAt = m, time.Now()
	} else {
		c.log.Error("read the outbox's metrics", "err", err)
	}
	c.reading = nil
	c.mu.Unlock()
	close(done)
}

func (c *webhookCollector) Collect(ch chan<- prometheus.Metric) {
	if d := c.deliverer(); d != nil {
		s := d.Stats()
		for outcome, n := range map[string]int64{"delivered": s.Delivered, "retried": s.Retried, "failed": s.Failed, "gone": s.Gone} {
			ch <- prometheus.MustNewConstMetric(c.attempts, prometheus.CounterValue, float64(n), outcome)
		}
	}
	if c.svc() == nil {
		return
	}
	m, ok := c.outbox()
	if !ok {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.events, prometheus.GaugeValue, float64(m.Events))
	for _, st := range []models.DeliveryStatus{models.DeliveryPending, models.DeliveryFailed} {
		ch <- prometheus.MustNewConstMetric(c.byStatus, prometheus.GaugeValue, float64(m.Deliveries[st]), string(st))
	}
	now := time.Now().UTC()
	for _, o := range m.Oldest {
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, now.Sub(o.Oldest).Seconds(),
			strconv.FormatInt(o.MerchantID, 10), strconv.FormatInt(o.EndpointID, 10))
	}
}

var (
	replicaLagSeconds = prometheus.NewDesc("coupond_read_replica_lag_seconds",
		"How old a read replica's data may be: 0 when it has replayed all the WAL it received, else the time since the last transaction it replayed committed on the primary. Lists, statements, exports, the overview and reconciliation read from the replicas and may be this stale.",
		[]string{"replica"}, nil)
	replicaLagBytes = prometheus.NewDesc("coupond_read_replica_lag_bytes",
		"WAL a read replica received and has not replayed yet.", []string{"replica"}, nil)
	replicaUp = prometheus.NewDesc("coupond_read_replica_up",
		"1 when the read replica answered and is in recovery (a replica), 0 otherwise.", []string{"replica"}, nil)
	replicaServing = prometheus.NewDesc("coupond_read_replica_serving",
		"1 while the read replica serves reads; 0 after the health check took it out (down, not in recovery, or lagging more than --read-max-lag), when its reads go to the other replicas or the primary.", []string{"replica"}, nil)
	replicaPaused = prometheus.NewDesc("coupond_read_replica_replay_paused",
		"1 while the read replica's WAL replay is paused (pg_wal_replay_pause).", []string{"replica"}, nil)
)

// replicaCollector asks each read replica for its replication status at
// every scrape.
type replicaCollector struct {
	svc func() *services.Services
}

func (c replicaCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- replicaLagSeconds
	ch <- replicaLagBytes
	ch <- replicaUp
	ch <- replicaServing
	ch <- replicaPaused
}

func (c replicaCollector) Collect(ch chan<- prometheus.Metric) {
	svc := c.svc()
	if svc == nil {
		return
	}
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	for _, st := range svc.Replicas.States(context.Background()) {
		ch <- prometheus.MustNewConstMetric(replicaUp, prometheus.GaugeValue, b(st.Up && st.InRecovery), st.Name)
		ch <- prometheus.MustNewConstMetric(replicaServing, prometheus.GaugeValue, b(st.Serving), st.Name)
		if !st.Up {
			continue
		}
		ch <- prometheus.MustNewConstMetric(replicaLagSeconds, prometheus.GaugeValue, st.LagSeconds, st.Name)
		ch <- prometheus.MustNewConstMetric(replicaLagBytes, prometheus.GaugeValue, float64(st.LagBytes), st.Name)
		ch <- prometheus.MustNewConstMetric(replicaPaused, prometheus.GaugeValue, b(st.ReplayPaused), st.Name)
	}
}
