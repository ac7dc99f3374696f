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

// Imported codes (importCoupons) come from the merchant's own source: 6 to 32
// of A-Z and 0-9, with no check symbol, so nothing can be checked before the
// lookup and they are only as hard to guess as their source made them. Every
// lookup that finds no coupon counts against the failed-lookup limits, theirs
// as any other.
const (
	MinImportedCodeLen = 6
	MaxImportedCodeLen = 32
)

// NormalizeImportedCode turns an imported code as written into its plain
// form: surrounding space trimmed, upper case, dashes and inner spaces
// dropped. Unlike generated codes there are no aliases: O, I and L are
// letters of their own. It fails with BAD_USER_INPUT unless the result is 6
// to 32 of A-Z and 0-9.
func NormalizeImportedCode(raw string) (string, error) {
	if len(raw) > 2*maxCodeRawSize {
		return "", invalidf("code is too long")
	}
	var b strings.Builder
	for _, r := range strings.TrimSpace(raw) {
		switch {
		case r == '-' || r == ' ':
			continue
		case r >= 'a' && r <= 'z':
			r -= 'a' - 'A'
		case (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'):
		default:
			return "", invalidf("code may only contain A-Z, 0-9, spaces and dashes, not %q", r)
		}
		b.WriteRune(r)
	}
	code := b.String()
	if len(code) < MinImportedCodeLen || len(code) > MaxImportedCodeLen {
		return "", invalidf("code must have %d to %d letters and digits, got %d", MinImportedCodeLen, MaxImportedCodeLen, len(code))
	}
	return code, nil
}

// importedCodeKey is the form an imported code is stored in, which is the
// form a lookup of it computes (see lookupCode): a code that reads as a
// well-formed generated code is stored as NormalizeCouponCode spells it (its
// aliases decoded), every other one in its plain form.
func importedCodeKey(raw string) (string, error) {
	plain, err := NormalizeImportedCode(raw)
	if err != nil {
		return "", err
	}
	if code, err := NormalizeCouponCode(plain); err == nil {
		return code, nil
	}
	return plain, nil
}

// codeKey is what a typed code is looked up by.
type codeKey struct {
	code string
	// mistyped, when set, answers a lookup that finds nothing: the code
	// has the length of a generated code and fails its check, so it is a
	// mistyped generated code unless the merchant imported it.
	mistyped error
}

// lookupCode returns the key a typed code is looked up by. A well-formed
// generated code (its check symbol matching) is looked up as such; anything
// else that could be an imported code is looked up in its plain form, which
// only an imported code can have; the rest is BAD_USER_INPUT before any
// lookup, as a generated code that fails its check always was.
func lookupCode(raw string) (codeKey, error) {
	code, gerr := NormalizeCouponCode(raw)
	if gerr == nil {
		return codeKey{code: code}, nil
	}
	plain, ierr := NormalizeImportedCode(raw)
	if ierr != nil {
		return codeKey{}, gerr
	}
	k := codeKey{code: plain}
	if len(plain) == couponCodeLen {
		k.mistyped = gerr
	}
	return k, nil
}

// notFound is the answer to a lookup of k that found no coupon: the
// mistyped-code error for what looks like a mistyped generated code,
// COUPON_NOT_FOUND otherwise. Either way the caller counts a failed lookup.
func (k codeKey) notFound() error {
	if k.mistyped != nil {
		return k.mistyped
	}
	return ErrCouponNotFound
}
