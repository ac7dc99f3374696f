package harness

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"coupond/bench/load"
	"coupond/orderwire"
)

// EventTypes are every webhook event type coupond sends.
var EventTypes = []string{"redemption.succeeded", "redemption.released", "redemption.refunded", "coupon.reissued",
	"coupon.issued", "coupon.expired", "coupon.voided", "finding.opened"}

// Receiver is the benchmark's webhook receiver: it verifies Standard
// Webhooks signatures with the endpoint's secret and records what it
// accepted, with each event's delivery lag (from the event's createdAt to
// its first acceptance). It can go down (listener closed, connections
// refused), answer a status, or answer after a delay.
type Receiver struct {
	addr   string
	key    atomic.Pointer[[]byte]
	status atomic.Int32 // 0: 204; otherwise this status
	delay  atomic.Int64 // nanoseconds before answering

	mu       sync.Mutex
	srv      *http.Server
	accepted map[string]int
	lags     []time.Duration
	last     time.Time
	bad      int
}

// StartReceiver starts a receiver on a free loopback port.
func StartReceiver() (*Receiver, error) {
	r := &Receiver{addr: "127.0.0.1:0", accepted: map[string]int{}}
	return r, r.Up()
}

// Up (re)starts the receiver on its address.
func (r *Receiver) Up() error {
	r.mu.Lock()
	addr := r.addr
	r.mu.Unlock()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	r.mu.Lock()
	r.addr, r.srv = ln.Addr().String(), srv
	r.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// Down closes the listener and every connection.
func (r *Receiver) Down() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// URL is where the receiver takes webhooks.
func (r *Receiver) URL() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return "http://" + r.addr + "/hook"
}

// SetKey sets the key signatures are verified with (a secret's decoded bytes).
func (r *Receiver) SetKey(key []byte) { r.key.Store(&key) }

// SetStatus makes every answer status (0: 204 again).
func (r *Receiver) SetStatus(status int) { r.status.Store(int32(status)) }

// SetDelay makes every answer wait d.
func (r *Receiver) SetDelay(d time.Duration) { r.delay.Store(int64(d)) }

// Accepted returns how often each webhook-id was accepted.
func (r *Receiver) Accepted() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.accepted))
	for k, v := range r.accepted {
		out[k] = v
	}
	return out
}

// Last is when the receiver last accepted a delivery.
func (r *Receiver) Last() time.Time { r.mu.Lock(); defer r.mu.Unlock(); return r.last }

// BadSignatures counts requests that failed verification.
func (r *Receiver) BadSignatures() int { r.mu.Lock(); defer r.mu.Unlock(); return r.bad }

// ResetLags forgets the lags recorded so far.
func (r *Receiver) ResetLags() { r.mu.Lock(); r.lags = nil; r.mu.Unlock() }

// LagQuantile is the q quantile of the delivery lags recorded since the
// last ResetLags, and how many there are.
func (r *Receiver) LagQuantile(q float64) (time.Duration, int) {
	r.mu.Lock()
	l := append([]time.Duration(nil), r.lags...)
	r.mu.Unlock()
	if len(l) == 0 {
		return 0, 0
	}
	slices.Sort(l)
	return load.NearestRank(l, q), len(l)
}

// ServeHTTP verifies, records and answers one delivery.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if d := time.Duration(r.delay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-req.Context().Done():
			return
		}
	}
	id := req.Header.Get(orderwire.HeaderWebhookID)
	key := r.key.Load()
	if key == nil || !orderwire.VerifyStandard(*key, id, req.Header.Get(orderwire.HeaderWebhookTimestamp), body,
		req.Header.Get(orderwire.HeaderWebhookSignature)) {
		r.mu.Lock()
		r.bad++
		r.mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if s := r.status.Load(); s != 0 {
		w.WriteHeader(int(s))
		return
	}
	var env struct {
		CreatedAt time.Time `json:"createdAt"`
	}
	_ = json.Unmarshal(body, &env)
	now := time.Now()
	r.mu.Lock()
	r.accepted[id]++
	if r.accepted[id] == 1 && !env.CreatedAt.IsZero() {
		r.lags = append(r.lags, now.Sub(env.CreatedAt))
	}
	r.last = now
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// Subscribe creates a webhook endpoint at r for every event type through
// the API (the server needs --allow-private-webhooks), sets r's key to its
// secret and returns the endpoint's id.
func Subscribe(ctx context.Context, admin *Client, r *Receiver) (string, error) {
	var out struct {
		CreateWebhookEndpoint struct {
			Endpoint struct {
				ID string `json:"id"`
			} `json:"endpoint"`
			Secret string `json:"secret"`
		} `json:"createWebhookEndpoint"`
	}
	err := admin.Do(ctx, `mutation($in: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $in) { endpoint { id } secret } }`,
		map[string]any{"in": map[string]any{"url": r.URL(), "description": "bench receiver", "events": EventTypes}}, &out)
	if err != nil {
		return "", fmt.Errorf("subscribe the receiver: %w", err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(out.CreateWebhookEndpoint.Secret, "whsec_"))
	if err != nil {
		return "", err
	}
	r.SetKey(key)
	return out.CreateWebhookEndpoint.Endpoint.ID, nil
}

// Unsubscribe deletes the webhook endpoint id.
func Unsubscribe(ctx context.Context, admin *Client, id string) error {
	return admin.Do(ctx, `mutation($in: DeleteWebhookEndpointInput!) { deleteWebhookEndpoint(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"id": id}}, nil)
}

// PendingDeliveries counts the webhook deliveries not yet delivered or
// given up.
func (f *Fixture) PendingDeliveries(ctx context.Context) (int, error) {
	var n int
	err := f.Pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE status = 'PENDING'`).Scan(&n)
	return n, err
}

// PendingBreakdown says where the PENDING deliveries stand, for a drain that
// did not finish: how many by attempts made, whether an attempt holds a
// lease, when the next is due, and the last error of each group.
func (f *Fixture) PendingBreakdown(ctx context.Context) string {
	rows, err := f.Pool.Query(ctx, `SELECT attempts, lease_until > now() AS leased, count(*),
  extract(epoch FROM min(next_attempt_at) - now())::float8, extract(epoch FROM max(next_attempt_at) - now())::float8,
  COALESCE(max(last_error), '')
FROM webhook_deliveries WHERE status = 'PENDING' GROUP BY 1, 2 ORDER BY 1, 2`)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var attempts, n int
		var leased *bool
		var first, last float64
		var lastErr string
		if err := rows.Scan(&attempts, &leased, &n, &first, &last, &lastErr); err != nil {
			return err.Error()
		}
		parts = append(parts, fmt.Sprintf("%d after %d attempts (leased %v), due in %s to %s, last error %q",
			n, attempts, leased != nil && *leased, time.Duration(first*float64(time.Second)).Round(time.Second),
			time.Duration(last*float64(time.Second)).Round(time.Second), lastErr))
	}
	if err := rows.Err(); err != nil {
		return err.Error()
	}
	// Events of one coupon go out in order: a PENDING delivery waits for
	// every earlier PENDING one of its coupon at the endpoint.
	var coupons, blocked int
	err = f.Pool.QueryRow(ctx, `SELECT count(DISTINCT coupon_id) FILTER (WHERE coupon_id <> 0),
  count(*) FILTER (WHERE coupon_id <> 0 AND EXISTS (SELECT 1 FROM webhook_deliveries p
    WHERE p.merchant_id = d.merchant_id AND p.endpoint_id = d.endpoint_id AND p.coupon_id = d.coupon_id
    AND p.status = 'PENDING' AND p.event_id < d.event_id))
FROM webhook_deliveries d WHERE status = 'PENDING'`).Scan(&coupons, &blocked)
	if err != nil {
		return strings.Join(parts, "; ") + "; " + err.Error()
	}
	parts = append(parts, fmt.Sprintf("%d coupons among them, %d waiting for an earlier event of their coupon", coupons, blocked))
	// What the database is busy with: the statements running for over a
	// second.
	long, err := f.Pool.Query(ctx, `SELECT extract(epoch FROM now() - query_start)::float8, state, COALESCE(wait_event, ''), left(query, 300)
FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'
  AND query_start < now() - interval '1 second' ORDER BY query_start`)
	if err != nil {
		return strings.Join(parts, "; ") + "; " + err.Error()
	}
	defer long.Close()
	for long.Next() {
		var secs float64
		var state, wait, query string
		if err := long.Scan(&secs, &state, &wait, &query); err != nil {
			return strings.Join(parts, "; ") + "; " + err.Error()
		}
		parts = append(parts, fmt.Sprintf("a statement %s for %.1f s (wait %q): %s", state, secs, wait, strings.Join(strings.Fields(query), " ")))
	}
	return strings.Join(parts, "; ")
}
