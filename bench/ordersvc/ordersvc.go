// Package ordersvc wraps coupond's reference order service
// (coupond/internal/orderservice) with per-call random faults, so the webhook
// adapter can be made to fail, fail after creating, reject or hang for a
// fraction of calls while the rest succeed.
package ordersvc

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"coupond/internal/orderservice"
	"coupond/orderwire"
)

// Probabilities of the faults of one /fulfil call; the rest succeed.
type Probabilities struct {
	FailBeforeCreate float64 // 503, no order
	FailAfterCreate  float64 // order created, then 502
	Reject           float64 // 422 rejected, no order (a definite failure)
	Hang             float64 // no answer until the caller gives up
}

// Service is a running faulty order service.
type Service struct {
	Inner  *orderservice.Server
	Secret []byte
	URL    string
	srv    *http.Server

	mu    sync.Mutex
	prob  Probabilities
	rng   *rand.Rand
	Calls atomic.Int64
}

// Start serves a new reference order service on a free loopback port.
func Start(secret []byte) (*Service, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Service{Inner: orderservice.New(secret, nil), Secret: secret, URL: "http://" + ln.Addr().String(),
		rng: rand.New(rand.NewPCG(1, 2))}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the service.
func (s *Service) Close() { _ = s.srv.Close() }

// Set replaces the fault probabilities.
func (s *Service) Set(p Probabilities) { s.mu.Lock(); s.prob = p; s.mu.Unlock() }

// ServeHTTP rolls the dice for /fulfil and passes everything else through.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/fulfil" {
		s.Inner.ServeHTTP(w, r)
		return
	}
	s.Calls.Add(1)
	s.mu.Lock()
	p, x := s.prob, s.rng.Float64()
	s.mu.Unlock()
	switch {
	case x < p.FailBeforeCreate:
		writeJSON(w, http.StatusServiceUnavailable, orderwire.ErrorResponse{Error: "unavailable"})
	case x < p.FailBeforeCreate+p.Reject:
		writeJSON(w, http.StatusUnprocessableEntity, orderwire.ErrorResponse{Error: orderwire.Rejected, Message: "kitchen closed"})
	case x < p.FailBeforeCreate+p.Reject+p.Hang:
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	case x < p.FailBeforeCreate+p.Reject+p.Hang+p.FailAfterCreate:
		rec := httptest.NewRecorder()
		s.Inner.ServeHTTP(rec, r)
		writeJSON(w, http.StatusBadGateway, orderwire.ErrorResponse{Error: "unavailable"})
	default:
		s.Inner.ServeHTTP(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ReplayCreate sends a signed, delayed /fulfil for redeemNo straight to the
// inner service, as a late retry of the order system's client would, and
// returns the HTTP status: 409 means the fence held.
func (s *Service) ReplayCreate(ctx context.Context, merchantID int64, redeemNo string) (int, error) {
	body, _ := json.Marshal(orderwire.FulfilRequest{MerchantID: merchantID, RedeemNo: redeemNo, OrderAmount: 5000})
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "/fulfil", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set(orderwire.HeaderTimestamp, ts)
	req.Header.Set(orderwire.HeaderSignature, orderwire.Sign(s.Secret, ts, string(body)))
	rec := httptest.NewRecorder()
	s.Inner.ServeHTTP(rec, req)
	return rec.Code, nil
}
