// Package webhookreceiver is a reference receiver of coupond's webhooks for
// tests and the documentation: it verifies Standard Webhooks signatures the
// way the specification's published libraries do, records every delivery,
// and can be told to fail, answer with a status or be slow.
package webhookreceiver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Tolerance is how far a webhook-timestamp may be from the receiver's clock.
const Tolerance = 5 * time.Minute

// Delivery is one request the receiver got.
type Delivery struct {
	ID        string
	Type      string
	Timestamp int64
	Body      []byte
	// Verified lists which of the receiver's secrets (by index) signed it.
	Verified []int
	// Status is what the receiver answered.
	Status int
	At     time.Time
}

// Receiver is an http.Handler receiving webhooks.
type Receiver struct {
	mu       sync.Mutex
	secrets  []string
	failN    int
	status   int
	delay    time.Duration
	got      []Delivery
	attempts map[string]int
	now      func() time.Time
}

// New returns a receiver that verifies with any of secrets (whsec_...).
func New(secrets ...string) *Receiver {
	return &Receiver{secrets: secrets, attempts: map[string]int{}, now: time.Now}
}

// SetClock sets the clock timestamps are checked against.
func (r *Receiver) SetClock(now func() time.Time) { r.mu.Lock(); r.now = now; r.mu.Unlock() }

// SetSecrets replaces the secrets it verifies with.
func (r *Receiver) SetSecrets(secrets ...string) { r.mu.Lock(); r.secrets = secrets; r.mu.Unlock() }

// FailFirst makes it answer 500 to the first n attempts of every event id.
func (r *Receiver) FailFirst(n int) { r.mu.Lock(); r.failN = n; r.mu.Unlock() }

// AnswerWith makes it answer status to everything (0: back to normal).
func (r *Receiver) AnswerWith(status int) { r.mu.Lock(); r.status = status; r.mu.Unlock() }

// Delay makes it wait d before answering.
func (r *Receiver) Delay(d time.Duration) { r.mu.Lock(); r.delay = d; r.mu.Unlock() }

// Deliveries returns every request so far.
func (r *Receiver) Deliveries() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.got...)
}

// Accepted returns the requests it answered with 2xx, in arrival order.
func (r *Receiver) Accepted() []Delivery {
	var out []Delivery
	for _, d := range r.Deliveries() {
		if d.Status >= 200 && d.Status < 300 {
			out = append(out, d)
		}
	}
	return out
}

// ErrVerify is returned by Verify when no secret signed the message.
var ErrVerify = errors.New("no matching signature")

// Verify checks a Standard Webhooks message: the timestamp within
// Tolerance of now and a v1 signature by one of secrets over
// id.timestamp.body. It returns the indexes of the secrets that signed.
func Verify(secrets []string, h http.Header, body []byte, now time.Time) ([]int, error) {
	id, tsText, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if id == "" || err != nil {
		return nil, errors.New("missing webhook-id or webhook-timestamp")
	}
	if d := now.Sub(time.Unix(ts, 0)); d > Tolerance || d < -Tolerance {
		return nil, errors.New("timestamp outside the tolerance")
	}
	var ok []int
	for i, s := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		if err != nil {
			continue
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id + "." + tsText + "."))
		mac.Write(body)
		want := mac.Sum(nil)
		for _, sig := range strings.Fields(sigs) {
			v, b64, found := strings.Cut(sig, ",")
			got, err := base64.StdEncoding.DecodeString(b64)
			if found && v == "v1" && err == nil && hmac.Equal(got, want) {
				ok = append(ok, i)
				break
			}
		}
	}
	if len(ok) == 0 {
		return nil, ErrVerify
	}
	return ok, nil
}

// ServeHTTP verifies and records a delivery and answers it.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	r.mu.Lock()
	secrets, delay, status, failN, now := r.secrets, r.delay, r.status, r.failN, r.now
	r.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-req.Context().Done():
		}
	}
	verified, err := Verify(secrets, req.Header, body, now())
	var env struct{ Type string }
	_ = json.Unmarshal(body, &env)
	id := req.Header.Get("webhook-id")
	ts, _ := strconv.ParseInt(req.Header.Get("webhook-timestamp"), 10, 64)
	r.mu.Lock()
	r.attempts[id]++
	n := r.attempts[id]
	answer := http.StatusNoContent
	switch {
	case err != nil:
		answer = http.StatusUnauthorized
	case status != 0:
		answer = status
	case n <= failN:
		answer = http.StatusInternalServerError
	}
	r.got = append(r.got, Delivery{ID: id, Type: env.Type, Timestamp: ts, Body: body, Verified: verified, Status: answer, At: now()})
	r.mu.Unlock()
	w.WriteHeader(answer)
	if answer >= 300 {
		_, _ = io.WriteString(w, "refused: "+http.StatusText(answer))
	}
}
