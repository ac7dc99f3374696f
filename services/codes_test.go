package services_test

import (
	"strings"
	"testing"

	"coupond/services"
)

func TestNormalizeCouponCode(t *testing.T) {
	code := services.NewCouponCode()
	tests := []struct {
		name string
		give string
		want string
		err  bool
	}{
		{"canonical", code, code, false},
		{"formatted", services.FormatCouponCode(code), code, false},
		{"lower case and spaces", "  " + strings.ToLower(services.FormatCouponCode(code)) + " ", code, false},
		{"empty", "", "", true},
		{"too short", code[:5], "", true},
		{"not in alphabet", "UUUU-UUUU-UUUU-U", "", true},
		{"full width", "ＡＢＣＤ", "", true},
		{"NUL byte", code[:6] + "\x00" + code[6:], "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := services.NormalizeCouponCode(tt.give)
			if (err != nil) != tt.err || got != tt.want {
				t.Fatalf("NormalizeCouponCode(%q) = %q, %v", tt.give, got, err)
			}
		})
	}
}

func TestCouponCodeAliases(t *testing.T) {
	for range 200 {
		code := services.NewCouponCode()
		typed := strings.NewReplacer("0", "O", "1", "l").Replace(code)
		got, err := services.NormalizeCouponCode(typed)
		if err != nil || got != code {
			t.Fatalf("%q typed as %q: %q %v", code, typed, got, err)
		}
	}
}

// The check symbol catches every single-symbol error and every swap of two
// different adjacent symbols but 0 and Z, Luhn mod N's one blind spot.
func TestCouponCodeCheckSymbol(t *testing.T) {
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	for range 50 {
		code := services.NewCouponCode()
		for i := range len(code) {
			for _, r := range alphabet {
				if byte(r) == code[i] {
					continue
				}
				typo := code[:i] + string(r) + code[i+1:]
				if _, err := services.NormalizeCouponCode(typo); err == nil {
					t.Fatalf("single error %q -> %q not caught", code, typo)
				}
			}
			if i+1 < len(code) && code[i] != code[i+1] && code[i]+code[i+1] != '0'+'Z' {
				swap := code[:i] + string(code[i+1]) + string(code[i]) + code[i+2:]
				if _, err := services.NormalizeCouponCode(swap); err == nil {
					t.Fatalf("swap %q -> %q not caught", code, swap)
				}
			}
		}
	}
}

func TestCouponCodesAreDistinct(t *testing.T) {
	seen := make(map[string]bool)
	for range 100_000 {
		c := services.NewCouponCode()
		if seen[c] {
			t.Fatalf("duplicate code %s", c)
		}
		seen[c] = true
	}
}
