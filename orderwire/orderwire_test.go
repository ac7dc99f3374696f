package orderwire

import (
	"encoding/base64"
	"testing"
)

func TestSignAndVerify(t *testing.T) {
	secret, ts, body := []byte("s3cret"), "1767225600", `{"merchantId":1,"redeemNo":"RD1"}`
	sig := Sign(secret, ts, body)
	tests := []struct {
		name         string
		secret       []byte
		ts, body, sg string
		want         bool
	}{
		{"as signed", secret, ts, body, sig, true},
		{"other body", secret, ts, body + " ", sig, false},
		{"other time", secret, "1767225601", body, sig, false},
		{"other secret", []byte("guess"), ts, body, sig, false},
		{"no version prefix", secret, ts, body, sig[3:], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := VerifySignature(tt.secret, tt.ts, tt.body, tt.sg); got != tt.want {
				t.Fatalf("VerifySignature = %v, want %v", got, tt.want)
			}
		})
	}
	if len(sig) != len("v1=")+64 || sig[:3] != "v1=" {
		t.Fatalf("signature %q is not v1= and 64 hex digits", sig)
	}
}

// TestSignStandardVector checks SignStandard and VerifyStandard against the
// example of the Standard Webhooks libraries' tests.
func TestSignStandardVector(t *testing.T) {
	key, err := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	id, ts, body := "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", []byte(`{"test": 2432232314}`)
	const want = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	if got := SignStandard(key, id, ts, body); got != want {
		t.Fatalf("signature %s, want %s", got, want)
	}
	if !VerifyStandard(key, id, ts, body, "v1,bm90IGl0 "+want) {
		t.Fatal("a header with the signature among others does not verify")
	}
	if VerifyStandard(key, id, ts, []byte(`{"test": 2432232315}`), want) {
		t.Fatal("a changed body verifies")
	}
}
