package graph

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
)

// maxBodyDepth is how deeply scanBody follows nested variables before it
// leaves the body to decodeBody.
const maxBodyDepth = 32

// scanBody reads the parameters of the usual POST body in one pass: an
// object of "query", "operationName", "variables" and "extensions" with
// values of the right types. It reports false for anything else: any other
// key, a value of another type, a null query, malformed JSON, a string with
// bytes it does not copy as they are, nesting deeper than maxBodyDepth. Then
// decodeBody decodes the body with encoding/json, which either accepts it or
// says what is wrong with it. What scanBody accepts, it reads exactly as
// that decoding does (FuzzScanBody holds it to that): numbers as
// json.Number, the last of repeated keys, a missing query only with a
// persisted query's hash. encoding/json took 47 allocations and five passes
// over each redemption's body, 9% of the handler's CPU.
func scanBody(b []byte) (*graphql.RawParams, bool) {
	s := bodyScanner{b: b}
	p := &graphql.RawParams{}
	s.space()
	hasQuery := false
	read := s.members(s.plainString, func(key string) bool {
		var ok bool
		switch key {
		case "query":
			p.Query, ok = s.string()
			hasQuery = true
		case "operationName":
			if ok = s.null(); !ok {
				p.OperationName, ok = s.string()
			} else {
				p.OperationName = ""
			}
		case "variables":
			p.Variables, ok = s.objectOrNull()
		case "extensions":
			p.Extensions, ok = s.objectOrNull()
		}
		return ok
	})
	if !read {
		return nil, false
	}
	s.space()
	if s.i != len(s.b) {
		return nil, false
	}
	if !hasQuery && !persisted(p) {
		return nil, false
	}
	return p, true
}

// bodyScanner reads JSON from b at i.
type bodyScanner struct {
	b     []byte
	i     int
	depth int
}

func (s *bodyScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// byte consumes c if it is next.
func (s *bodyScanner) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// literal consumes lit if it is next.
func (s *bodyScanner) literal(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

func (s *bodyScanner) null() bool { return s.literal("null") }

// plainString reads a string with no escapes, no control characters and
// valid UTF-8, whose bytes are its value.
func (s *bodyScanner) plainString() (string, bool) {
	if !s.byte('"') {
		return "", false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			if !utf8.Valid(v) {
				return "", false
			}
			return string(v), true
		case c == '\\' || c < 0x20:
			return "", false
		}
		s.i++
	}
	return "", false
}

// string reads any JSON string. One with escapes is unquoted by
// encoding/json, so its value is exactly what encoding/json makes of it.
func (s *bodyScanner) string() (string, bool) {
	start := s.i
	if v, ok := s.plainString(); ok {
		return v, true
	}
	s.i = start
	if !s.byte('"') {
		return "", false
	}
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '\\':
			s.i += 2
			continue
		case c == '"':
			s.i++
			var v string
			if json.Unmarshal(s.b[start:s.i], &v) != nil {
				return "", false
			}
			return v, true
		}
		s.i++
	}
	return "", false
}

// number reads a JSON number as json.Number, its text.
func (s *bodyScanner) number() (json.Number, bool) {
	start := s.i
	s.byte('-')
	switch {
	case s.byte('0'):
	case s.digits():
	default:
		return "", false
	}
	if s.byte('.') && !s.digits() {
		return "", false
	}
	if s.byte('e') || s.byte('E') {
		if !s.byte('+') {
			s.byte('-')
		}
		if !s.digits() {
			return "", false
		}
	}
	return json.Number(s.b[start:s.i]), true
}

// digits consumes one or more decimal digits.
func (s *bodyScanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// objectOrNull reads an object, or null as a nil map.
func (s *bodyScanner) objectOrNull() (map[string]any, bool) {
	if s.null() {
		return nil, true
	}
	return s.object()
}

func (s *bodyScanner) object() (map[string]any, bool) {
	if s.depth++; s.depth > maxBodyDepth {
		return nil, false
	}
	defer func() { s.depth-- }()
	m := map[string]any{}
	read := s.members(s.string, func(key string) bool {
		var ok bool
		m[key], ok = s.value()
		return ok
	})
	return m, read
}

// members reads an object, each key with key and each value with value,
// which is given the key and consumes the value.
func (s *bodyScanner) members(key func() (string, bool), value func(key string) bool) bool {
	if !s.byte('{') {
		return false
	}
	s.space()
	if s.byte('}') {
		return true
	}
	for {
		k, ok := key()
		if !ok {
			return false
		}
		s.space()
		if !s.byte(':') {
			return false
		}
		s.space()
		if !value(k) {
			return false
		}
		if end, ok := s.after('}'); end || !ok {
			return ok
		}
	}
}

// after reads what follows a member or an element: the closing byte (end),
// or a comma and the space after it.
func (s *bodyScanner) after(closing byte) (end, ok bool) {
	s.space()
	if s.byte(closing) {
		return true, true
	}
	if !s.byte(',') {
		return false, false
	}
	s.space()
	return false, true
}

func (s *bodyScanner) array() ([]any, bool) {
	if !s.byte('[') {
		return nil, false
	}
	if s.depth++; s.depth > maxBodyDepth {
		return nil, false
	}
	defer func() { s.depth-- }()
	a := []any{}
	s.space()
	if s.byte(']') {
		return a, true
	}
	for {
		v, ok := s.value()
		if !ok {
			return nil, false
		}
		a = append(a, v)
		if end, ok := s.after(']'); end || !ok {
			return a, ok
		}
	}
}

// value reads any JSON value as encoding/json decodes it into an interface
// with UseNumber.
func (s *bodyScanner) value() (any, bool) {
	if s.i >= len(s.b) {
		return nil, false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.string()
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == 't':
		return true, s.literal("true")
	case c == 'f':
		return false, s.literal("false")
	case c == 'n':
		return nil, s.null()
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return nil, false
}
