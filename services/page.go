package services

import (
	"encoding/base64"
	"strconv"
	"strings"

	"gorm.io/gorm"
)

// PageArgs asks for one page of a list ordered newest first.
type PageArgs struct {
	// First is the page size, 1 to 100; 0 means 20.
	First int
	// After is the cursor of the last row of the previous page, or empty.
	After string
}

// Page is one page of a list.
type Page[T any] struct {
	Items       []T
	HasNextPage bool
}

// MaxPageSize caps every list.
const MaxPageSize = 100

// EncodeCursor makes the opaque cursor of a row id.
func EncodeCursor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("id:" + strconv.FormatInt(id, 10)))
}

func decodeCursor(c string) (int64, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		if s, ok := strings.CutPrefix(string(b), "id:"); ok {
			if id, err := strconv.ParseInt(s, 10, 64); err == nil && id > 0 {
				return id, nil
			}
		}
	}
	return 0, invalidf("after is not a cursor returned by this list")
}

// paginate applies page args to a query over a table with an id column and
// loads one row more than asked to learn whether another page follows.
func paginate[T any](q *gorm.DB, table string, p PageArgs) (Page[T], error) {
	size := p.First
	switch {
	case size == 0:
		size = 20
	case size < 1 || size > MaxPageSize:
		return Page[T]{}, invalidf("first must be between 1 and %d", MaxPageSize)
	}
	if p.After != "" {
		id, err := decodeCursor(p.After)
		if err != nil {
			return Page[T]{}, err
		}
		q = q.Where(table+".id < ?", id)
	}
	var rows []T
	if err := q.Order(table + ".id DESC").Limit(size + 1).Find(&rows).Error; err != nil {
		return Page[T]{}, err
	}
	if len(rows) > size {
		return Page[T]{Items: rows[:size], HasNextPage: true}, nil
	}
	return Page[T]{Items: rows}, nil
}
