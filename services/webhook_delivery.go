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
	// (serve --webhook-concurrency). Default 4.
	Concurrency int
	// Poll is how often due deliveries are looked for. Default 200 ms.
	Poll time.Duration
	// Schedule is the retry schedule; default DefaultRetrySchedule.
	Schedule []time.Duration
	// Timeout bounds an attempt; default WebhookTimeout.
	Timeout time.Duration
	// AllowPrivate lets attempts reach loopback and private addresses
	// (serve --allow-private-webhooks).
	AllowPrivate bool
	// Batch is how many due deliveries one poll claims at most. Default 200.
	Batch int
}

// DeliveryStats counts attempts by outcome in this process.
type DeliveryStats struct {
	Delivered, Retried, Failed, Gone, Disabled int64
}

// Deliverer sends the outbox's deliveries to their endpoints, signed per
// Standard Webhooks. Every replica with jobs runs one; each attempt is
// claimed by a conditional update (models.ClaimDelivery), so no attempt is
// sent twice, and a replica that dies mid-attempt leaves a lease that runs
// out, after which the attempt is sent again with the same webhook-id.
type Deliverer struct {
	db     *gorm.DB
	now    func() time.Time
	log    *slog.Logger
	client *http.Client
	o      DelivererOptions

	mu       sync.Mutex
	inflight map[[2]int64]int
	wg       sync.WaitGroup

	delivered, retried, failed, gone, disabled atomic.Int64
}

// NewDeliverer returns a Deliverer over db.
func NewDeliverer(db *gorm.DB, now func() time.Time, log *slog.Logger, o DelivererOptions) *Deliverer {
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.Poll <= 0 {
		o.Poll = 200 * time.Millisecond
	}
	if len(o.Schedule) == 0 {
		o.Schedule = DefaultRetrySchedule
	}
	if o.Timeout <= 0 {
		o.Timeout = WebhookTimeout
	}
	if o.Batch <= 0 {
		o.Batch = 200
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
	return &Deliverer{db: db, now: now, log: log, client: client, o: o, inflight: map[[2]int64]int{}}
}

// Stats returns the attempts' outcomes so far in this process.
func (d *Deliverer) Stats() DeliveryStats {
	return DeliveryStats{Delivered: d.delivered.Load(), Retried: d.retried.Load(), Failed: d.failed.Load(),
		Gone: d.gone.Load(), Disabled: d.disabled.Load()}
}

// Run delivers until ctx ends, then waits for the attempts in flight.
func (d *Deliverer) Run(ctx context.Context) {
	t := time.NewTicker(d.o.Poll)
	defer t.Stop()
	for {
		if _, err := d.RunOnce(ctx); err != nil && ctx.Err() == nil {
			d.log.ErrorContext(ctx, "webhook delivery", "err", err)
		}
		select {
		case <-ctx.Done():
			d.wg.Wait()
			return
		case <-t.C:
		}
	}
}

// Wait waits for the attempts RunOnce started.
func (d *Deliverer) Wait() { d.wg.Wait() }

// RunOnce claims the due deliveries it has room for and starts their
// attempts, and returns how many it started.
func (d *Deliverer) RunOnce(ctx context.Context) (int, error) {
	now := d.now()
	due, err := models.DueDeliveries(d.db.WithContext(ctx), now, d.o.Batch)
	if err != nil || len(due) == 0 {
		return 0, err
	}
	var keys [][2]int64
	var eventIDs = map[int64][]int64{}
	seen := map[[2]int64]bool{}
	for _, x := range due {
		k := [2]int64{x.MerchantID, x.EndpointID}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		eventIDs[x.MerchantID] = append(eventIDs[x.MerchantID], x.EventID)
	}
	eps, err := models.WebhookEndpointsByID(d.db.WithContext(ctx), keys)
	if err != nil {
		return 0, err
	}
	endpoints := map[[2]int64]*models.WebhookEndpoint{}
	for i := range eps {
		endpoints[[2]int64{eps[i].MerchantID, eps[i].ID}] = &eps[i]
	}
	events := map[[2]int64]*models.OutboxEvent{}
	for m, ids := range eventIDs {
		evs, err := models.EventsByID(d.db.WithContext(ctx), m, ids)
		if err != nil {
			return 0, err
		}
		for i := range evs {
			events[[2]int64{m, evs[i].ID}] = &evs[i]
		}
	}
	started := 0
	for i := range due {
		x := due[i]
		k := [2]int64{x.MerchantID, x.EndpointID}
		ep, ev := endpoints[k], events[[2]int64{x.MerchantID, x.EventID}]
		if ep == nil || ev == nil || !d.reserveSlot(k) {
			continue
		}
		ok, err := models.ClaimDelivery(d.db.WithContext(ctx), &x, now, now.Add(d.o.Timeout+30*time.Second))
		if err != nil || !ok {
			d.releaseSlot(k)
			if err != nil {
				return started, err
			}
			continue
		}
		started++
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			defer d.releaseSlot(k)
			d.attempt(context.WithoutCancel(ctx), ep, ev, &x)
		}()
	}
	return started, nil
}

func (d *Deliverer) reserveSlot(k [2]int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inflight[k] >= d.o.Concurrency {
		return false
	}
	d.inflight[k]++
	return true
}

func (d *Deliverer) releaseSlot(k [2]int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inflight[k]--; d.inflight[k] <= 0 {
		delete(d.inflight, k)
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

// attempt sends the claimed attempt x and records its outcome.
func (d *Deliverer) attempt(ctx context.Context, ep *models.WebhookEndpoint, ev *models.OutboxEvent, x *models.WebhookDelivery) {
	body, err := MarshalEnvelope(ev)
	if err != nil {
		d.log.ErrorContext(ctx, "encode webhook event", "event", ev.UID, "err", err)
		return
	}
	now := d.now()
	status, resp, sendErr := d.send(ctx, ep, ev.UID, now, body)
	done := d.now()
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
	err = d.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := models.FinishAttempt(tx, x, out); err != nil {
			return err
		}
		since, err := models.NoteWebhookAttempt(tx, ep.MerchantID, ep.ID, ok, done)
		if err != nil {
			return err
		}
		switch {
		case gone:
			return d.disable(tx, ep, "the endpoint answered 410 Gone", done, false)
		case since != nil && done.Sub(*since) >= WebhookRetryFor:
			return d.disable(tx, ep, "every attempt failed for 3 days", done, true)
		}
		return nil
	})
	if err != nil {
		d.log.ErrorContext(ctx, "record webhook attempt", "endpoint", ep.ID, "event", ev.UID, "err", err)
	}
	switch {
	case ok:
		d.delivered.Add(1)
	case gone:
		d.gone.Add(1)
	case out.Status == models.DeliveryFailed:
		d.failed.Add(1)
	default:
		d.retried.Add(1)
	}
}

// disable turns the endpoint off; with finding, a WEBHOOK_FAILING finding
// (and its finding.opened event) is opened in the same transaction.
func (d *Deliverer) disable(tx *gorm.DB, ep *models.WebhookEndpoint, reason string, now time.Time, finding bool) error {
	ok, err := models.DisableWebhookEndpoint(tx, ep.MerchantID, ep.ID, reason, now)
	if err != nil || !ok {
		return err
	}
	d.disabled.Add(1)
	if !finding {
		return nil
	}
	_, err = models.InsertFindings(tx, []models.Finding{{MerchantID: ep.MerchantID, Kind: models.FindingWebhookFailing,
		Details:   fmt.Sprintf("webhook endpoint %d (%s) failed every attempt for 3 days and was disabled", ep.ID, ep.URL),
		DedupeKey: fmt.Sprintf("webhook:%d:%d", ep.ID, now.Unix()), Status: models.FindingOpen, CreatedAt: now}})
	return err
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
