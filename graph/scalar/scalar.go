// Package scalar holds the GraphQL scalars coupond maps onto Go types.
package scalar

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
)

// MarshalInt64ID writes a row id as a GraphQL ID (a string).
func MarshalInt64ID(id int64) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.Quote(strconv.FormatInt(id, 10)))
	})
}

// UnmarshalInt64ID reads a GraphQL ID, given as a string or a number, into a
// row id. It fails for anything but a positive integer.
func UnmarshalInt64ID(v any) (int64, error) {
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case json.Number:
		s = v.String()
	case int64:
		s = strconv.FormatInt(v, 10)
	case int:
		s = strconv.Itoa(v)
	default:
		return 0, fmt.Errorf("an ID must be a string")
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("%q is not a valid ID", s)
	}
	return id, nil
}

// MarshalInt64 writes an integer.
func MarshalInt64(i int64) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.FormatInt(i, 10))
	})
}

// UnmarshalInt64 reads a GraphQL Int strictly: a JSON number without fraction
// or exponent. Unlike gqlgen's default it refuses strings such as "5000", so a
// client bug cannot slip through as an amount.
func UnmarshalInt64(v any) (int64, error) {
	switch v := v.(type) {
	case json.Number:
		return strconv.ParseInt(string(v), 10, 64)
	case int64:
		return v, nil
	case int:
		return int64(v), nil
	case int32:
		return int64(v), nil
	default:
		return 0, fmt.Errorf("%T is not an Int", v)
	}
}
