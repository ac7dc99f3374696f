// Package orderservice is a minimal reference implementation of the order
// system side of coupond's webhook fulfillment protocol (docs/fulfillment.md),
// used by tests. It keeps orders in memory, verifies signatures and can be told
// to fail in the ways real order systems fail.
package orderservice

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"coupond/orderwire"
)

// Fault is a failure the service injects into the next calls of Fulfil.
type Fault int

// Faults.
const (
	// FaultNone answers normally.
	FaultNone Fault = iota
	// FaultFailBeforeCreate answers 503 without creating the order.
	FaultFailBeforeCreate
	// FaultFailAfterCreate creates the order, then answers 503: the caller
	// cannot tell that the order exists.
	FaultFailAfterCreate
	// FaultHang never answers until the caller gives up.
	FaultHang
	// FaultReject answers 422 "rejected" without creating the order.
	FaultReject
)

// Order is one order of the reference service.
type Order struct {
	RedeemNo  string
	Ref       string
	Cancelled bool
	// Fenced is set when the order was cancelled before it existed.
	Fenced bool
}

// Server is the reference order service, an http.Handler.
type Server struct {
	secret    []byte
	now       func() time.Time
	tolerance time.Duration

	mu     sync.Mutex
	fault  Fault
	orders map[string]*Order
	calls  map[string]int
	next   int
}

// New returns a service that accepts calls signed with secret within five
// minutes of now.
func New(secret []byte, now func() time.Time) *Server {
	if now == nil {
		now = time.Now
	}
	return &Server{secret: secret, now: now, tolerance: 5 * time.Minute, orders: map[string]*Order{}, calls: map[string]int{}}
}

// SetFault makes the following Fulfil calls fail with f.
func (s *Server) SetFault(f Fault) { s.mu.Lock(); s.fault = f; s.mu.Unlock() }

// Order returns a copy of the order of redeemNo, or false.
func (s *Server) Order(redeemNo string) (Order, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[redeemNo]
	if !ok {
		return Order{}, false
	}
	return *o, true
}

// LiveOrders counts orders that exist and are not cancelled.
func (s *Server) LiveOrders() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, o := range s.orders {
		if !o.Cancelled {
			n++
		}
	}
	return n
}

// Calls returns how many calls reached path ("fulfil", "lookup", "cancel"),
// signed or not.
func (s *Server) Calls(path string) int { s.mu.Lock(); defer s.mu.Unlock(); return s.calls[path] }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ServeHTTP serves POST /fulfil, /lookup and /cancel.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if len(path) > 0 && path[0] == '/' {
		path = path[1:]
	}
	s.mu.Lock()
	s.calls[path]++
	s.mu.Unlock()
	if r.Method != http.MethodPost {
		writeJSON(w, http.StatusMethodNotAllowed, orderwire.ErrorResponse{Error: "method_not_allowed"})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, orderwire.ErrorResponse{Error: "bad_request"})
		return
	}
	// The Standard Webhooks headers when present, else the X-Coupond ones of
	// the previous release.
	ts := r.Header.Get(orderwire.HeaderTimestamp)
	verified := func() bool {
		return orderwire.VerifySignature(s.secret, ts, string(body), r.Header.Get(orderwire.HeaderSignature))
	}
	if id := r.Header.Get(orderwire.HeaderWebhookID); id != "" {
		ts = r.Header.Get(orderwire.HeaderWebhookTimestamp)
		verified = func() bool {
			return orderwire.VerifyStandard(s.secret, id, ts, body, r.Header.Get(orderwire.HeaderWebhookSignature))
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || math.Abs(float64(s.now().Unix()-sec)) > s.tolerance.Seconds() || !verified() {
		writeJSON(w, http.StatusUnauthorized, orderwire.ErrorResponse{Error: "bad_signature"})
		return
	}
	var req orderwire.FulfilRequest
	if err := json.Unmarshal(body, &req); err != nil || req.RedeemNo == "" {
		writeJSON(w, http.StatusBadRequest, orderwire.ErrorResponse{Error: "bad_request"})
		return
	}
	switch path {
	case "fulfil":
		s.fulfil(w, r, req)
	case "lookup":
		s.mu.Lock()
		o, ok := s.orders[req.RedeemNo]
		resp := orderwire.OrderResponse{}
		if ok && !o.Cancelled {
			resp = orderwire.OrderResponse{Exists: true, OrderRef: o.Ref}
		}
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, resp)
	case "cancel":
		s.mu.Lock()
		o, ok := s.orders[req.RedeemNo]
		if !ok {
			s.orders[req.RedeemNo] = &Order{RedeemNo: req.RedeemNo, Cancelled: true, Fenced: true}
		} else {
			o.Cancelled = true
		}
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, struct{}{})
	default:
		writeJSON(w, http.StatusNotFound, orderwire.ErrorResponse{Error: "not_found"})
	}
}

func (s *Server) fulfil(w http.ResponseWriter, r *http.Request, req orderwire.FulfilRequest) {
	s.mu.Lock()
	fault := s.fault
	switch fault {
	case FaultHang:
		s.mu.Unlock()
		<-r.Context().Done()
		return
	case FaultFailBeforeCreate:
		s.mu.Unlock()
		writeJSON(w, http.StatusServiceUnavailable, orderwire.ErrorResponse{Error: "unavailable"})
		return
	case FaultReject:
		s.mu.Unlock()
		writeJSON(w, http.StatusUnprocessableEntity, orderwire.ErrorResponse{Error: orderwire.Rejected,
			Message: "kitchen closed"})
		return
	}
	o, ok := s.orders[req.RedeemNo]
	if !ok {
		s.next++
		o = &Order{RedeemNo: req.RedeemNo, Ref: "EXT" + strconv.Itoa(s.next)}
		s.orders[req.RedeemNo] = o
	}
	got := *o
	s.mu.Unlock()
	switch {
	case got.Fenced:
		writeJSON(w, http.StatusConflict, orderwire.ErrorResponse{Error: orderwire.Fenced})
	case got.Cancelled:
		writeJSON(w, http.StatusConflict, orderwire.ErrorResponse{Error: orderwire.Rejected,
			Message: "order was cancelled"})
	case fault == FaultFailAfterCreate:
		writeJSON(w, http.StatusBadGateway, orderwire.ErrorResponse{Error: "unavailable"})
	default:
		writeJSON(w, http.StatusOK, orderwire.OrderResponse{Exists: true, OrderRef: got.Ref})
	}
}
