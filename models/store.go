package models

import (
	"time"

	"gorm.io/gorm"
)

// Store is one shop of a merchant.
type Store struct {
	ID         int64
	MerchantID int64
	Code       string
	Name       string
	CreatedAt  time.Time
}

// ExistingStores returns those of ids that are stores of the merchant, with
// one query.
func ExistingStores(db *gorm.DB, merchantID int64, ids []int64) ([]int64, error) {
	var known []int64
	err := db.Model(&Store{}).Where("merchant_id = ? AND id IN ?", merchantID, ids).Pluck("id", &known).Error
	return known, err
}

// InsertStore inserts a store and sets its ID; a code the merchant already
// has is gorm.ErrDuplicatedKey.
func InsertStore(tx *gorm.DB, st *Store) error { return tx.Create(st).Error }

// StoreByCode returns the merchant's store with the code, or
// gorm.ErrRecordNotFound.
func StoreByCode(db *gorm.DB, merchantID int64, code string) (*Store, error) {
	var st Store
	if err := db.Where("merchant_id = ? AND code = ?", merchantID, code).Take(&st).Error; err != nil {
		return nil, err
	}
	return &st, nil
}

// StoresOf is the query of the merchant's stores, limited to ids when any
// are given, for paging or finding.
func StoresOf(db *gorm.DB, merchantID int64, ids []int64) *gorm.DB {
	q := db.Model(&Store{}).Where("merchant_id = ?", merchantID)
	if ids != nil {
		q = q.Where("id IN ?", ids)
	}
	return q
}

// StoresByIDs returns the merchant's stores among ids.
func StoresByIDs(db *gorm.DB, merchantID int64, ids []int64) ([]Store, error) {
	var out []Store
	return out, db.Where("merchant_id = ? AND id IN ?", merchantID, ids).Find(&out).Error
}
