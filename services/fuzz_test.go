package services

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzNormalizeCouponCode: whatever is typed, normalisation never panics, and
// what it accepts is a canonical code that normalises to itself.
func FuzzNormalizeCouponCode(f *testing.F) {
	for _, s := range []string{NewCouponCode(), FormatCouponCode(NewCouponCode()), "", "----", "o0Il", "\x00", "ＡＢ", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		code, err := NormalizeCouponCode(raw)
		if err != nil {
			return
		}
		if len(code) != couponCodeLen || strings.Trim(code, crockford) != "" {
			t.Fatalf("%q normalised to non-canonical %q", raw, code)
		}
		again, err := NormalizeCouponCode(code)
		if err != nil || again != code {
			t.Fatalf("canonical %q does not round-trip: %q %v", code, again, err)
		}
	})
}

// FuzzValidateRequestID: accepted ids are short printable ASCII of the allowed
// characters, whatever the input.
func FuzzValidateRequestID(f *testing.F) {
	for _, s := range []string{"pos1-20261202-0001", "", strings.Repeat("a", 65), "a b", "请求", "\x00", "a:b.c_d-e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if validateRequestID(id) != nil {
			return
		}
		if id == "" || len(id) > maxRequestIDLen || !utf8.ValidString(id) {
			t.Fatalf("accepted %q", id)
		}
		for _, r := range id {
			if r > 0x7e || r <= ' ' {
				t.Fatalf("accepted %q with %q", id, r)
			}
		}
	})
}

// FuzzCheckText: accepted text is valid UTF-8 without control characters.
func FuzzCheckText(f *testing.F) {
	for _, s := range []string{"上海人民广场店", "a\x00b", "\xff", "line\nbreak", strings.Repeat("x", 101)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if checkText("name", s, 100, false) != nil {
			return
		}
		if !utf8.ValidString(s) || utf8.RuneCountInString(s) > 100 || strings.ContainsAny(s, "\x00\n\r\x1b") {
			t.Fatalf("accepted %q", s)
		}
	})
}
