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

// Stores manages a merchant's shops.
type Stores struct {
	db    *gorm.DB
	now   func() time.Time
	audit *Audit
}

// CreateStoreInput names a new store.
type CreateStoreInput struct {
	Code string
	Name string
	// RequestID, optional, makes the call idempotent (see adminRequest).
	RequestID string
}

var storeCodePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)

// Create adds a store; administrators only. A code already used by the merchant
// is a CONFLICT. With a request id, a repeat returns the first result.
func (s *Stores) Create(ctx context.Context, actor Actor, in CreateStoreInput) (*models.Store, error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return nil, err
	}
	in.Code, in.Name = strings.TrimSpace(in.Code), strings.TrimSpace(in.Name)
	if !storeCodePattern.MatchString(in.Code) {
		return nil, invalidf("code must be 1 to 32 letters, digits, _ or -, starting with a letter or digit")
	}
	if in.Name == "" {
		return nil, invalidf("name is required")
	}
	if err := checkText("name", in.Name, 100, false); err != nil {
		return nil, err
	}
	req, err := newAdminRequest(actor, "createStore", in.RequestID, in.Code, in.Name)
	if err != nil {
		return nil, err
	}
	db := s.db.WithContext(ctx)
	var prior models.Store
	if ok, err := req.replayed(db, &prior); err != nil {
		return nil, err
	} else if ok {
		return &prior, nil
	}
	st := &models.Store{MerchantID: actor.MerchantID, Code: in.Code, Name: in.Name, CreatedAt: s.now()}
	err = db.Transaction(func(tx *gorm.DB) error {
		if err := models.InsertStore(tx, st); err != nil {
			return err
		}
		if err := s.audit.record(tx, actor, "store.create", fmt.Sprintf("store:%d", st.ID), st.Code, nil); err != nil {
			return err
		}
		return req.record(tx, st, st.CreatedAt)
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		if ok, err := req.replayed(db, &prior); err != nil {
			return nil, err
		} else if ok {
			return &prior, nil
		}
		return nil, conflictf("a store with code %s already exists", in.Code)
	}
	if err != nil {
		return nil, fmt.Errorf("create store: %w", err)
	}
	return st, nil
}

// List returns the merchant's stores, newest first; a clerk sees its own stores.
func (s *Stores) List(ctx context.Context, actor Actor, p PageArgs) (Page[models.Store], error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance, models.RoleClerk); err != nil {
		return Page[models.Store]{}, err
	}
	var only []int64
	if actor.Role == models.RoleClerk {
		only = append([]int64{}, actor.StoreIDs...)
	}
	return paginate[models.Store](models.StoresOf(s.db.WithContext(ctx), actor.MerchantID, only), "stores", p)
}

// ByIDs returns the merchant's stores among ids, for batch loaders (a
// mini-program's redemptions and campaigns name their stores too).
func (s *Stores) ByIDs(ctx context.Context, actor Actor, ids []int64) ([]models.Store, error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance, models.RoleClerk, models.RoleApp); err != nil {
		return nil, err
	}
	return models.StoresByIDs(s.db.WithContext(ctx), actor.MerchantID, ids)
}

// ByCode returns a store of a merchant by its code.
func (s *Stores) ByCode(ctx context.Context, merchantID int64, code string) (*models.Store, error) {
	st, err := models.StoreByCode(s.db.WithContext(ctx), merchantID, code)
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, notFoundf("store %s not found", code)
	}
	return st, err
}
