package services

import (
	"log/slog"
	"net"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"gorm.io/gorm"

	"coupond/models"
)

// Options configures the services. The zero value of each field picks a default.
type Options struct {
	// Now is the clock; tests move it. Defaults to time.Now in UTC.
	Now func() time.Time
	// HoldTimeout is how long a redemption may stay PROCESSING (a coupon
	// REDEEMING) before compensation resolves it. Default 2 minutes.
	HoldTimeout time.Duration
	// FulfilTimeout bounds one call of the fulfillment adapter. Default 10 s.
	FulfilTimeout time.Duration
	// Fulfiller is the business system; nil selects the builtin adapter.
	Fulfiller Fulfiller
	// Logger receives the services' logs; nil discards them.
	Logger *slog.Logger
	// CompensateEvery is the compensation job's interval; reconciliation
	// reports a coupon REDEEMING past its hold deadline plus this. Default 30 s.
	CompensateEvery time.Duration
	// LookupFailuresBeforeFinding is how many failed tries of compensation at
	// the adapter open a LOOKUP_FAILING finding. Default 5.
	LookupFailuresBeforeFinding int
	// ExternalOrders says orders live outside coupond's database (an adapter
	// other than the builtin one), so reconciliation skips its order checks.
	// It is implied for an adapter that says so (the webhook adapter's
	// OrdersOutside).
	ExternalOrders bool
	// Limits rate-limits redemption requests; the zero value imposes none.
	Limits Limits
	// TokenCacheTTL is how long an authenticated token is trusted before the
	// database is asked again; revocations reach other replicas within it.
	// 0 means no cache.
	TokenCacheTTL time.Duration
	// OnRedemption, if set, is told the outcome of every redeem and reserve
	// request (the flow status, or the error code) and how long it took, for
	// metrics.
	OnRedemption func(op models.Operation, outcome string, took time.Duration)
	// Cache, if set, is Redis shared by the replicas: it answers duplicate
	// request ids and hot coupons' scans before they reach the database (see
	// redisFront). Nothing in it decides an answer, and any error of it is
	// logged, counted (Redemptions.RedisStats) and otherwise ignored.
	Cache Cache
	// NoCouponLines runs every reserve request on its own, even when another
	// request of this process is working on the same coupon (see
	// couponLines): concurrent requests then race at the database, as they do
	// across replicas. For tests.
	NoCouponLines bool
	// CrashPoint, if set, is called at each CrashPoint a one-shot redemption or
	// a confirm passes, with its redemption number, so fault tests can stop
	// the process at exactly that moment. Production leaves it nil.
	CrashPoint func(point CrashPoint, redeemNo string)
	// AllowPrivateWebhooks accepts endpoint URLs on loopback and private
	// addresses (serve --allow-private-webhooks: on-premise installs, tests).
	AllowPrivateWebhooks bool
	// Resolver resolves endpoint hosts; nil is net.DefaultResolver.
	Resolver Resolver
	// ReadReplicas, registered on the database by models.OpenReadReplicas,
	// serve the reads that may be stale by their lag: lists, statements,
	// exports, the overview and reconciliation's checks. Everything that
	// decides stays on the primary. None: every read goes to the primary.
	ReadReplicas []models.ReadReplica
	// TracerProvider makes the spans of the redemption entry points; nil
	// traces nothing (serve --otlp-endpoint sets one).
	TracerProvider trace.TracerProvider
}

// CrashPoint names a moment of the redemption protocol after which a crash
// leaves a distinct state behind for compensation and same-id retries to
// resolve.
type CrashPoint string

// The crash points. On the builtin adapter a one-shot redemption commits its
// reserve, order and confirmation in one transaction, so only
// CrashAfterConfirmCommit is reached there; the other two exist on the
// two-transaction path of an adapter outside the database (webhook).
const (
	// CrashAfterReserveCommit: the reserve transaction committed (flow
	// PROCESSING, coupon REDEEMING) and the adapter has not been called.
	CrashAfterReserveCommit CrashPoint = "after-reserve-commit"
	// CrashAfterOrderCreated: the adapter answered with an order; the flow is
	// still PROCESSING and the coupon REDEEMING.
	CrashAfterOrderCreated CrashPoint = "after-order-created"
	// CrashAfterConfirmCommit: the confirmation committed (flow SUCCEEDED,
	// coupon REDEEMED) and the answer has not been returned to the caller.
	CrashAfterConfirmCommit CrashPoint = "after-confirm-commit"
)

// CrashPoints lists every crash point in protocol order.
var CrashPoints = []CrashPoint{CrashAfterReserveCommit, CrashAfterOrderCreated, CrashAfterConfirmCommit}

// Services bundles coupond's services over one database.
type Services struct {
	DB          *gorm.DB
	Redemptions *Redemptions
	Campaigns   *Campaigns
	Coupons     *Coupons
	Stores      *Stores
	Merchants   *Merchants
	Tokens      *Tokens
	Audit       *Audit
	Fulfiller   Fulfiller
	// Compensation resolves stuck redemptions (the compensation job).
	Compensation *Compensator
	// Reconciliation checks invariants, writes and resolves findings.
	Reconciliation *Reconciler
	// Statements computes daily statements.
	Statements *Statements
	// Expiry expires coupons whose validity ended (the expiry job).
	Expiry *Expirer
	// JobRuns runs jobs and records their runs.
	JobRuns *JobRuns
	// Webhooks manages webhook endpoints and reads events and deliveries.
	Webhooks *Webhooks
	// Replicas reports on the read replicas.
	Replicas *ReadReplicas
}

// New wires the services over db.
func New(db *gorm.DB, o Options) *Services {
	if o.Now == nil {
		o.Now = func() time.Time { return time.Now().UTC() }
	}
	if o.HoldTimeout <= 0 {
		o.HoldTimeout = 2 * time.Minute
	}
	if o.FulfilTimeout <= 0 {
		o.FulfilTimeout = 10 * time.Second
	}
	if o.TracerProvider == nil {
		o.TracerProvider = noop.NewTracerProvider()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Fulfiller == nil {
		o.Fulfiller = NewBuiltinFulfiller(db, o.Now)
	}
	if o.CompensateEvery <= 0 {
		o.CompensateEvery = 30 * time.Second
	}
	if o.LookupFailuresBeforeFinding <= 0 {
		o.LookupFailuresBeforeFinding = 5
	}
	// read is where the reads that may be stale go: a replica, or the
	// primary when there is none.
	read := db
	replicas := &ReadReplicas{replicas: o.ReadReplicas}
	if replicas.Configured() {
		read = models.Reading(db)
	}
	audit := &Audit{db: db, read: read, now: o.Now}
	t := &tills{}
	campaigns := &Campaigns{db: db, read: read, now: o.Now, audit: audit, tills: t}
	svc := &Services{
		DB:          db,
		Audit:       audit,
		Campaigns:   campaigns,
		Replicas:    replicas,
		Coupons:     &Coupons{db: db, read: read, now: o.Now, audit: audit, tills: t},
		Stores:      &Stores{db: db, now: o.Now, audit: audit},
		Merchants:   &Merchants{db: db, now: o.Now},
		Tokens:      newTokens(db, o, audit),
		Fulfiller:   o.Fulfiller,
		Redemptions: newRedemptions(db, o, campaigns, t),
	}
	svc.Compensation = &Compensator{db: db, now: o.Now, red: svc.Redemptions, fulfiller: o.Fulfiller, log: o.Logger,
		batchSize: 100, maxBatches: 50, lease: o.HoldTimeout, lookupFailures: int64(o.LookupFailuresBeforeFinding)}
	svc.Reconciliation = &Reconciler{db: db, read: read, now: o.Now, audit: audit, interval: o.CompensateEvery,
		ordersInDB: !o.ExternalOrders && !ordersOutside(o.Fulfiller), log: o.Logger, tills: t}
	if replicas.Configured() {
		svc.Reconciliation.lag = replicas.maxLag
	}
	svc.Statements = &Statements{db: db, read: read, now: o.Now, audit: audit}
	svc.Expiry = &Expirer{db: db, now: o.Now, audit: audit, batchSize: 500, maxBatches: 100}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	svc.Webhooks = &Webhooks{db: db, now: o.Now, audit: audit, allowPrivate: o.AllowPrivateWebhooks, resolver: o.Resolver,
		tills: t}
	svc.JobRuns = newJobRuns(db, read, o.Now, o.Logger, svc.Compensation, svc.Reconciliation, svc.Statements, svc.Expiry)
	return svc
}
