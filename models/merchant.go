package models

import (
	"time"

	"gorm.io/gorm"
)

// Merchant is a tenant: a chain of stores.
type Merchant struct {
	ID        int64
	Code      string
	Name      string
	Timezone  string
	CreatedAt time.Time
}

// InsertMerchant inserts a merchant and sets its ID; a code that exists is
// gorm.ErrDuplicatedKey.
func InsertMerchant(db *gorm.DB, m *Merchant) error { return db.Create(m).Error }

// MerchantByID returns a merchant; an unknown id is gorm.ErrRecordNotFound.
func MerchantByID(db *gorm.DB, id int64) (*Merchant, error) {
	var m Merchant
	if err := db.Take(&m, id).Error; err != nil {
		return nil, err
	}
	return &m, nil
}

// MerchantByCode returns the merchant with the code, or
// gorm.ErrRecordNotFound.
func MerchantByCode(db *gorm.DB, code string) (*Merchant, error) {
	var m Merchant
	if err := db.Where("code = ?", code).Take(&m).Error; err != nil {
		return nil, err
	}
	return &m, nil
}

// Merchants returns every merchant in id order, or only the one with id
// when id is not 0.
func Merchants(db *gorm.DB, id int64) ([]Merchant, error) {
	var ms []Merchant
	q := db.Order("id")
	if id != 0 {
		q = q.Where("id = ?", id)
	}
	return ms, q.Find(&ms).Error
}
