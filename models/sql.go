package models

import (
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// placeholders is a parenthesised list of n "?" placeholders.
func placeholders(n int) string {
	return "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
}

// translate maps a driver error to GORM's (gorm.ErrDuplicatedKey, ...), which
// TranslateError does for Exec and Create but not for Raw(...).Scan.
func translate(tx *gorm.DB, err error) error {
	if t, ok := tx.Dialector.(gorm.ErrorTranslator); ok {
		return t.Translate(err)
	}
	return err
}

// IDRangeTables are the tables IDRange walks: a merchant's coupons, orders
// and campaigns, each keyed by (merchant_id, id).
var IDRangeTables = map[string]bool{"coupons": true, "orders": true, "campaigns": true}

// IDRange returns the smallest id of merchantID's rows in table and one past
// the largest, from the table's (merchant_id, id) key; ok is false when the
// merchant has none. table must be one of IDRangeTables.
func IDRange(db *gorm.DB, table string, merchantID int64) (lo, hi int64, ok bool, err error) {
	if !IDRangeTables[table] {
		return 0, 0, false, fmt.Errorf("id range of %q: not a merchant table", table)
	}
	var r struct{ Lo, Hi *int64 }
	if err := db.Raw("SELECT MIN(id) AS lo, MAX(id) AS hi FROM "+table+" WHERE merchant_id = ?", merchantID).Scan(&r).Error; err != nil {
		return 0, 0, false, fmt.Errorf("id range of %s: %w", table, err)
	}
	if r.Lo == nil || r.Hi == nil {
		return 0, 0, false, nil
	}
	return *r.Lo, *r.Hi + 1, true, nil
}

// IDAfter returns the id n rows past from among merchantID's rows of table
// in id order: [from, id) holds n of them. ok is false when n or fewer
// remain at or after from. It walks the table's (merchant_id, id) key, so a
// batch of n rows costs the same whether the merchant's ids are dense or
// spread among other merchants'. table must be one of IDRangeTables.
func IDAfter(db *gorm.DB, table string, merchantID, from int64, n int) (id int64, ok bool, err error) {
	if !IDRangeTables[table] {
		return 0, false, fmt.Errorf("id after in %q: not a merchant table", table)
	}
	var ids []int64
	if err := db.Raw("SELECT id FROM "+table+" WHERE merchant_id = ? AND id >= ? ORDER BY merchant_id, id LIMIT 1 OFFSET ?",
		merchantID, from, n).Scan(&ids).Error; err != nil {
		return 0, false, fmt.Errorf("id after in %s: %w", table, err)
	}
	if len(ids) == 0 {
		return 0, false, nil
	}
	return ids[0], true, nil
}
