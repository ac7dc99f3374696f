package main

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"coupond/errcode"
)

// inflightLimit caps the GraphQL requests served at once, so that under
// overload goroutines and memory stay bounded and the queue forms where it is
// cheap, in front of the handler, before a body is read. A request over the
// cap waits, first come first served, up to wait for a slot, with at most as
// many others waiting as there are slots; one that finds the queue full or is
// still waiting when wait ends is answered 503 with Retry-After: 1 and a
// GraphQL error OVERLOADED. Nothing of a refused request ran, so a retry with
// the same request id is always safe. A nil limit admits everything.
type inflightLimit struct {
	slots   chan struct{}
	waiting atomic.Int64
	wait    time.Duration
	refused *prometheus.CounterVec
}

// newInflightLimit returns a limit of n requests at once with its metrics
// registered with reg, or nil for n <= 0 (no limit).
func newInflightLimit(n int, wait time.Duration, reg prometheus.Registerer) *inflightLimit {
	if n <= 0 {
		return nil
	}
	l := &inflightLimit{slots: make(chan struct{}, n), wait: max(wait, 0)}
	l.refused = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "coupond_overloaded_refusals_total",
		Help: "GraphQL requests refused with 503 OVERLOADED by the in-flight limit, by reason (queue_full, wait_timeout)."},
		[]string{"reason"})
	reg.MustRegister(l.refused,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "coupond_graphql_inflight_requests",
			Help: "GraphQL requests being served now."}, func() float64 { return float64(len(l.slots)) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "coupond_graphql_waiting_requests",
			Help: "GraphQL requests waiting for a slot of the in-flight limit."}, func() float64 { return float64(l.waiting.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "coupond_graphql_inflight_limit",
			Help: "The in-flight limit (serve --max-inflight)."}, func() float64 { return float64(cap(l.slots)) }),
	)
	return l
}

// wrap limits next.
func (l *inflightLimit) wrap(next http.Handler) http.Handler {
	if l == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case l.slots <- struct{}{}:
		default:
			if reason := l.queue(r); reason != "" {
				if r.Context().Err() == nil { // nobody to answer when the client left
					l.refused.WithLabelValues(reason).Inc()
					l.refuse(w)
				}
				return
			}
		}
		defer func() { <-l.slots }()
		next.ServeHTTP(w, r)
	})
}

// queue waits for a slot and returns "" once it holds one, or why it gave up.
func (l *inflightLimit) queue(r *http.Request) string {
	if l.waiting.Add(1) > int64(cap(l.slots)) {
		l.waiting.Add(-1)
		return "queue_full"
	}
	defer l.waiting.Add(-1)
	t := time.NewTimer(l.wait)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return ""
	case <-t.C:
		return "wait_timeout"
	case <-r.Context().Done():
		return "client_gone"
	}
}

func (l *inflightLimit) refuse(w http.ResponseWriter) {
	errcode.Write(w, errcode.Overloaded, fmt.Sprintf("the server is serving its limit of %d requests at once; nothing was done, retry in a second", cap(l.slots)), time.Second)
}
