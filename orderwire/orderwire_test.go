package orderwire

import "testing"

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
