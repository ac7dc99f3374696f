package services

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// Webhooks manages a merchant's webhook endpoints and reads its events and
// deliveries. Delivery itself is the Deliverer's.
type Webhooks struct {
	db           *gorm.DB
	now          func() time.Time
	audit        *Audit
	allowPrivate bool
	resolver     Resolver

	// events keeps Metrics' count of the outbox's events from reading
	// every event at every call.
	events eventTally
	// tills paces the count beside the redemptions.
	tills *tills
}

// eventTally is a count of the outbox's events kept from one reading to the
// next: the events below mark (models.EventWatermark) are counted once and
// kept in settled. span is the width of the watermark range the next
// statement of a count reads.
type eventTally struct {
	mu      sync.Mutex
	mark    int64
	settled int64
	span    int64
}

// Resolver looks host names up; net.DefaultResolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Limits of endpoints.
const (
	// MaxWebhookEndpoints is how many endpoints a merchant may have.
	MaxWebhookEndpoints = 16
	// MaxWebhookURL is the longest endpoint URL, in bytes.
	MaxWebhookURL = 2048
	// SecretOverlap is how long the previous secret also signs after a rotation.
	SecretOverlap = 24 * time.Hour
)

// WebhookEndpointInput is a new endpoint.
type WebhookEndpointInput struct {
	URL         string
	Events      []string
	Description string
	// RequestID, optional, makes the call idempotent (see adminRequest).
	RequestID string
}

// CreatedEndpoint is a new endpoint with its secret, shown this once (and
// to a repeat of the same request id).
type CreatedEndpoint struct {
	Endpoint models.WebhookEndpoint
	Secret   string
}

// UpdateWebhookEndpointInput changes an endpoint; nil fields stay.
type UpdateWebhookEndpointInput struct {
	ID      int64
	URL     *string
	Events  []string
	Enabled *bool
}

// newSecret is whsec_ and the base64 of 24 random bytes.
func newSecret() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return "whsec_" + base64.StdEncoding.EncodeToString(b[:])
}

// CreateEndpoint adds an endpoint of the actor's merchant; administrators
// only. An invalid or refused URL (see checkURL), an unknown or missing event
// type, or a 17th endpoint is BAD_USER_INPUT, and nothing is written.
func (s *Webhooks) CreateEndpoint(ctx context.Context, actor Actor, in WebhookEndpointInput) (*CreatedEndpoint, error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return nil, err
	}
	events, err := checkEventTypes(in.Events)
	if err != nil {
		return nil, err
	}
	if err := checkText("description", in.Description, 500, false); err != nil {
		return nil, err
	}
	if err := s.checkURL(ctx, in.URL); err != nil {
		return nil, err
	}
	req, err := newAdminRequest(actor, "createWebhookEndpoint", in.RequestID, in.URL, strings.Join(events, ","), in.Description)
	if err != nil {
		return nil, err
	}
	db := s.db.WithContext(ctx)
	var prior CreatedEndpoint
	if ok, err := req.replayed(db, &prior); err != nil {
		return nil, err
	} else if ok {
		return &prior, nil
	}
	now := s.now()
	out := &CreatedEndpoint{Secret: newSecret()}
	e := &out.Endpoint
	*e = models.WebhookEndpoint{MerchantID: actor.MerchantID, URL: in.URL, Description: in.Description,
		Events: models.JoinEventTypes(events), Enabled: true, Secret: out.Secret, CreatedAt: now, UpdatedAt: now}
	err = db.Transaction(func(tx *gorm.DB) error {
		n, err := models.CountWebhookEndpointsLocked(tx, actor.MerchantID)
		if err != nil {
			return err
		}
		if n >= MaxWebhookEndpoints {
			return invalidf("a merchant has at most %d webhook endpoints", MaxWebhookEndpoints)
		}
		if err := models.InsertWebhookEndpoint(tx, e); err != nil {
			return err
		}
		if err := s.audit.record(tx, actor, "webhook.create", fmt.Sprintf("webhook:%d", e.ID), e.URL, nilIfEmpty(in.RequestID)); err != nil {
			return err
		}
		return req.record(tx, out, now)
	})
	if err != nil && req != nil {
		if ok, rerr := req.replayed(db, &prior); rerr != nil {
			return nil, rerr
		} else if ok {
			return &prior, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("create webhook endpoint: %w", err)
	}
	return out, nil
}

// Endpoints lists the merchant's endpoints; administrators only.
func (s *Webhooks) Endpoints(ctx context.Context, actor Actor) ([]models.WebhookEndpoint, error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return nil, err
	}
	return models.WebhookEndpoints(s.db.WithContext(ctx), actor.MerchantID)
}

// Endpoint returns one of the merchant's endpoints; NOT_FOUND for another
// merchant's.
func (s *Webhooks) Endpoint(ctx context.Context, actor Actor, id int64) (*models.WebhookEndpoint, error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return nil, err
	}
	return endpointOf(s.db.WithContext(ctx), actor.MerchantID, id)
}

func endpointOf(db *gorm.DB, merchantID, id int64) (*models.WebhookEndpoint, error) {
	e, err := models.WebhookEndpointByID(db, merchantID, id)
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, notFoundf("webhook endpoint %d not found", id)
	}
	return e, err
}

// UpdateEndpoint changes an endpoint's URL, events or enabled flag;
// administrators only. Enabling clears the reason it was disabled and its
// failure run; the deliveries that were pending when it was disabled go out
// again. Events written while it was disabled were not queued for it (as
// with Stripe and Svix): Replay recovers them.
func (s *Webhooks) UpdateEndpoint(ctx context.Context, actor Actor, in UpdateWebhookEndpointInput) (*models.WebhookEndpoint, error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return nil, err
	}
	now := s.now()
	set := map[string]any{"updated_at": now}
	var what []string
	if in.URL != nil {
		if err := s.checkURL(ctx, *in.URL); err != nil {
			return nil, err
		}
		set["url"] = *in.URL
		what = append(what, "url="+*in.URL)
	}
	if in.Events != nil {
		events, err := checkEventTypes(in.Events)
		if err != nil {
			return nil, err
		}
		set["events"] = models.JoinEventTypes(events)
		what = append(what, "events="+strings.Join(events, ","))
	}
	if in.Enabled != nil {
		set["enabled"] = *in.Enabled
		if *in.Enabled {
			set["disabled_reason"], set["failing_since"] = nil, nil
		} else {
			set["disabled_reason"] = "disabled by an administrator"
		}
		what = append(what, "enabled="+strconv.FormatBool(*in.Enabled))
	}
	db := s.db.WithContext(ctx)
	err := db.Transaction(func(tx *gorm.DB) error {
		ok, err := models.UpdateWebhookEndpoint(tx, actor.MerchantID, in.ID, set)
		if err != nil {
			return err
		}
		if !ok {
			return notFoundf("webhook endpoint %d not found", in.ID)
		}
		return s.audit.record(tx, actor, "webhook.update", fmt.Sprintf("webhook:%d", in.ID), strings.Join(what, " "), nil)
	})
	if err != nil {
		return nil, fmt.Errorf("update webhook endpoint: %w", err)
	}
	return endpointOf(db, actor.MerchantID, in.ID)
}

// RotateSecret gives the endpoint a new secret, returned this once; the
// old one keeps signing beside it for SecretOverlap. Administrators only.
func (s *Webhooks) RotateSecret(ctx context.Context, actor Actor, id int64) (*CreatedEndpoint, error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return nil, err
	}
	now := s.now()
	secret := newSecret()
	db := s.db.WithContext(ctx)
	err := db.Transaction(func(tx *gorm.DB) error {
		ok, err := models.RotateWebhookSecret(tx, actor.MerchantID, id, secret, now.Add(SecretOverlap), now)
		if err != nil {
			return err
		}
		if !ok {
			return notFoundf("webhook endpoint %d not found", id)
		}
		return s.audit.record(tx, actor, "webhook.rotate_secret", fmt.Sprintf("webhook:%d", id), "", nil)
	})
	if err != nil {
		return nil, fmt.Errorf("rotate webhook secret: %w", err)
	}
	e, err := endpointOf(db, actor.MerchantID, id)
	if err != nil {
		return nil, err
	}
	return &CreatedEndpoint{Endpoint: *e, Secret: secret}, nil
}

// DeleteEndpoint deletes an endpoint and its deliveries; administrators
// only. The events stay.
func (s *Webhooks) DeleteEndpoint(ctx context.Context, actor Actor, id int64) (*models.WebhookEndpoint, error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return nil, err
	}
	db := s.db.WithContext(ctx)
	e, err := endpointOf(db, actor.MerchantID, id)
	if err != nil {
		return nil, err
	}
	err = db.Transaction(func(tx *gorm.DB) error {
		ok, err := models.DeleteWebhookEndpoint(tx, actor.MerchantID, id)
		if err != nil {
			return err
		}
		if !ok {
			return notFoundf("webhook endpoint %d not found", id)
		}
		return s.audit.record(tx, actor, "webhook.delete", fmt.Sprintf("webhook:%d", id), e.URL, nil)
	})
	if err != nil {
		return nil, fmt.Errorf("delete webhook endpoint: %w", err)
	}
	return e, nil
}

// Redeliver sends the merchant's event to its endpoint again, with the same
// webhook-id, as soon as the worker gets to it (after an attempt in flight);
// administrators only.
func (s *Webhooks) Redeliver(ctx context.Context, actor Actor, eventUID string, endpointID int64) (*models.DeliveryRow, error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return nil, err
	}
	db := s.db.WithContext(ctx)
	if _, err := endpointOf(db, actor.MerchantID, endpointID); err != nil {
		return nil, err
	}
	ev, err := models.EventByUID(db, actor.MerchantID, eventUID)
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, notFoundf("event %s not found", eventUID)
	}
	if err != nil {
		return nil, err
	}
	now := s.now()
	err = db.Transaction(func(tx *gorm.DB) error {
		if err := models.Redeliver(tx, actor.MerchantID, endpointID, ev, now); err != nil {
			return err
		}
		return s.audit.record(tx, actor, "webhook.redeliver", fmt.Sprintf("webhook:%d", endpointID), ev.UID, nil)
	})
	if err != nil {
		return nil, fmt.Errorf("redeliver event %s: %w", eventUID, err)
	}
	rows, err := models.MerchantDeliveries(db, actor.MerchantID, models.DeliveryFilter{EndpointID: endpointID}, ev.ID+1, 0, 1)
	if err != nil || len(rows) != 1 {
		return nil, fmt.Errorf("read redelivery of %s: %w", eventUID, err)
	}
	return &rows[0], nil
}

// MaxReplayAge is how far back replayWebhookEvents reaches.
const MaxReplayAge = 30 * 24 * time.Hour

// ReplayInput asks for the events of [Since, Until) an endpoint did not
// get; a zero Until is now.
type ReplayInput struct {
	EndpointID   int64
	Since, Until time.Time
}

// Replayed is what a replay queued.
type Replayed struct {
	Endpoint models.WebhookEndpoint
	Queued   int64
}

// Replay queues for the endpoint the merchant's events created since
// in.Since (and before in.Until) of the types it subscribes to that it did
// not get: those written while it was disabled (or before it existed) and
// those whose delivery was given up (FAILED). Delivered and pending ones are
// not sent again (redeliverEvent sends one event again). They go out with
// their own webhook-id, in order per coupon, as soon as the endpoint is
// enabled. Administrators only; another merchant's endpoint is NOT_FOUND, and
// only the caller's merchant's events are read. Since older than
// MaxReplayAge, in the future, or not before Until is BAD_USER_INPUT.
func (s *Webhooks) Replay(ctx context.Context, actor Actor, in ReplayInput) (*Replayed, error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return nil, err
	}
	now := s.now()
	until := in.Until
	if until.IsZero() || until.After(now) {
		until = now.Add(time.Microsecond)
	}
	switch {
	case in.Since.IsZero():
		return nil, invalidf("since is required")
	case in.Since.Before(now.Add(-MaxReplayAge)):
		return nil, invalidf("since must be within the last %d days", int(MaxReplayAge/(24*time.Hour)))
	case !in.Since.Before(until):
		return nil, invalidf("since must be before until and not in the future")
	}
	db := s.db.WithContext(ctx)
	out := &Replayed{}
	err := db.Transaction(func(tx *gorm.DB) error {
		if _, err := endpointOf(tx, actor.MerchantID, in.EndpointID); err != nil {
			return err
		}
		n, err := models.ReplayDeliveries(tx, actor.MerchantID, in.EndpointID, in.Since.UTC(), until.UTC(), now)
		if err != nil {
			return err
		}
		out.Queued = n
		return s.audit.record(tx, actor, "webhook.replay", fmt.Sprintf("webhook:%d", in.EndpointID),
			fmt.Sprintf("since=%s until=%s queued=%d", in.Since.UTC().Format(time.RFC3339), until.UTC().Format(time.RFC3339), n), nil)
	})
	if err != nil {
		return nil, fmt.Errorf("replay webhook events: %w", err)
	}
	e, err := endpointOf(db, actor.MerchantID, in.EndpointID)
	if err != nil {
		return nil, err
	}
	out.Endpoint = *e
	return out, nil
}

// DeliveryFilter narrows webhookDeliveries; from and to are times or
// merchant-local dates as elsewhere.
type DeliveryFilter struct {
	EndpointID int64
	EventType  string
	Status     models.DeliveryStatus
	From, To   string
}

// Deliveries lists the merchant's deliveries, newest event first;
// administrators only.
func (s *Webhooks) Deliveries(ctx context.Context, actor Actor, f DeliveryFilter, p PageArgs) (Page[models.DeliveryRow], error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return Page[models.DeliveryRow]{}, err
	}
	db := s.db.WithContext(ctx)
	from, to, err := merchantRange(db, actor.MerchantID, f.From, f.To)
	if err != nil {
		return Page[models.DeliveryRow]{}, err
	}
	size, err := pageSize(p)
	if err != nil {
		return Page[models.DeliveryRow]{}, err
	}
	var afterEvent, afterEndpoint int64
	if p.After != "" {
		k, err := decodeKeyCursor(p.After, 2)
		if err != nil {
			return Page[models.DeliveryRow]{}, err
		}
		afterEvent, afterEndpoint = k[0], k[1]
	}
	rows, err := models.MerchantDeliveries(db, actor.MerchantID, models.DeliveryFilter{EndpointID: f.EndpointID,
		EventType: f.EventType, Status: f.Status, From: from, To: to}, afterEvent, afterEndpoint, size+1)
	if err != nil {
		return Page[models.DeliveryRow]{}, err
	}
	page := Page[models.DeliveryRow]{Items: rows, HasNextPage: len(rows) > size}
	if page.HasNextPage {
		page.Items = rows[:size]
	}
	return page, nil
}

// DeliveryCursor is the cursor of a delivery row.
func DeliveryCursor(d models.DeliveryRow) string { return encodeKeyCursor(d.EventID, d.EndpointID) }

// EventFilter narrows the events feed.
type EventFilter struct {
	Types    []string
	From, To string
}

// Events reads the merchant's events in the order a poller follows them,
// after the cursor of the last one it read; administrators and finance
// staff. The order is commit order (see models.EventFeedPage), so a poller
// that keeps the last cursor misses nothing.
func (s *Webhooks) Events(ctx context.Context, actor Actor, f EventFilter, p PageArgs) (Page[models.OutboxEvent], error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance); err != nil {
		return Page[models.OutboxEvent]{}, err
	}
	for _, t := range f.Types {
		if !models.ValidEventType(t) {
			return Page[models.OutboxEvent]{}, invalidf("unknown event type %q", t)
		}
	}
	db := s.db.WithContext(ctx)
	from, to, err := merchantRange(db, actor.MerchantID, f.From, f.To)
	if err != nil {
		return Page[models.OutboxEvent]{}, err
	}
	size, err := pageSize(p)
	if err != nil {
		return Page[models.OutboxEvent]{}, err
	}
	var afterTx, afterID int64
	if p.After != "" {
		k, err := decodeKeyCursor(p.After, 2)
		if err != nil {
			return Page[models.OutboxEvent]{}, err
		}
		afterTx, afterID = k[0], k[1]
	}
	var fp, tp *time.Time
	if !from.IsZero() {
		fp = &from
	}
	if !to.IsZero() {
		tp = &to
	}
	evs, err := models.EventFeedPage(db, actor.MerchantID, f.Types, fp, tp, afterTx, afterID, size+1)
	if err != nil {
		return Page[models.OutboxEvent]{}, err
	}
	page := Page[models.OutboxEvent]{Items: evs, HasNextPage: len(evs) > size}
	if page.HasNextPage {
		page.Items = evs[:size]
	}
	return page, nil
}

// EventCursor is the cursor of an event in the feed.
func EventCursor(ev models.OutboxEvent) string { return encodeKeyCursor(ev.TxID, ev.ID) }

func pageSize(p PageArgs) (int, error) {
	switch {
	case p.First == 0:
		return 20, nil
	case p.First < 1 || p.First > MaxPageSize:
		return 0, invalidf("first must be between 1 and %d", MaxPageSize)
	}
	return p.First, nil
}

func encodeKeyCursor(parts ...int64) string {
	s := make([]string, len(parts))
	for i, p := range parts {
		s[i] = strconv.FormatInt(p, 10)
	}
	return base64.RawURLEncoding.EncodeToString([]byte("k:" + strings.Join(s, ":")))
}

func decodeKeyCursor(c string, n int) ([]int64, error) {
	bad := invalidf("after is not a cursor returned by this list")
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return nil, bad
	}
	rest, ok := strings.CutPrefix(string(b), "k:")
	parts := strings.Split(rest, ":")
	if !ok || len(parts) != n {
		return nil, bad
	}
	out := make([]int64, n)
	for i, p := range parts {
		if out[i], err = strconv.ParseInt(p, 10, 64); err != nil || out[i] < 0 {
			return nil, bad
		}
	}
	return out, nil
}

// checkEventTypes refuses an empty list or an unknown type and returns the
// types without repeats, in EventTypes order.
func checkEventTypes(types []string) ([]string, error) {
	if len(types) == 0 {
		return nil, invalidf("events must name at least one event type")
	}
	for _, t := range types {
		if !models.ValidEventType(t) {
			return nil, invalidf("unknown event type %q; known: %s", t, strings.Join(models.EventTypes, ", "))
		}
	}
	var out []string
	for _, t := range models.EventTypes {
		if slices.Contains(types, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// checkURL accepts an absolute http or https URL of at most MaxWebhookURL
// bytes, without credentials, whose host (a literal address, or every
// address its name resolves to) is public. Loopback, private, link-local
// (cloud metadata), shared, multicast and unspecified addresses are refused
// unless private webhooks are allowed (serve --allow-private-webhooks). The
// worker checks the address again at every connection (see publicDialer),
// so a name that later resolves elsewhere gets nothing.
func (s *Webhooks) checkURL(ctx context.Context, raw string) error {
	if len(raw) > MaxWebhookURL {
		return invalidf("url is longer than %d bytes", MaxWebhookURL)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Opaque != "" {
		return invalidf("url must be an absolute http or https URL")
	}
	if u.User != nil {
		return invalidf("url must not carry credentials")
	}
	if u.Fragment != "" {
		return invalidf("url must not have a fragment")
	}
	if s.allowPrivate {
		return nil
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		addrs, err = s.resolver.LookupNetIP(lctx, "ip", host)
		if err != nil || len(addrs) == 0 {
			return invalidf("url host %s does not resolve", host)
		}
	}
	for _, a := range addrs {
		if !PublicAddr(a) {
			return invalidf("url host %s is a loopback, private, link-local or metadata address (%s)", host, a)
		}
	}
	return nil
}

var sharedSpace = netip.MustParsePrefix("100.64.0.0/10")
var thisNetwork = netip.MustParsePrefix("0.0.0.0/8")

// PublicAddr reports whether a is an address webhooks may reach without
// --allow-private-webhooks.
func PublicAddr(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsValid() && !a.IsLoopback() && !a.IsPrivate() && !a.IsLinkLocalUnicast() && !a.IsLinkLocalMulticast() &&
		!a.IsInterfaceLocalMulticast() && !a.IsMulticast() && !a.IsUnspecified() && !sharedSpace.Contains(a) &&
		!thisNetwork.Contains(a)
}

// WebhookMetrics is what /metrics shows of the outbox: events stored,
// deliveries waiting (PENDING) and given up (FAILED), and per endpoint the
// age of its oldest undelivered event.
type WebhookMetrics struct {
	Events     int64
	Deliveries map[models.DeliveryStatus]int64
	Oldest     []models.OldestPending
}

// Metrics reads the outbox's figures for /metrics. Each figure's cost
// follows what changed or waits, not the whole outbox: the events are
// counted from the last call's watermark on (the first call of a process
// reads them all), and the deliveries from partial indexes of the PENDING
// and FAILED ones. Delivered deliveries are not counted here: the
// deliverers count their attempts by outcome.
func (s *Webhooks) Metrics(ctx context.Context) (WebhookMetrics, error) {
	db := s.db.WithContext(ctx)
	out := WebhookMetrics{Deliveries: map[models.DeliveryStatus]int64{}}
	var err error
	if out.Events, err = s.countEvents(ctx, db); err != nil {
		return out, err
	}
	counts, err := models.CountUndelivered(db)
	if err != nil {
		return out, err
	}
	for _, c := range counts {
		out.Deliveries[c.Status] = c.N
	}
	out.Oldest, err = models.OldestPendingDeliveries(db)
	return out, err
}

// countEvents returns how many events the outbox holds, reading only those
// from the tally's watermark on. It reads the range up to the new watermark
// in statements of about eventCountTarget each (nextEventSpan), and
// while the tills are busy rests eventCountPause times as long after each:
// half a minute of events at the knee is some 150,000 rows, which in one
// statement held a core of the database for up to a third of a second, and
// the requests queued behind it (docs/TUNING.md). A count that fails keeps
// what it settled; the next one goes on from there.
func (s *Webhooks) countEvents(ctx context.Context, db *gorm.DB) (int64, error) {
	t := &s.events
	t.mu.Lock()
	defer t.mu.Unlock()
	below, err := models.EventWatermark(db)
	if err != nil {
		return 0, err
	}
	if t.span <= 0 {
		t.span = eventCountSpan
	}
	for t.mark < below {
		to := min(t.mark+t.span, below)
		began := time.Now()
		n, err := models.CountEvents(db, t.mark, to)
		if err != nil {
			return 0, err
		}
		took := time.Since(began)
		full := to-t.mark == t.span
		t.mark, t.settled = to, t.settled+n
		t.span = nextEventSpan(t.span, took, full)
		if t.mark < below && s.tills.busy() && !rest(ctx, eventCountPause*took) {
			return 0, ctx.Err()
		}
	}
	visible, err := models.CountEvents(db, below, 0)
	if err != nil {
		return 0, err
	}
	return t.settled + visible, nil
}

// nextEventSpan is the span of the statement after one over span that took
// took: scaled toward eventCountTarget, at most doubled, and not grown after
// a statement the watermark cut short (one that read all there was says
// nothing of how long a full span takes: after a quiet spell the next
// reading's first statement would otherwise read half a minute of the
// tills' events at once).
func nextEventSpan(span int64, took time.Duration, full bool) int64 {
	next := 2 * span
	if took > 0 {
		next = min(next, int64(float64(span)*float64(eventCountTarget)/float64(took)))
	}
	if !full {
		next = min(next, span)
	}
	return min(max(next, eventCountMinSpan), eventCountMaxSpan)
}

// The bounds of countEvents' statements: the span (transaction ids on
// PostgreSQL, event ids on SQLite) its first statement reads and the least
// and most it adapts to, the time it aims each statement at, and how many
// times that a count rests after each while the tills are busy (a count
// then takes a quarter of one core of the database at most).
const (
	eventCountSpan    = 4096
	eventCountMinSpan = 64
	eventCountMaxSpan = 1 << 30
	eventCountTarget  = 5 * time.Millisecond
	eventCountPause   = 3
)
