// Package load is the open-loop load generator: vegeta paces and sends the
// requests, and a recording transport stores every operation's outcome (ok,
// failed with a code, or unknown) with its latency measured from the moment
// the pacer intended to send it, so a slow server cannot hide its queueing
// delay (no coordinated omission).
package load

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"io"
	"math"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Outcome is what the client learned about an operation.
type Outcome string

// Outcomes.
const (
	// OK: the operation took effect (redemption or refund SUCCEEDED, read answered).
	OK Outcome = "ok"
	// Fail: a definite failure; the operation had no effect on the coupon.
	Fail Outcome = "fail"
	// Unknown: the client cannot tell (timeout, connection lost, INTERNAL,
	// PROCESSING); only a same-id retry or the database can tell.
	Unknown Outcome = "unknown"
)

// Op is one operation to send.
type Op struct {
	Kind      string `json:"kind"`
	RequestID string `json:"request_id,omitempty"`
	Code      string `json:"code,omitempty"`
	RedeemNo  string `json:"redeem_no,omitempty"`
	// Codes are the codes of a several-code order (kind "multi"); Code is
	// then the first of them.
	Codes []string `json:"codes,omitempty"`
	Body  []byte   `json:"-"`
}

// Record is one operation and what happened to it.
type Record struct {
	Seq int `json:"seq"`
	Op
	// Intended is the pacer's send time, from the start of the attack.
	Intended time.Duration `json:"intended_ns"`
	// Sent and Done are when the request left and the answer was read.
	Sent time.Duration `json:"sent_ns"`
	Done time.Duration `json:"done_ns"`
	// Outcome and Result: SUCCEEDED, REJECTED:<reason>, RELEASED,
	// PROCESSING, an error code, or transport:<class>.
	Outcome Outcome `json:"outcome"`
	Result  string  `json:"result"`
	// GotRedeemNo is the redemption number the answer carried.
	GotRedeemNo string `json:"got_redeem_no,omitempty"`
	// GotRedeemNos are a several-code order's redemption numbers, in the
	// order of its codes.
	GotRedeemNos []string `json:"got_redeem_nos,omitempty"`
	// AnswerHash identifies the answer's data, to compare repeated answers.
	AnswerHash uint64 `json:"-"`
	finished   bool
}

// NearestRank is the p quantile (0 < p <= 1) of sorted, an ascending
// non-empty slice, by the nearest-rank method: the smallest value with at
// least p of the values at or below it. Every percentile of the benchmark is
// taken this way.
func NearestRank[T cmp.Ordered](sorted []T, p float64) T {
	return sorted[max(0, int(math.Ceil(p*float64(len(sorted))))-1)]
}

// Latency is the time from the intended send to the answer.
func (r *Record) Latency() time.Duration { return r.Done - r.Intended }

// Finished reports whether the operation was sent and answered or failed.
func (r *Record) Finished() bool { return r.finished }

// Pacer is a vegeta pacer that also knows when it intended hit n to be sent.
type Pacer interface {
	vegeta.Pacer
	Intended(n uint64) time.Duration
}

// Constant sends Rate operations per second.
type Constant struct{ PerSec float64 }

// Intended implements Pacer.
func (c Constant) Intended(n uint64) time.Duration {
	return time.Duration(float64(n) / c.PerSec * float64(time.Second))
}

// Pace implements vegeta.Pacer.
func (c Constant) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	return pace(c, elapsed, hits)
}

// Rate implements vegeta.Pacer.
func (c Constant) Rate(time.Duration) float64 { return c.PerSec }

// Ramp raises the rate linearly from From to To per second over Over.
type Ramp struct {
	From, To float64
	Over     time.Duration
}

func (r Ramp) slope() float64 { return (r.To - r.From) / r.Over.Seconds() }

// Intended implements Pacer: hits(t) = From·t + slope·t²/2, solved for t.
func (r Ramp) Intended(n uint64) time.Duration {
	s := r.slope()
	if s == 0 {
		return Constant{r.From}.Intended(n)
	}
	t := (-r.From + math.Sqrt(r.From*r.From+2*s*float64(n))) / s
	return time.Duration(t * float64(time.Second))
}

// Pace implements vegeta.Pacer.
func (r Ramp) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	return pace(r, elapsed, hits)
}

// Rate implements vegeta.Pacer.
func (r Ramp) Rate(elapsed time.Duration) float64 { return r.From + r.slope()*elapsed.Seconds() }

func pace(p Pacer, elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if at := p.Intended(hits); at > elapsed {
		return at - elapsed, false
	}
	return 0, false
}

// Attack is one open-loop run.
type Attack struct {
	Name     string
	URL      string // GraphQL endpoint
	Token    string
	Pacer    Pacer
	Duration time.Duration
	// MaxOps bounds the number of operations (required).
	MaxOps int
	// Timeout bounds one request; default 10 s.
	Timeout time.Duration
	// Next returns operation n; it is called concurrently.
	Next func(n int) Op
	// OnDone is called after each operation finishes, concurrently.
	OnDone func(r *Record)
	// Transport, when set, carries the requests and keeps its connections
	// after the run, so runs one after the other reuse them as one client
	// would. Nil: a transport of the run's own, closed at its end.
	Transport *http.Transport
}

// NewTransport returns a transport like the one a run makes for itself, for
// Attack.Transport.
func NewTransport() *http.Transport {
	return &http.Transport{
		MaxIdleConns: 10000, MaxIdleConnsPerHost: 10000, IdleConnTimeout: 30 * time.Second,
		DialContext: (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	}
}

type recorder struct {
	inner   http.RoundTripper
	records []*Record
	start   time.Time
	onDone  func(*Record)
}

// Run runs the attack until Duration passes, MaxOps operations were sent or
// ctx ends, waits for every answer, and returns the records of the
// operations sent, in send order.
func Run(ctx context.Context, a Attack) []*Record {
	if a.Timeout <= 0 {
		a.Timeout = 10 * time.Second
	}
	tr := a.Transport
	if tr == nil {
		tr = NewTransport()
		defer tr.CloseIdleConnections()
	}
	rec := &recorder{inner: tr, records: make([]*Record, a.MaxOps), onDone: a.OnDone}
	var n atomic.Int64
	n.Store(-1)
	targeter := func(t *vegeta.Target) error {
		i := int(n.Add(1))
		if i >= a.MaxOps {
			return vegeta.ErrNoTargets
		}
		op := a.Next(i)
		rec.records[i] = &Record{Seq: i, Op: op, Intended: a.Pacer.Intended(uint64(i))}
		t.Method = http.MethodPost
		t.URL = a.URL
		t.Body = op.Body
		t.Header = http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + a.Token},
			"X-Bench-Op": {strconv.Itoa(i)}}
		return nil
	}
	atk := vegeta.NewAttacker(vegeta.Client(&http.Client{Transport: rec, Timeout: a.Timeout}),
		vegeta.Workers(64), vegeta.MaxWorkers(20000), vegeta.MaxBody(0))
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			atk.Stop()
		case <-stopped:
		}
	}()
	rec.start = time.Now()
	for range atk.Attack(targeter, limitPacer{a.Pacer, uint64(a.MaxOps)}, a.Duration, a.Name) {
	}
	close(stopped)
	out := rec.records[:0:0]
	for _, r := range rec.records {
		if r != nil {
			out = append(out, r)
		}
	}
	return out
}

type limitPacer struct {
	Pacer
	max uint64
}

func (l limitPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if hits >= l.max {
		return 0, true
	}
	return l.Pacer.Pace(elapsed, hits)
}

// RoundTrip sends the request, reads the whole answer and classifies it.
func (rc *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	i, err := strconv.Atoi(req.Header.Get("X-Bench-Op"))
	if err != nil || i < 0 || i >= len(rc.records) || rc.records[i] == nil {
		return rc.inner.RoundTrip(req)
	}
	r := rc.records[i]
	r.Sent = time.Since(rc.start)
	resp, err := rc.inner.RoundTrip(req)
	var body []byte
	if err == nil {
		body, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	r.Done = time.Since(rc.start)
	if err != nil {
		r.Outcome, r.Result = classifyTransport(err)
	} else {
		Classify(r, resp.StatusCode, body)
	}
	r.finished = true
	if rc.onDone != nil {
		rc.onDone(r)
	}
	return resp, err
}

func classifyTransport(err error) (Outcome, string) {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		// Nothing was sent: a definite failure.
		return Fail, "transport:refused"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return Unknown, "transport:timeout"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return Unknown, "transport:reset"
	default:
		return Unknown, "transport:error"
	}
}

type answer struct {
	Data   map[string]*payload `json:"data"`
	Errors []struct {
		Extensions struct {
			Code string `json:"code"`
		} `json:"extensions"`
	} `json:"errors"`
}

type payload struct {
	RedeemNo     string `json:"redeemNo"`
	RefundNo     string `json:"refundNo"`
	Status       string `json:"status"`
	RejectReason string `json:"rejectReason"`
	// Redemptions and Reasons are a several-code order's.
	Redemptions []struct {
		RedeemNo string `json:"redeemNo"`
	} `json:"redemptions"`
	Reasons []struct {
		RejectReason string `json:"rejectReason"`
	} `json:"reasons"`
}

// Classify sets the outcome of r from an HTTP answer.
func Classify(r *Record, status int, body []byte) {
	if r.Kind == "ping" {
		var a struct {
			Data struct {
				Typename string `json:"__typename"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &a); err != nil || status != http.StatusOK || a.Data.Typename == "" {
			r.Outcome, r.Result = Fail, "http:"+strconv.Itoa(status)
			return
		}
		r.Outcome, r.Result = OK, "PONG"
		return
	}
	var a answer
	if err := json.Unmarshal(body, &a); err != nil {
		if status >= 500 {
			r.Outcome, r.Result = Unknown, "http:"+strconv.Itoa(status)
		} else {
			r.Outcome, r.Result = Fail, "http:"+strconv.Itoa(status)
		}
		return
	}
	if len(a.Errors) > 0 {
		code := a.Errors[0].Extensions.Code
		if code == "" {
			code = "http:" + strconv.Itoa(status)
		}
		r.Result = code
		r.Outcome = Fail
		if (code == "INTERNAL" || status >= 500) && code != "OVERLOADED" && code != "UNAVAILABLE" {
			// The server could not say whether the write committed. OVERLOADED
			// and UNAVAILABLE refusals came before the request ran: no effect.
			r.Outcome = Unknown
		}
		return
	}
	var p *payload
	for _, v := range a.Data {
		p = v
	}
	if p == nil {
		r.Outcome, r.Result = Fail, "NULL"
		return
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(p.RedeemNo + "|" + p.RefundNo + "|" + p.Status + "|" + p.RejectReason))
	for _, x := range p.Redemptions {
		r.GotRedeemNos = append(r.GotRedeemNos, x.RedeemNo)
		_, _ = h.Write([]byte("|" + x.RedeemNo))
	}
	if p.RejectReason == "" {
		// A several-code order's reason: the first code's that failed.
		for _, x := range p.Reasons {
			if x.RejectReason != "" {
				p.RejectReason = x.RejectReason
				break
			}
		}
	}
	r.AnswerHash = h.Sum64()
	if p.RedeemNo != "" {
		r.GotRedeemNo = p.RedeemNo
	}
	switch {
	case r.Kind == "read":
		r.Outcome, r.Result = OK, "READ"
	case p.Status == "SUCCEEDED":
		r.Outcome, r.Result = OK, "SUCCEEDED"
	case p.Status == "PROCESSING":
		r.Outcome, r.Result = Unknown, "PROCESSING"
	case p.Status == "REJECTED":
		r.Outcome, r.Result = Fail, "REJECTED:"+p.RejectReason
	default:
		r.Outcome, r.Result = Fail, p.Status
	}
}

// Stats summarises records.
type Stats struct {
	Ops       int            `json:"ops"`
	OK        int            `json:"ok"`
	Fail      int            `json:"fail"`
	Unknown   int            `json:"unknown"`
	ByResult  map[string]int `json:"by_result"`
	Seconds   float64        `json:"seconds"`
	OKPerSec  float64        `json:"ok_per_sec"`
	SentRate  float64        `json:"sent_per_sec"`
	P50       float64        `json:"p50_ms"`
	P95       float64        `json:"p95_ms"`
	P99       float64        `json:"p99_ms"`
	P999      float64        `json:"p999_ms"`
	Max       float64        `json:"max_ms"`
	Mean      float64        `json:"mean_ms"`
	ErrorRate float64        `json:"error_rate"`
}

// Summarise computes Stats of the records for which keep returns true (all
// when keep is nil). Errors are unknown outcomes and failures other than
// REJECTED (a rejection is a correct answer, not an error).
func Summarise(rs []*Record, keep func(*Record) bool) Stats {
	s := Stats{ByResult: map[string]int{}}
	var lat []float64
	var first, last time.Duration = math.MaxInt64, 0
	errs := 0
	for _, r := range rs {
		if keep != nil && !keep(r) {
			continue
		}
		s.Ops++
		s.ByResult[r.Result]++
		switch r.Outcome {
		case OK:
			s.OK++
		case Fail:
			s.Fail++
			if len(r.Result) < 8 || r.Result[:8] != "REJECTED" {
				errs++
			}
		default:
			s.Unknown++
			errs++
		}
		lat = append(lat, float64(r.Latency())/1e6)
		if r.Intended < first {
			first = r.Intended
		}
		if r.Done > last {
			last = r.Done
		}
	}
	if s.Ops == 0 {
		return s
	}
	sort.Float64s(lat)
	q := func(p float64) float64 { return round(NearestRank(lat, p)) }
	s.P50, s.P95, s.P99, s.P999, s.Max = q(.50), q(.95), q(.99), q(.999), round(lat[len(lat)-1])
	sum := 0.0
	for _, l := range lat {
		sum += l
	}
	s.Mean = round(sum / float64(len(lat)))
	s.Seconds = round((last - first).Seconds())
	if s.Seconds > 0 {
		s.OKPerSec = round(float64(s.OK) / s.Seconds)
		s.SentRate = round(float64(s.Ops) / s.Seconds)
	}
	s.ErrorRate = round(float64(errs) / float64(s.Ops))
	return s
}

func round(f float64) float64 { return math.Round(f*1000) / 1000 }

// Body builders for the GraphQL operations the scenarios send.

const (
	redeemQuery     = `mutation($in: RedeemCouponInput!) { redeemCoupon(input: $in) { redeemNo status rejectReason } }`
	redeemManyQuery = `mutation($in: RedeemCouponsInput!) { redeemCoupons(input: $in) { status redemptions { redeemNo } reasons { rejectReason } } }`
	refundQuery     = `mutation($in: RefundRedemptionInput!) { refundRedemption(input: $in) { refundNo status } }`
	readQuery       = `query($code: String!) { coupon(code: $code) { status version } }`
)

func gql(q string, vars map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	return b
}

// Redeem is a one-shot redemption of code at store with request id rid.
func Redeem(kind, code, store, rid string) Op {
	return Op{Kind: kind, RequestID: rid, Code: code, Body: gql(redeemQuery, map[string]any{"in": map[string]any{
		"code": code, "storeId": store, "requestId": rid, "orderAmount": 5000}})}
}

// RedeemMany is a one-shot redemption of several codes for one order at
// store with request id rid (redeemCoupons): all are taken or none.
func RedeemMany(kind string, codes []string, store, rid string) Op {
	return Op{Kind: kind, RequestID: rid, Code: codes[0], Codes: codes, Body: gql(redeemManyQuery, map[string]any{"in": map[string]any{
		"codes": codes, "storeId": store, "requestId": rid, "orderAmount": 5000}})}
}

// Refund refunds redemption redeemNo with request id rid.
func Refund(redeemNo, rid string) Op {
	return Op{Kind: "refund", RequestID: rid, RedeemNo: redeemNo, Body: gql(refundQuery, map[string]any{"in": map[string]any{
		"redeemNo": redeemNo, "requestId": rid, "reason": "bench"}})}
}

// Ping is the cheapest authenticated GraphQL request: the server parses,
// validates and answers it without the database (the token is cached after
// its first use). A burst of pings measures what HTTP and GraphQL alone cost.
func Ping() Op { return Op{Kind: "ping", Body: gql(`{ __typename }`, nil)} }

// Read reads a coupon by code.
func Read(code string) Op {
	return Op{Kind: "read", Code: code, Body: gql(readQuery, map[string]any{"code": code})}
}

// Pool is a concurrency-safe bag of strings (e.g. redemption numbers that
// succeeded, for refunds).
type Pool struct {
	mu    sync.Mutex
	items []string
}

// Put adds s.
func (p *Pool) Put(s string) { p.mu.Lock(); p.items = append(p.items, s); p.mu.Unlock() }

// Take removes and returns the most recent item, or "".
func (p *Pool) Take() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.items) == 0 {
		return ""
	}
	s := p.items[len(p.items)-1]
	p.items = p.items[:len(p.items)-1]
	return s
}
