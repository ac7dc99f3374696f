package services

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// checkText validates free text a person typed: valid UTF-8 (a decoder that
// met invalid bytes leaves U+FFFD, refused too), no control characters but
// line breaks and tabs where multiline, and at most max characters.
func checkText(field, s string, max int, multiline bool) error {
	if !utf8.ValidString(s) || strings.ContainsRune(s, utf8.RuneError) {
		return invalidf("%s is not valid UTF-8 text", field)
	}
	if utf8.RuneCountInString(s) > max {
		return invalidf("%s must be at most %d characters", field, max)
	}
	for _, r := range s {
		if unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\t' || r == '\r')) {
			return invalidf("%s must not contain control characters", field)
		}
	}
	return nil
}
