package services

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"gorm.io/gorm"

	"coupond/models"
	"coupond/orderwire"
)

// Delivery limits of the Standard Webhooks contract coupond keeps.
const (
	// WebhookTimeout bounds one attempt: connect, send and the answer.
	WebhookTimeout = 10 * time.Second
	// WebhookBodyLimit is how much of an answer is read and stored.
	WebhookBodyLimit = 64 << 10
	// WebhookRetryFor is how long a delivery is retried, and how long an
	// endpoint may fail every attempt before it is disabled.
	WebhookRetryFor = 72 * time.Hour
)

// DefaultRetrySchedule is the wait after the first, second, ... failed
// attempt; the last repeats. Each wait gets up to 20% jitter.
var DefaultRetrySchedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour}

// DelivererOptions configures a Deliverer; zero values pick the defaults.
type DelivererOptions struct {
	// Concurrency bounds the attempts in flight per endpoint in this process
	// (serve --webhook-concurrency). Default DefaultWebhookConcurrency.
	Concurrency int
	// Poll is how often endpoints with due deliveries are looked for while
	// nothing else wakes the worker. Default 100 ms.
	Poll time.Duration
	// Schedule is the retry schedule; default DefaultRetrySchedule.
	Schedule []time.Duration
	// Timeout bounds an attempt; default WebhookTimeout.
	Timeout time.Duration
	// AllowPrivate lets attempts reach loopback and private addresses
	// (serve --allow-private-webhooks).
	AllowPrivate bool
	// Yield, when set, reports whether the tills are waiting for the
	// database (Redemptions.Waiting). While they are, Run claims at most
	// every yieldGap, so delivery gives the database to the redemptions
	// and catches up once they stop queueing.
	Yield func() bool
}

// DefaultWebhookConcurrency is the default bound of attempts in flight per
// endpoint in one process. One attempt to a receiver nearby takes a few
// milliseconds, so 16 keep up with well over a thousand events a second per
// endpoint; a receiver that answers in 100 ms still gets 160 a second from
// each replica.
const DefaultWebhookConcurrency = 16

// recordBatchMax bounds how many attempts' outcomes one transaction records.
const recordBatchMax = 256

// leaseSpare is how much longer than an attempt's Timeout a claim's lease
// runs, and leaseMargin the least of it an attempt must have left when it
// starts (for clocks of replicas that disagree a little).
const (
	leaseSpare  = 30 * time.Second
	leaseMargin = 5 * time.Second
)

// claimAhead is how many times its Concurrency an endpoint's claims may hold
// at once in this process: attempts beyond the endpoint's slots wait in
// the process for a slot, under their lease, so one claim takes the next
// tens of due deliveries instead of the few slots that just freed, and
// under load each claim's statement and commit serve many events.
const claimAhead = 4

// recordLinger is how long the first outcome waits for others before it is
// written, and claimGap the least time between two claims that outcomes
// wake (a poll claims whenever it comes). At a thousand events a second
// they turn a statement and a commit per few attempts into one per ten or
// more, for a few milliseconds of delivery lag.
const (
	recordLinger = 25 * time.Millisecond
	claimGap     = 5 * time.Millisecond
)

// yieldGap is the least time between two rounds of claims while the tills
// wait for the database (DelivererOptions.Yield). Each round still claims
// up to claimAhead times Concurrency attempts per endpoint, so delivery
// never stops: beside saturated tills it goes on at up to 256 events a
// second per endpoint, and the rest wait, due, for a moment when the
// redemptions leave the database some room. Delivery is background work:
// a webhook a few seconds late costs nobody anything, a redemption that
// waits costs a customer at the till. At the knee the claims, the sends
// and the outcomes' updates took about a tenth of the capacity the tills
// needed (docs/TUNING.md).
const yieldGap = 250 * time.Millisecond

// The endpoints' floors (models.PendingFloors) are read at most every
// floorEvery, from the last floors on, and every floorFullEvery from each
// endpoint's first delivery. A floor is never later than floorMargin
// before it was read: a transaction still open then may commit a delivery
// due a little earlier. One that commits later than that, or from a
// replica whose clock is behind by more, is claimed after the next full
// reading at the latest.
const (
	floorEvery     = time.Second
	floorFullEvery = 30 * time.Second
	floorMargin    = 3 * time.Second
)

// statsEvery is how often the search rounds check, on PostgreSQL, whether
// the statistics of deliveryTables are stale (refreshStats), and statsShare
// the share of a table's rows changed since its last ANALYZE past which
// the worker analyzes it itself: five times what autovacuum waits for, so
// where autovacuum runs it is there first.
const (
	statsEvery = 2 * time.Second
	statsShare = 0.5
)

// deliveryTables are the tables the worker's statements read.
var deliveryTables = []string{"webhook_deliveries", "outbox_events"}

// DeliveryStats counts attempts by outcome in this process.
type DeliveryStats struct {
	Delivered, Retried, Failed, Gone, Disabled int64
}

// Deliverer sends the outbox's deliveries to their endpoints, signed per
// Standard Webhooks. Every replica with jobs runs one.
//
// How it keeps up: it finds the endpoints with due deliveries (one query,
// every Poll, from each endpoint's floor on: see readFloors), and claims each endpoint's due deliveries in one statement,
// up to claimAhead times the endpoint's slots in this process
// (models.ClaimDeliveries: a conditional update, SKIP LOCKED on PostgreSQL,
// so replicas claiming at once take different rows and no attempt is sent
// twice); at most Concurrency of them are sent at once, the others wait in
// the process for a slot. An attempt that ends frees its claim and, once
// half the endpoint's claims are free, wakes the worker to claim again at
// once, without waiting for the next poll (claims woken so come at most
// every claimGap). On PostgreSQL the claim's statement also returns the
// events. Outcomes are recorded together: the first attempt to finish waits
// recordLinger, then records its own outcome and those that finished
// meanwhile, one statement for the lot when they are all 2xx at endpoints
// not failing, else one transaction (no background goroutine). A replica
// that dies mid-attempt leaves a lease that runs out, after which the
// attempt is sent again with the same webhook-id; one that shuts down sends
// what it has started and hands the claims it has not started back.
type Deliverer struct {
	db     *gorm.DB
	now    func() time.Time
	log    *slog.Logger
	client *http.Client
	o      DelivererOptions

	wake chan struct{}

	mu sync.Mutex
	// inflight counts the endpoint's attempts claimed in this process and
	// not yet ended; slots bounds those being sent (Concurrency each).
	inflight map[[2]int64]int
	slots    map[[2]int64]chan struct{}
	// failing notes the endpoints whose failure run (failing_since) was
	// open when last read or written here: a success there takes the
	// transaction that ends it.
	failing map[[2]int64]bool
	// endpoints are the endpoints' rows as the last search read them
	// (URL, secrets), for the claims between searches.
	endpoints map[[2]int64]*models.WebhookEndpoint
	// more holds the endpoints that may have more due deliveries than
	// their last claim took: a wake claims for them without a new search.
	more map[[2]int64]bool
	// floors are the endpoints' floors: their due deliveries are searched
	// and claimed from there on (see the floor constants).
	floors   map[[2]int64]time.Time
	floorsAt time.Time
	fullAt   time.Time
	// pending tells whether the last reading of the floors found a PENDING
	// delivery at any endpoint: only then is there a claim to plan.
	pending bool
	statsAt time.Time
	// analyzing is set while an analysis refreshStats started runs.
	analyzing atomic.Bool
	wg        sync.WaitGroup

	rmu       sync.Mutex
	finished  []finishedAttempt
	recording bool

	delivered, retried, failed, gone, disabled atomic.Int64
}

// finishedAttempt is an attempt sent and waiting to be recorded.
type finishedAttempt struct {
	ep   *models.WebhookEndpoint
	uid  string
	x    models.WebhookDelivery
	out  models.AttemptOutcome
	ok   bool
	gone bool
}

// NewDeliverer returns a Deliverer over db.
func NewDeliverer(db *gorm.DB, now func() time.Time, log *slog.Logger, o DelivererOptions) *Deliverer {
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultWebhookConcurrency
	}
	if o.Poll <= 0 {
		o.Poll = 100 * time.Millisecond
	}
	if len(o.Schedule) == 0 {
		o.Schedule = DefaultRetrySchedule
	}
	if o.Timeout <= 0 {
		o.Timeout = WebhookTimeout
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dialer := &net.Dialer{Timeout: o.Timeout, Control: func(_, address string, _ syscall.RawConn) error {
		if o.AllowPrivate {
			return nil
		}
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !PublicAddr(ap.Addr()) {
			return fmt.Errorf("refused to connect to non-public address %s", address)
		}
		return nil
	}}
	transport := &http.Transport{DialContext: dialer.DialContext, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: o.Concurrency,
		IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: o.Timeout, Proxy: nil}
	client := &http.Client{Transport: transport, Timeout: o.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &Deliverer{db: db, now: now, log: log, client: client, o: o, wake: make(chan struct{}, 1),
		inflight: map[[2]int64]int{}, slots: map[[2]int64]chan struct{}{}, failing: map[[2]int64]bool{}, endpoints: map[[2]int64]*models.WebhookEndpoint{}, more: map[[2]int64]bool{}}
}

// Stats returns the attempts' outcomes so far in this process.
func (d *Deliverer) Stats() DeliveryStats {
	return DeliveryStats{Delivered: d.delivered.Load(), Retried: d.retried.Load(), Failed: d.failed.Load(),
		Gone: d.gone.Load(), Disabled: d.disabled.Load()}
}

// Wake makes Run claim again now instead of at its next poll; it never
// blocks.
func (d *Deliverer) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends, then waits for the attempts in flight and
// their records. It searches for endpoints with due deliveries every Poll;
// woken in between (an attempt ended, Wake), it claims again for the
// endpoints whose last claim may have left work behind.
func (d *Deliverer) Run(ctx context.Context) {
	t := time.NewTicker(d.o.Poll)
	defer t.Stop()
	search := true
	for {
		last := time.Now()
		if _, err := d.round(ctx, search); err != nil && ctx.Err() == nil {
			d.log.ErrorContext(ctx, "webhook delivery", "err", err)
		}
		select {
		case <-ctx.Done():
			d.wg.Wait()
			return
		case <-t.C:
			search = true
		case <-d.wake:
			search = false
		}
		if wait := d.gap(search) - time.Since(last); wait > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
	}
}

// gap is the least time between the start of the last round and the next:
// none before a search that the poll starts and claimGap before a round
// that an ended attempt woke, or yieldGap before either while the tills
// wait for the database.
func (d *Deliverer) gap(search bool) time.Duration {
	switch {
	case d.o.Yield != nil && d.o.Yield():
		return yieldGap
	case search:
		return 0
	}
	return claimGap
}

// Wait waits for the attempts RunOnce started and for their outcomes to be
// recorded, and for an analysis of the worker's tables it started.
func (d *Deliverer) Wait() { d.wg.Wait() }

// RunOnce finds the endpoints with due deliveries, claims as many of each
// one's as it has free slots for and starts their attempts, and returns how
// many it started.
func (d *Deliverer) RunOnce(ctx context.Context) (int, error) { return d.round(ctx, true) }

// round claims and starts attempts: for every endpoint with due deliveries
// (search), or for the endpoints noted in more.
func (d *Deliverer) round(ctx context.Context, search bool) (int, error) {
	db := d.db.WithContext(ctx)
	var eps []*models.WebhookEndpoint
	if search {
		if err := d.readFloors(db); err != nil {
			return 0, err
		}
		if d.pending {
			d.refreshStats(ctx, db)
		}
		d.mu.Lock()
		floors := d.floors
		d.mu.Unlock()
		keys, err := models.DueEndpoints(db, d.now(), floors)
		if err != nil || len(keys) == 0 {
			return 0, err
		}
		rows, err := models.WebhookEndpointsByID(db, keys)
		if err != nil {
			return 0, err
		}
		d.mu.Lock()
		for i := range rows {
			k := [2]int64{rows[i].MerchantID, rows[i].ID}
			eps = append(eps, &rows[i])
			d.endpoints[k] = &rows[i]
			d.failing[k] = rows[i].FailingSince != nil
		}
		d.mu.Unlock()
	} else {
		d.mu.Lock()
		for k := range d.more {
			if ep := d.endpoints[k]; ep != nil {
				eps = append(eps, ep)
			} else {
				delete(d.more, k)
			}
		}
		d.mu.Unlock()
	}
	started := 0
	for _, ep := range eps {
		n, err := d.claim(ctx, ep)
		started += n
		if err != nil {
			return started, err
		}
	}
	return started, nil
}

// refreshStats starts an analysis of deliveryTables on PostgreSQL when their
// statistics are stale (models.AnalyzeStale), at most every statsEvery and
// one at a time; only the search rounds of one goroutine call it, and only
// while some endpoint has a PENDING delivery, so before the claims it plans.
// Every redemption writes its event whether or not an endpoint is
// subscribed, and with none the worker analyzed outbox_events each time it
// had grown by half, up to 3 s of reading a time, for no claim at all; the
// tills' p99 stalled with those ANALYZEs (docs/TUNING.md). The analysis runs
// beside the rounds, not in them: a paced ANALYZE of a table of millions of
// events takes seconds, and a round waiting for it claims nothing for as
// long.
//
// Why the worker analyzes at all: a connection prepares the claim's
// statement once, and after five runs PostgreSQL may keep one plan for it,
// made from the statistics of the time, until an ANALYZE of its tables
// replaces it. Made while webhook_deliveries held a page of rows, that plan
// reads the whole table for every due delivery to look for an earlier event
// of its coupon: claims then grow with the backlog times the table, and in
// one run 30,000 deliveries waited for over five minutes behind one claim,
// on a host with autovacuum off (docs/TUNING.md). Autovacuum analyzes a
// growing table in time, and where it does not this does instead. A
// failure is logged and delivery goes on. Wait waits for an analysis
// started.
func (d *Deliverer) refreshStats(ctx context.Context, db *gorm.DB) {
	if models.DialectOfDB(db) != models.Postgres {
		return
	}
	now := d.now()
	if now.Sub(d.statsAt) < statsEvery && now.After(d.statsAt) {
		return
	}
	if !d.analyzing.CompareAndSwap(false, true) {
		return
	}
	d.statsAt = now
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		defer d.analyzing.Store(false)
		skipped, err := models.AnalyzeStale(db, deliveryTables, statsShare)
		switch {
		case err != nil && ctx.Err() == nil:
			d.log.WarnContext(ctx, "webhook delivery: statistics not refreshed", "err", err)
		case len(skipped) > 0:
			d.log.InfoContext(ctx, "webhook delivery: stale statistics not refreshed, a vacuum holds the tables", "tables", skipped)
		}
	}()
}

// readFloors reads the endpoints' floors again when they are floorEvery
// old: from the floors it has, or from the start when the last full reading
// is floorFullEvery old. Only the search rounds of one goroutine call it.
func (d *Deliverer) readFloors(db *gorm.DB) error {
	now := d.now()
	if d.floors != nil && now.Sub(d.floorsAt) < floorEvery && now.After(d.floorsAt) {
		return nil
	}
	full := d.floors == nil || now.Sub(d.fullAt) >= floorFullEvery || !now.After(d.fullAt)
	from := d.floors
	if full {
		from = nil
	}
	got, err := models.PendingFloors(db, from)
	if err != nil {
		return err
	}
	cut := now.Add(-floorMargin)
	floors := make(map[[2]int64]time.Time, len(got))
	pending := false
	for k, t := range got {
		pending = pending || t != nil
		floors[k] = cut
		if t != nil && t.Before(cut) {
			floors[k] = *t
		}
	}
	d.mu.Lock()
	d.floors = floors
	d.mu.Unlock()
	d.floorsAt = now
	d.pending = pending
	if full {
		d.fullAt = now
	}
	return nil
}

// claim claims up to the endpoint's free claims (claimAhead times its
// slots, less those it holds) of its due deliveries and starts their
// attempts, each of which waits for one of the endpoint's slots.
//
// Every claim's lease is Timeout + 30 s, as if it were sent at once, so a
// process that dies leaves its claims to the others as soon as before
// claims ran ahead. An attempt that waited for its slot so long that it
// could not end well within its lease is not sent: it is handed back and
// claimed again (at a receiver nearby the wait is milliseconds; at one that
// takes the whole Timeout per attempt, the last of claimAhead rounds).
func (d *Deliverer) claim(ctx context.Context, ep *models.WebhookEndpoint) (int, error) {
	k := [2]int64{ep.MerchantID, ep.ID}
	d.mu.Lock()
	held := d.inflight[k]
	free := d.o.Concurrency*claimAhead - held
	if free <= 0 {
		// Every claim is taken: claim again when they free up.
		d.more[k] = true
		d.mu.Unlock()
		return 0, nil
	}
	d.inflight[k] += free
	from := d.floors[k]
	slots := d.slots[k]
	if slots == nil {
		slots = make(chan struct{}, d.o.Concurrency)
		d.slots[k] = slots
	}
	d.mu.Unlock()
	now := d.now()
	lease := now.Add(d.o.Timeout + leaseSpare)
	xs, err := models.ClaimDeliveries(d.db.WithContext(ctx), ep.MerchantID, ep.ID, from, now, lease, free)
	d.mu.Lock()
	if len(xs) == free {
		d.more[k] = true
	} else {
		delete(d.more, k)
	}
	d.mu.Unlock()
	for i := range xs {
		x := &xs[i]
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			acquired := false
			select {
			case slots <- struct{}{}:
				acquired = true
			case <-ctx.Done():
			}
			// Shutting down before the attempt started (a slot
			// and the end may come at once; the end wins), or too
			// late for the lease: hand the claim back rather than
			// make it wait for the lease or risk a second sender.
			if ctx.Err() != nil || d.now().Add(d.o.Timeout+leaseMargin).After(lease) {
				if acquired {
					<-slots
				}
				d.unclaim(x.WebhookDelivery)
				d.releaseSlot(k)
				return
			}
			d.attempt(context.WithoutCancel(ctx), ep, &x.Event, &x.WebhookDelivery, slots)
		}()
	}
	for range free - len(xs) {
		d.releaseSlot(k)
	}
	return len(xs), err
}

// releaseSlot frees one of the endpoint's claims; once half of them are
// free and the endpoint may have more due, it wakes Run, so claims come in
// batches rather than one statement per attempt.
func (d *Deliverer) releaseSlot(k [2]int64) {
	d.mu.Lock()
	d.inflight[k]--
	n := d.inflight[k]
	if n <= 0 {
		delete(d.inflight, k)
	}
	_, more := d.more[k]
	d.mu.Unlock()
	if more && n <= d.o.Concurrency*claimAhead/2 {
		d.Wake()
	}
}

// unclaim hands back a claimed attempt that was never sent, so that it is
// due again at once instead of when its lease runs out.
func (d *Deliverer) unclaim(x models.WebhookDelivery) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := models.ReleaseClaim(d.db.WithContext(ctx), &x); err != nil {
		d.log.Error("hand back webhook claim", "endpoint", x.EndpointID, "event", x.EventID, "err", err)
	}
}

// Envelope is the JSON body of every delivery and of the events query.
type Envelope struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	CreatedAt  string          `json:"createdAt"`
	MerchantID string          `json:"merchantId"`
	Data       json.RawMessage `json:"data"`
}

// EnvelopeOf is the payload of ev.
func EnvelopeOf(ev *models.OutboxEvent) Envelope {
	return Envelope{ID: ev.UID, Type: ev.Type, CreatedAt: ev.CreatedAt.UTC().Format(time.RFC3339Nano),
		MerchantID: strconv.FormatInt(ev.MerchantID, 10), Data: json.RawMessage(ev.Data)}
}

// MarshalEnvelope is the JSON of ev's envelope as it is delivered, with &,
// < and > left as they are (links in the data stay readable).
func MarshalEnvelope(ev *models.OutboxEvent) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(EnvelopeOf(ev)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// SignWebhook is the Standard Webhooks signature of one message under each
// of secrets (whsec_ and base64): "v1," and the base64 HMAC-SHA256 of
// id.timestamp.body keyed by the decoded secret, space-separated.
func SignWebhook(secrets []string, id string, ts int64, body []byte) string {
	var sigs []string
	for _, s := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		if err != nil {
			continue
		}
		sigs = append(sigs, orderwire.SignStandard(key, id, strconv.FormatInt(ts, 10), body))
	}
	return strings.Join(sigs, " ")
}

// secretsAt are the secrets that sign at now: the current one, and the
// previous one during its overlap.
func secretsAt(ep *models.WebhookEndpoint, now time.Time) []string {
	out := []string{ep.Secret}
	if ep.PreviousSecret != nil && ep.PreviousUntil != nil && now.Before(*ep.PreviousUntil) {
		out = append(out, *ep.PreviousSecret)
	}
	return out
}

// attempt sends the claimed attempt x, which holds one of slots, frees
// them and records its outcome (see record).
func (d *Deliverer) attempt(ctx context.Context, ep *models.WebhookEndpoint, ev *models.OutboxEvent, x *models.WebhookDelivery, slots chan struct{}) {
	k := [2]int64{ep.MerchantID, ep.ID}
	body, err := MarshalEnvelope(ev)
	if err != nil {
		<-slots
		d.releaseSlot(k)
		d.log.ErrorContext(ctx, "encode webhook event", "event", ev.UID, "err", err)
		return
	}
	now := d.now()
	status, resp, sendErr := d.send(ctx, ep, ev.UID, now, body)
	done := d.now()
	<-slots
	d.releaseSlot(k)
	out := models.AttemptOutcome{Now: done, Response: resp}
	if status != 0 {
		out.StatusCode = &status
	}
	if sendErr != nil {
		msg := sendErr.Error()
		out.Error = &msg
	}
	ok := status >= 200 && status < 300
	gone := status == http.StatusGone
	switch {
	case ok:
		out.Status = models.DeliveryDelivered
	case gone:
		out.Status = models.DeliveryFailed
	case done.Sub(x.CreatedAt) >= WebhookRetryFor:
		out.Status = models.DeliveryFailed
	default:
		out.Status, out.NextAttemptAt = models.DeliveryPending, done.Add(d.backoff(x.Attempts))
	}
	if out.NextAttemptAt.IsZero() {
		out.NextAttemptAt = done
	}
	d.record(ctx, finishedAttempt{ep: ep, uid: ev.UID, x: *x, out: out, ok: ok, gone: gone})
}

// record queues f's outcome to be written. The first caller that finds
// nobody writing waits recordLinger, then writes the queue, its own outcome
// and whatever others queued meanwhile, in transactions of up to recordBatchMax outcomes, until
// the queue is empty; the others return at once. The writer's attempt stays
// counted in the wait group until then, so Wait returns only when every
// outcome is recorded. Once recorded, an endpoint's next events of the same
// coupons are due: the worker is woken to claim them.
func (d *Deliverer) record(ctx context.Context, f finishedAttempt) {
	d.rmu.Lock()
	d.finished = append(d.finished, f)
	if d.recording {
		d.rmu.Unlock()
		return
	}
	d.recording = true
	d.rmu.Unlock()
	time.Sleep(recordLinger)
	d.rmu.Lock()
	for {
		batch := d.finished[:min(len(d.finished), recordBatchMax)]
		if len(batch) == 0 {
			d.finished = nil
			d.recording = false
			d.rmu.Unlock()
			return
		}
		d.finished = d.finished[len(batch):]
		d.rmu.Unlock()
		d.writeOutcomes(ctx, batch)
		d.mu.Lock()
		for _, f := range batch {
			d.more[[2]int64{f.ep.MerchantID, f.ep.ID}] = true
		}
		d.mu.Unlock()
		d.Wake()
		d.rmu.Lock()
	}
}

// writeOutcomes records a batch of outcomes. A batch of 2xx answers from
// endpoints not known to be failing (the usual case) is one statement,
// models.FinishAttempts, and its commit: there is no failure run to end and
// nothing to disable. Any other batch takes a transaction that also ends or
// starts the endpoints' failure runs and disables what has to be; the
// deliveries' outcomes are still one statement. If that fails, each outcome
// is recorded alone, so one bad row does not hold back the others.
//
// Whether an endpoint is failing is what this process last read (every
// search reads the endpoints) or wrote; a success that misses a failure
// run another replica opened since leaves it open until the next success
// after the next search, which ends it.
//
// Either way the outcomes commit without waiting for their WAL flush on
// PostgreSQL (models.FinishAttempts turns synchronous_commit off for its
// transaction): an outcome lost to a database crash leaves its delivery
// PENDING under the attempt's lease, and the attempt is sent again with the
// same webhook-id once the lease runs out, which at-least-once delivery
// allows; the claim that starts an attempt commits durably. At the tills'
// rates this takes a WAL flush per batch off the disk they wait on.
func (d *Deliverer) writeOutcomes(ctx context.Context, batch []finishedAttempt) {
	db := d.db.WithContext(ctx)
	defer d.count(batch)
	if d.allDelivered(batch) {
		rows := make([]models.FinishedAttempt, len(batch))
		for i := range batch {
			rows[i] = models.FinishedAttempt{Delivery: &batch[i].x, Outcome: batch[i].out}
		}
		if _, err := models.FinishAttempts(db, rows); err == nil {
			return
		}
		// Fall through: the transaction below records each one alone if
		// the batch fails again.
	}
	var failing map[[2]int64]bool
	write := func(tx *gorm.DB, batch []finishedAttempt) (int64, error) {
		rows := make([]models.FinishedAttempt, len(batch))
		for i := range batch {
			rows[i] = models.FinishedAttempt{Delivery: &batch[i].x, Outcome: batch[i].out}
		}
		if _, err := models.FinishAttempts(tx, rows); err != nil {
			return 0, err
		}
		var disabled int64
		cleared := map[[2]int64]bool{}
		failing = map[[2]int64]bool{}
		for i := range batch {
			n, err := d.noteOutcome(tx, &batch[i], cleared)
			if err != nil {
				return 0, err
			}
			failing[[2]int64{batch[i].ep.MerchantID, batch[i].ep.ID}] = !batch[i].ok
			disabled += n
		}
		return disabled, nil
	}
	// noteFailing keeps what a committed transaction left of the
	// endpoints' failure runs.
	noteFailing := func() {
		d.mu.Lock()
		for k, v := range failing {
			d.failing[k] = v
		}
		d.mu.Unlock()
	}
	var disabled int64
	err := db.Transaction(func(tx *gorm.DB) (err error) {
		disabled, err = write(tx, batch)
		return err
	})
	if err == nil {
		noteFailing()
	} else if len(batch) > 1 {
		disabled = 0
		for i := range batch {
			one := batch[i : i+1]
			err := db.Transaction(func(tx *gorm.DB) error {
				n, err := write(tx, one)
				disabled += n
				return err
			})
			if err != nil {
				d.log.ErrorContext(ctx, "record webhook attempt", "endpoint", one[0].ep.ID, "event", one[0].uid, "err", err)
			} else {
				noteFailing()
			}
		}
	} else {
		d.log.ErrorContext(ctx, "record webhook attempt", "endpoint", batch[0].ep.ID, "event", batch[0].uid, "err", err)
	}
	d.disabled.Add(disabled)
}

// allDelivered reports whether every attempt of batch got a 2xx from an
// endpoint not known to be failing.
func (d *Deliverer) allDelivered(batch []finishedAttempt) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, f := range batch {
		if !f.ok || d.failing[[2]int64{f.ep.MerchantID, f.ep.ID}] {
			return false
		}
	}
	return true
}

// count adds a recorded batch's outcomes to the process's stats.
func (d *Deliverer) count(batch []finishedAttempt) {
	for _, f := range batch {
		switch {
		case f.ok:
			d.delivered.Add(1)
		case f.gone:
			d.gone.Add(1)
		case f.out.Status == models.DeliveryFailed:
			d.failed.Add(1)
		default:
			d.retried.Add(1)
		}
	}
}

// noteOutcome records an attempt's outcome on tx in the endpoint's failure
// run, and disables the endpoint when the outcome calls for it; it returns
// how many endpoints it disabled. cleared notes the endpoints whose failure
// run this transaction already ended, so a batch of successes ends it once.
func (d *Deliverer) noteOutcome(tx *gorm.DB, f *finishedAttempt, cleared map[[2]int64]bool) (int64, error) {
	ep, done := f.ep, f.out.Now
	k := [2]int64{ep.MerchantID, ep.ID}
	if f.ok && cleared[k] {
		return 0, nil
	}
	cleared[k] = f.ok
	since, err := models.NoteWebhookAttempt(tx, ep.MerchantID, ep.ID, f.ok, done)
	if err != nil {
		return 0, err
	}
	switch {
	case f.gone:
		return d.disable(tx, ep, "the endpoint answered 410 Gone", done, false)
	case since != nil && done.Sub(*since) >= WebhookRetryFor:
		return d.disable(tx, ep, "every attempt failed for 3 days", done, true)
	}
	return 0, nil
}

// disable turns the endpoint off; with finding, a WEBHOOK_FAILING finding
// (and its finding.opened event) is opened in the same transaction. It
// returns 1 when it disabled the endpoint, 0 when it was off already.
func (d *Deliverer) disable(tx *gorm.DB, ep *models.WebhookEndpoint, reason string, now time.Time, finding bool) (int64, error) {
	ok, err := models.DisableWebhookEndpoint(tx, ep.MerchantID, ep.ID, reason, now)
	if err != nil || !ok {
		return 0, err
	}
	if !finding {
		return 1, nil
	}
	_, err = models.InsertFindings(tx, []models.Finding{{MerchantID: ep.MerchantID, Kind: models.FindingWebhookFailing,
		Details:   fmt.Sprintf("webhook endpoint %d (%s) failed every attempt for 3 days and was disabled", ep.ID, ep.URL),
		DedupeKey: fmt.Sprintf("webhook:%d:%d", ep.ID, now.Unix()), Status: models.FindingOpen, CreatedAt: now}})
	return 1, err
}

// backoff is the wait after failed attempt n (1-based), with jitter.
func (d *Deliverer) backoff(n int) time.Duration {
	s := d.o.Schedule
	w := s[min(max(n, 1), len(s))-1]
	return w + time.Duration(rand.Int64N(int64(w)/5+1))
}

// send POSTs body to the endpoint, signed, and returns the status code (0
// when there was no answer), the answer's first WebhookBodyLimit bytes and
// the error that kept it from being a 2xx.
func (d *Deliverer) send(ctx context.Context, ep *models.WebhookEndpoint, id string, now time.Time, body []byte) (int, *string, error) {
	ctx, cancel := context.WithTimeout(ctx, d.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	ts := now.Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "coupond-webhooks")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", SignWebhook(secretsAt(ep, now), id, ts, body))
	resp, err := d.client.Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) {
			err = ue.Unwrap()
		}
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, rerr := io.ReadAll(io.LimitReader(resp.Body, WebhookBodyLimit))
	text := strings.ToValidUTF8(string(b), "\uFFFD")
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, &text, nil
	}
	if rerr != nil {
		return resp.StatusCode, &text, rerr
	}
	return resp.StatusCode, &text, fmt.Errorf("answered %s", resp.Status)
}
