package services

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
)

// Coupon codes are 12 random Crockford base32 symbols (60 bits) followed by a
// check symbol computed with the Luhn mod N algorithm over the same alphabet,
// which catches every single-symbol error and every swap of adjacent symbols
// except 0 with Z (the algorithm's one blind spot, as 0 with 9 is for Luhn).
// The check stays inside the 32-symbol alphabet so a code never needs the
// punctuation of Crockford's mod-37 check symbols.
const (
	crockford      = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	codeRandomLen  = 12
	couponCodeLen  = codeRandomLen + 1
	maxCodeRawSize = 64
)

var crockfordValue = func() [256]int8 {
	var v [256]int8
	for i := range v {
		v[i] = -1
	}
	for i := 0; i < len(crockford); i++ {
		v[crockford[i]] = int8(i)
	}
	// Crockford's decoding aliases for symbols people confuse.
	v['O'], v['I'], v['L'] = 0, 1, 1
	return v
}()

// NewCouponCode returns a fresh random coupon code in canonical form.
func NewCouponCode() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return couponCode(binary.BigEndian.Uint64(b[:]))
}

// fillCouponCodes replaces every element of codes with a fresh random code,
// reading the randomness for all of them from crypto/rand at once: one read of
// 8 bytes per code costs more than building the code.
func fillCouponCodes(codes []string) {
	b := make([]byte, 8*len(codes))
	_, _ = rand.Read(b)
	for i := range codes {
		codes[i] = couponCode(binary.BigEndian.Uint64(b[8*i:]))
	}
}

// couponCode spells the low 60 bits of n as a canonical code with its check
// symbol, computing the check from the symbols' values as they are drawn.
func couponCode(n uint64) string {
	var out [couponCodeLen]byte
	// Luhn mod 32 doubles every second symbol counting from the right, so
	// the last random symbol (i = codeRandomLen-1) is doubled.
	sum := 0
	for i := 0; i < codeRandomLen; i++ {
		v := int(n & 31)
		n >>= 5
		out[i] = crockford[v]
		if (codeRandomLen-1-i)%2 == 0 {
			v *= 2
		}
		sum += v/32 + v%32
	}
	out[codeRandomLen] = crockford[(32-sum%32)%32]
	return string(out[:])
}

// luhnCheck returns the Luhn mod 32 check symbol of canonical symbols.
func luhnCheck(symbols []byte) byte {
	factor, sum := 2, 0
	for i := len(symbols) - 1; i >= 0; i-- {
		addend := factor * int(crockfordValue[symbols[i]])
		factor = 3 - factor
		sum += addend/32 + addend%32
	}
	return crockford[(32-sum%32)%32]
}

// NormalizeCouponCode turns what a person typed or a scanner read into the
// canonical code: surrounding space trimmed, upper case, dashes and inner spaces
// dropped, and Crockford's aliases (O for 0, I and L for 1) decoded. It fails
// with BAD_USER_INPUT when the result is not a well-formed code or its check
// symbol does not match, so a mistyped code is caught before any lookup.
func NormalizeCouponCode(raw string) (string, error) {
	if len(raw) > maxCodeRawSize {
		return "", invalidf("coupon code is too long")
	}
	var b strings.Builder
	for _, r := range strings.TrimSpace(raw) {
		switch {
		case r == '-' || r == ' ':
			continue
		case r > 0x7f:
			return "", invalidf("coupon code may only contain letters, digits and dashes")
		}
		c := byte(r)
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		v := crockfordValue[c]
		if v < 0 {
			return "", invalidf("coupon code contains %q, which is not used in codes", r)
		}
		b.WriteByte(crockford[v])
	}
	code := b.String()
	if len(code) != couponCodeLen {
		return "", invalidf("coupon code must have %d symbols, got %d", couponCodeLen, len(code))
	}
	if luhnCheck([]byte(code[:codeRandomLen])) != code[codeRandomLen] {
		return "", invalidf("coupon code %s is mistyped: its check symbol does not match", FormatCouponCode(code))
	}
	return code, nil
}

// FormatCouponCode groups a canonical code for people: XXXX-XXXX-XXXX-C.
func FormatCouponCode(code string) string {
	if len(code) != couponCodeLen {
		return code
	}
	return code[0:4] + "-" + code[4:8] + "-" + code[8:12] + "-" + code[12:]
}
