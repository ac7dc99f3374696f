package services

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"coupond/orderwire"
)

// WebhookConfig configures the webhook adapter.
type WebhookConfig struct {
	// URL is the order system's base URL; coupond POSTs to URL/fulfil,
	// URL/lookup and URL/cancel.
	URL string
	// Secret is the shared HMAC key; required.
	Secret []byte
	// Timeout bounds one HTTP attempt. Default 3 s.
	Timeout time.Duration
	// Retries is how many times a call is repeated after a transport error, a
	// timeout or a 5xx answer. Default 2; negative means none.
	Retries int
	// Backoff is the wait before the first retry, doubled for each next one.
	// Default 200 ms.
	Backoff time.Duration
	// Client sends the requests; nil uses a client without its own timeout
	// (attempts are bounded by Timeout and the caller's context).
	Client *http.Client
	// Now stamps signatures; nil uses time.Now.
	Now func() time.Time
}

// WebhookFulfiller is the fulfillment adapter for a merchant's own order
// system, reached over signed HTTP calls keyed by redemption number. Every call
// is idempotent by contract (the order system deduplicates by redemption
// number), which is what makes its bounded retries safe.
type WebhookFulfiller struct {
	cfg WebhookConfig
}

// NewWebhookFulfiller returns the webhook adapter. It fails without a URL or a
// secret.
func NewWebhookFulfiller(cfg WebhookConfig) (*WebhookFulfiller, error) {
	if cfg.URL == "" {
		return nil, errors.New("webhook fulfiller: url is required")
	}
	if len(cfg.Secret) == 0 {
		return nil, errors.New("webhook fulfiller: secret is required")
	}
	cfg.URL = strings.TrimRight(cfg.URL, "/")
	if cfg.Timeout <= 0 {
		cfg.Timeout = 3 * time.Second
	}
	if cfg.Retries == 0 {
		cfg.Retries = 2
	}
	if cfg.Retries < 0 {
		cfg.Retries = 0
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 200 * time.Millisecond
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &WebhookFulfiller{cfg: cfg}, nil
}

// OrdersOutside reports true: the webhook adapter's orders live in the
// merchant's system, where reconciliation cannot check them.
func (w *WebhookFulfiller) OrdersOutside() bool { return true }

// Fulfil asks the order system to create the order. A 4xx answer "rejected"
// or "fenced" is a definite failure (ErrFulfilmentRejected, ErrFenced);
// anything else that is not a 200 with an order reference leaves the outcome
// unknown.
func (w *WebhookFulfiller) Fulfil(ctx context.Context, req FulfilRequest) (string, error) {
	var out orderwire.OrderResponse
	err := w.call(ctx, "fulfil", req.RedeemNo, orderwire.FulfilRequest{MerchantID: req.MerchantID, RedeemNo: req.RedeemNo,
		CouponID: req.CouponID, StoreID: req.StoreID, OrderAmount: req.OrderAmount, DiscountAmount: req.DiscountAmount}, &out)
	if err != nil {
		return "", err
	}
	if out.OrderRef == "" {
		return "", fmt.Errorf("fulfil %s: answer without an order reference", req.RedeemNo)
	}
	return out.OrderRef, nil
}

// Lookup asks whether a live order exists for the redemption number.
func (w *WebhookFulfiller) Lookup(ctx context.Context, merchantID int64, redeemNo string) (LookupResult, error) {
	var out orderwire.OrderResponse
	if err := w.call(ctx, "lookup", redeemNo, orderwire.KeyRequest{MerchantID: merchantID, RedeemNo: redeemNo}, &out); err != nil {
		return LookupResult{}, err
	}
	return LookupResult{Exists: out.Exists, OrderRef: out.OrderRef}, nil
}

// Cancel cancels the order of the redemption number, or fences the number.
func (w *WebhookFulfiller) Cancel(ctx context.Context, merchantID int64, redeemNo string) error {
	return w.call(ctx, "cancel", redeemNo, orderwire.KeyRequest{MerchantID: merchantID, RedeemNo: redeemNo}, nil)
}

// errRetryable marks an attempt whose outcome is unknown.
type errRetryable struct{ err error }

func (e errRetryable) Error() string { return e.err.Error() }
func (e errRetryable) Unwrap() error { return e.err }

// call POSTs body to path with bounded retries on unknown outcomes and decodes
// a 200 answer into out.
func (w *WebhookFulfiller) call(ctx context.Context, path, redeemNo string, body, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("%s %s: encode: %w", path, redeemNo, err)
	}
	backoff := w.cfg.Backoff
	for attempt := 0; ; attempt++ {
		err = w.attempt(ctx, path, redeemNo, raw, out)
		var retry errRetryable
		if err == nil || !errors.As(err, &retry) || attempt >= w.cfg.Retries {
			break
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s %s: %w (last attempt: %v)", path, redeemNo, ctx.Err(), err)
		case <-t.C:
		}
		backoff *= 2
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", path, redeemNo, err)
	}
	return nil
}

func (w *WebhookFulfiller) attempt(ctx context.Context, path, redeemNo string, raw []byte, out any) error {
	actx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, w.cfg.URL+"/"+path, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	ts := strconv.FormatInt(w.cfg.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(orderwire.HeaderTimestamp, ts)
	req.Header.Set(orderwire.HeaderSignature, orderwire.Sign(w.cfg.Secret, ts, string(raw)))
	req.Header.Set(orderwire.HeaderIdempotencyKey, redeemNo)
	// Standard Webhooks signing, keyed by the secret's bytes; the X-Coupond
	// headers above stay for one release (docs/fulfillment.md).
	id := path + ":" + redeemNo
	req.Header.Set(orderwire.HeaderWebhookID, id)
	req.Header.Set(orderwire.HeaderWebhookTimestamp, ts)
	req.Header.Set(orderwire.HeaderWebhookSignature, orderwire.SignStandard(w.cfg.Secret, id, ts, raw))
	resp, err := w.cfg.Client.Do(req)
	if err != nil {
		return errRetryable{err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return errRetryable{fmt.Errorf("read answer: %w", err)}
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("decode answer: %w", err)
		}
		return nil
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return errRetryable{fmt.Errorf("order system answered %d", resp.StatusCode)}
	case resp.StatusCode >= 400:
		var e orderwire.ErrorResponse
		_ = json.Unmarshal(b, &e)
		switch e.Error {
		case orderwire.Fenced:
			return ErrFenced
		case orderwire.Rejected:
			return fmt.Errorf("order system: %s: %w", e.Message, ErrFulfilmentRejected)
		}
		return fmt.Errorf("order system answered %d %s", resp.StatusCode, e.Error)
	default:
		return fmt.Errorf("order system answered %d", resp.StatusCode)
	}
}
