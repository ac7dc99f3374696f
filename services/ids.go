package services

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// randomSymbols returns n random Crockford base32 symbols.
func randomSymbols(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = crockford[b[i]&31]
	}
	return string(b)
}

// newFlowNo returns a ledger number: a prefix, the UTC second it was made, so
// finance can sort and read it, and 60 random bits so it cannot collide or be
// guessed.
func newFlowNo(prefix string, now time.Time) string {
	return prefix + now.UTC().Format("20060102150405") + randomSymbols(12)
}

// fingerprint hashes the parameters of a request so that a repeat of its request
// id with other parameters can be told apart from a retry.
func fingerprint(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strconv.Itoa(len(p))))
		h.Write([]byte{':'})
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

const maxRequestIDLen = 64

// validateRequestID accepts 1 to 64 characters of letters, digits and . _ : -,
// which covers UUIDs, ULIDs and POS transaction numbers.
func validateRequestID(id string) error {
	if id == "" {
		return invalidf("requestId is required: send one id per business request and reuse it on retries")
	}
	if len(id) > maxRequestIDLen {
		return invalidf("requestId must be at most %d characters", maxRequestIDLen)
	}
	if strings.IndexFunc(id, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == ':' || r == '-')
	}) >= 0 {
		return invalidf("requestId may only contain letters, digits and . _ : -")
	}
	return nil
}

// hashToken returns the stored form of an API token.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
