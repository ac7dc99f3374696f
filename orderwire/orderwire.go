// Package orderwire is the wire format of coupond's webhook fulfillment
// protocol (docs/fulfillment.md): the bodies coupond sends to a merchant's
// order system and the answers it understands, the header names and the
// request signature. coupond's webhook adapter (services) and order systems
// written in Go (internal/orderservice, bench/ordersvc) both speak it, so it
// depends on nothing of coupond.
package orderwire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// Protocol headers.
const (
	// HeaderTimestamp carries the Unix time, in seconds, of the signature.
	HeaderTimestamp = "X-Coupond-Timestamp"
	// HeaderSignature carries "v1=" and the hex HMAC-SHA256, keyed by the
	// shared secret, of the timestamp, a dot and the raw body.
	HeaderSignature = "X-Coupond-Signature"
	// HeaderIdempotencyKey repeats the redemption number the call is keyed by.
	HeaderIdempotencyKey = "Idempotency-Key"

	// The Standard Webhooks headers (https://www.standardwebhooks.com), which
	// coupond's event webhooks and, beside the X-Coupond ones for one release,
	// its fulfillment calls carry.

	// HeaderWebhookID carries the message id, the same on every retry.
	HeaderWebhookID = "webhook-id"
	// HeaderWebhookTimestamp carries the Unix time, in seconds, of the attempt.
	HeaderWebhookTimestamp = "webhook-timestamp"
	// HeaderWebhookSignature carries "v1," and the base64 HMAC-SHA256 of
	// id.timestamp.body, one per signing key, space-separated.
	HeaderWebhookSignature = "webhook-signature"
)

// Answers of the order system that coupond understands in an error body.
const (
	// Rejected: the order was not and will not be created.
	Rejected = "rejected"
	// Fenced: the redemption number was cancelled before any order existed,
	// so the order will never be created.
	Fenced = "fenced"
)

// Sign returns the signature header value of body at timestamp ts.
func Sign(secret []byte, ts, body string) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write([]byte(body))
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}

// VerifySignature reports whether sig is the signature of body at timestamp
// ts, in constant time.
func VerifySignature(secret []byte, ts, body, sig string) bool {
	return hmac.Equal([]byte(Sign(secret, ts, body)), []byte(sig))
}

// SignStandard returns one Standard Webhooks signature ("v1," and base64) of
// body with message id and timestamp ts, keyed by key (a whsec_ secret's
// decoded bytes).
func SignStandard(key []byte, id, ts string, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// VerifyStandard reports whether one of the space-separated signatures in
// header is key's signature of the message, in constant time.
func VerifyStandard(key []byte, id, ts string, body []byte, header string) bool {
	want := []byte(SignStandard(key, id, ts, body))
	ok := false
	for _, sig := range strings.Fields(header) {
		if hmac.Equal([]byte(sig), want) {
			ok = true
		}
	}
	return ok
}

// FulfilRequest is the body of POST /fulfil.
type FulfilRequest struct {
	MerchantID     int64  `json:"merchantId"`
	RedeemNo       string `json:"redeemNo"`
	CouponID       int64  `json:"couponId"`
	StoreID        int64  `json:"storeId"`
	OrderAmount    int64  `json:"orderAmount"`
	DiscountAmount int64  `json:"discountAmount"`
}

// KeyRequest is the body of POST /lookup and POST /cancel.
type KeyRequest struct {
	MerchantID int64  `json:"merchantId"`
	RedeemNo   string `json:"redeemNo"`
}

// OrderResponse is the 200 answer of /fulfil and /lookup.
type OrderResponse struct {
	Exists   bool   `json:"exists"`
	OrderRef string `json:"orderRef"`
}

// ErrorResponse is the body of a 4xx answer.
type ErrorResponse struct {
	Error   string `json:"error"`
	Message string `json:"message,omitempty"`
}
