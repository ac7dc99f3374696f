package models

import (
	"gorm.io/gorm"
)

// AllowanceScope says what a redemption allowance counts.
type AllowanceScope string

// Allowance scopes: a customer's uses over the campaign, a customer's uses
// in one day, a store's uses in one day (days in the merchant's time zone).
const (
	AllowanceCustomer    AllowanceScope = "CUSTOMER"
	AllowanceCustomerDay AllowanceScope = "CUSTOMER_DAY"
	AllowanceStoreDay    AllowanceScope = "STORE_DAY"
)

// Allowance is one counter of successful (or held) uses a redemption counts
// against: scope, subject (a customer reference or a store id), day
// (YYYY-MM-DD, "" for the campaign-long count) and its limit.
type Allowance struct {
	Scope   AllowanceScope
	Subject string
	Day     string
	Limit   int64
}

// TakeAllowances counts one use against each allowance of the merchant's
// campaign, in order, each with one upsert that applies only while the
// count is below the limit (the row is locked by the upsert and the limit
// judged on its latest value, so concurrent takes queue on it and never pass
// the limit together). It returns the index of the first allowance whose
// limit is reached, or -1 when every one counted the use. On a reached limit
// the caller's transaction must roll back, undoing the counts before it.
func TakeAllowances(tx *gorm.DB, merchantID, campaignID int64, as []Allowance) (int, error) {
	for i, a := range as {
		res := tx.Exec(`INSERT INTO redemption_allowances (merchant_id, campaign_id, scope, subject, day, used)
VALUES (?, ?, ?, ?, ?, 1)
ON CONFLICT (merchant_id, campaign_id, scope, subject, day)
DO UPDATE SET used = redemption_allowances.used + 1 WHERE redemption_allowances.used < ?`,
			merchantID, campaignID, string(a.Scope), a.Subject, a.Day, a.Limit)
		if res.Error != nil {
			return 0, res.Error
		}
		if res.RowsAffected != 1 {
			return i, nil
		}
	}
	return -1, nil
}

// ReturnAllowances gives one use back to each allowance: a released or
// refunded use no longer counts. Conditional on a count above zero, so a
// use is never given back below nothing.
func ReturnAllowances(tx *gorm.DB, merchantID, campaignID int64, as []Allowance) error {
	for _, a := range as {
		err := tx.Exec(`UPDATE redemption_allowances SET used = used - 1
WHERE merchant_id = ? AND campaign_id = ? AND scope = ? AND subject = ? AND day = ? AND used > 0`,
			merchantID, campaignID, string(a.Scope), a.Subject, a.Day).Error
		if err != nil {
			return err
		}
	}
	return nil
}

// FirstReachedAllowance returns the index of the first allowance whose limit
// is reached now, or -1; it only reads, for quotes and explanations.
func FirstReachedAllowance(db *gorm.DB, merchantID, campaignID int64, as []Allowance) (int, error) {
	for i, a := range as {
		var used []int64
		err := scanRaw(db, &used, `SELECT used FROM redemption_allowances
WHERE merchant_id = ? AND campaign_id = ? AND scope = ? AND subject = ? AND day = ?`,
			merchantID, campaignID, string(a.Scope), a.Subject, a.Day).Error
		if err != nil {
			return 0, err
		}
		if len(used) == 1 && used[0] >= a.Limit {
			return i, nil
		}
	}
	return -1, nil
}
