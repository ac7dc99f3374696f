package services

import (
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// A time range's bounds are written the same way everywhere (audit log,
// exports, statements): an RFC 3339 time, taken as it is, or a date
// YYYY-MM-DD, which means a local day of the merchant. From is inclusive, To
// exclusive; a date as To therefore means the start of the next day, so the
// day itself is included.

// parseBound reads a bound of a time range: an RFC 3339 time as it is, or a
// date YYYY-MM-DD in loc, which stands for the start of that day or, for an
// end bound, the start of the next (so the day is included). Empty is the
// zero time, no bound. Anything else is BAD_USER_INPUT naming the bound.
func parseBound(name, s string, loc *time.Location, end bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	d, err := time.ParseInLocation(time.DateOnly, s, loc)
	if err != nil {
		return time.Time{}, invalidf("%s must be an RFC 3339 time or a date YYYY-MM-DD", name)
	}
	if end {
		d = d.AddDate(0, 0, 1)
	}
	return d.UTC(), nil
}

// merchantRange parses from and to (see parseBound) in the time zone of the
// merchant, which it reads only when one of them is given. The results are
// UTC; a zero time is no bound. A to before from is BAD_USER_INPUT.
func merchantRange(db *gorm.DB, merchantID int64, from, to string) (time.Time, time.Time, error) {
	if strings.TrimSpace(from) == "" && strings.TrimSpace(to) == "" {
		return time.Time{}, time.Time{}, nil
	}
	loc, err := merchantLocation(db, merchantID)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	f, err := parseBound("from", from, loc, false)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	t, err := parseBound("to", to, loc, true)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	if !f.IsZero() && !t.IsZero() && t.Before(f) {
		return time.Time{}, time.Time{}, invalidf("to must not be before from")
	}
	return f, t, nil
}

// merchantLocation is the time zone of a merchant.
func merchantLocation(db *gorm.DB, merchantID int64) (*time.Location, error) {
	m, err := models.MerchantByID(db, merchantID)
	if err != nil {
		return nil, fmt.Errorf("find merchant %d: %w", merchantID, err)
	}
	loc, err := time.LoadLocation(m.Timezone)
	if err != nil {
		return nil, fmt.Errorf("time zone of merchant %d: %w", m.ID, err)
	}
	return loc, nil
}
