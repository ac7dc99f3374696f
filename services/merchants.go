package services

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// Merchants manages tenants. It has no actor: merchants are created from the CLI.
type Merchants struct {
	db  *gorm.DB
	now func() time.Time
}

var merchantCodePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// DefaultTimezone is the time zone of a merchant created without one.
const DefaultTimezone = "Asia/Shanghai"

// Create adds a merchant. The code is 1 to 32 lower-case letters, digits, _ or -;
// timezone is an IANA name (default Asia/Shanghai). A taken code is a CONFLICT.
func (m *Merchants) Create(ctx context.Context, code, name, timezone string) (*models.Merchant, error) {
	if !merchantCodePattern.MatchString(code) {
		return nil, invalidf("merchant code must be 1 to 32 lower-case letters, digits, _ or -")
	}
	if strings.TrimSpace(name) == "" {
		name = code
	}
	if err := checkText("name", name, 100, false); err != nil {
		return nil, err
	}
	if timezone == "" {
		timezone = DefaultTimezone
	}
	if _, err := time.LoadLocation(timezone); err != nil {
		return nil, invalidf("unknown time zone %q", timezone)
	}
	mc := &models.Merchant{Code: code, Name: strings.TrimSpace(name), Timezone: timezone, CreatedAt: m.now()}
	err := models.InsertMerchant(m.db.WithContext(ctx), mc)
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return nil, conflictf("merchant %s already exists", code)
	}
	if err != nil {
		return nil, fmt.Errorf("create merchant: %w", err)
	}
	return mc, nil
}

// ByCode returns a merchant by code, or NOT_FOUND.
func (m *Merchants) ByCode(ctx context.Context, code string) (*models.Merchant, error) {
	mc, err := models.MerchantByCode(m.db.WithContext(ctx), code)
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, notFoundf("merchant %s not found", code)
	}
	return mc, err
}

// Current returns the actor's merchant.
func (m *Merchants) Current(ctx context.Context, actor Actor) (*models.Merchant, error) {
	if actor.MerchantID == 0 {
		return nil, errUnauthenticated
	}
	return models.MerchantByID(m.db.WithContext(ctx), actor.MerchantID)
}
