package models

import (
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// StatementDay is one stored line of a merchant's daily statement: the
// business of one store (StoreID 0: no store, as for expiries and voids) and
// one campaign on one local day (YYYY-MM-DD in the merchant's zone). The row
// with StoreID 0 and CampaignID 0 is the day's own row: it exists once the
// day is stored, holds the day's totals, and its ClosedAt says whether the
// day is closed. Every line of a closed day carries the same ClosedAt and is
// never written again.
type StatementDay struct {
	ID             int64
	MerchantID     int64
	Day            string
	StoreID        int64
	CampaignID     int64
	RedeemedCount  int64
	RedeemedAmount int64
	RefundedCount  int64
	RefundedAmount int64
	ExpiredCount   int64
	ExpiredValue   int64
	VoidedCount    int64
	ClosedAt       *time.Time
	ComputedAt     time.Time
}

// IsDayRow reports whether r is the day's own row rather than a line.
func (r *StatementDay) IsDayRow() bool { return r.StoreID == 0 && r.CampaignID == 0 }

// StatementAdjustment is business that reached a closed day after it was
// closed, booked on Day (the day it was found) against ClosedDay, for one
// store and campaign and one figure (Kind). Count and Amount are what the
// closed day's live figures exceed its frozen line by (negative when they
// fell short); Amount is the discount, refund or face value.
type StatementAdjustment struct {
	ID         int64
	MerchantID int64
	Day        string
	ClosedDay  string
	StoreID    int64
	CampaignID int64
	Kind       AdjustmentKind
	Count      int64
	Amount     int64
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// AdjustmentKind names the figure of a statement line an adjustment corrects.
type AdjustmentKind string

// Adjustment kinds, one per figure of a statement line.
const (
	AdjustRedeemed AdjustmentKind = "REDEEMED"
	AdjustRefunded AdjustmentKind = "REFUNDED"
	AdjustExpired  AdjustmentKind = "EXPIRED"
	AdjustVoided   AdjustmentKind = "VOIDED"
)

// faceValueSQL is the face value of a coupon of campaign row k, in fen: the
// value of a CASH or EXCHANGE coupon, and the cap of a DISCOUNT coupon (0
// when it has none: a percentage without a cap has no face value). It is the
// one home of the rule; statements' expired value and the liability use it.
func faceValueSQL(k string) string {
	return `CASE WHEN ` + k + `.type = 'DISCOUNT' THEN ` + k + `.max_discount ELSE ` + k + `.value END`
}

// StatementFigures is the ledger's business of one store and campaign on one
// day of a statement's range (Day is the index of the day in the range).
type StatementFigures struct {
	Day            int
	StoreID        int64
	CampaignID     int64
	RedeemedCount  int64
	RedeemedAmount int64
	RefundedCount  int64
	RefundedAmount int64
	ExpiredCount   int64
	ExpiredValue   int64
	VoidedCount    int64
}

// StatementFiguresOf computes the merchant's business from the ledger for the
// days whose UTC bounds are given (n+1 bounds for n days), per day, store and
// campaign: redemptions that succeeded (by finished_at), refunds made (by
// created_at), coupons expired and voided (by their transition's created_at,
// at store 0). With storeID other than 0 only that store's business is
// counted, and no expiries or voids.
func StatementFiguresOf(db *gorm.DB, merchantID int64, bounds []time.Time, storeID int64) ([]StatementFigures, error) {
	type agg struct {
		Day        int
		StoreID    int64
		CampaignID int64
		Cnt        int64
		Amount     int64
	}
	query := func(what, from, ts, store, amount, where string) ([]agg, error) {
		day, args := dayCase("x."+ts, bounds)
		q := `SELECT ` + day + ` AS day, ` + store + ` AS store_id, c.campaign_id, COUNT(*) AS cnt, COALESCE(SUM(` + amount + `), 0) AS amount
FROM ` + from + `
WHERE x.merchant_id = ? AND ` + where + ` AND x.` + ts + ` >= ? AND x.` + ts + ` < ?`
		args = append(args, merchantID, bounds[0], bounds[len(bounds)-1])
		if storeID != 0 {
			q += " AND " + store + " = ?"
			args = append(args, storeID)
		}
		q += " GROUP BY 1, 2, c.campaign_id"
		var rows []agg
		if err := scanRaw(db, &rows, q, args...).Error; err != nil {
			return nil, fmt.Errorf("statement of %s: %w", what, err)
		}
		return rows, nil
	}
	byKey := map[[3]int64]*StatementFigures{}
	var order [][3]int64
	add := func(rows []agg, set func(f *StatementFigures, r agg)) {
		for _, r := range rows {
			k := [3]int64{int64(r.Day), r.StoreID, r.CampaignID}
			f := byKey[k]
			if f == nil {
				f = &StatementFigures{Day: r.Day, StoreID: r.StoreID, CampaignID: r.CampaignID}
				byKey[k] = f
				order = append(order, k)
			}
			set(f, r)
		}
	}
	redeemed, err := query("redemptions", "redemption_flows x JOIN coupons c ON c.id = x.coupon_id",
		"finished_at", "x.store_id", "x.discount_amount", "x.status = 'SUCCEEDED'")
	if err != nil {
		return nil, err
	}
	add(redeemed, func(f *StatementFigures, r agg) { f.RedeemedCount, f.RedeemedAmount = r.Cnt, r.Amount })
	refunded, err := query("refunds", "refund_flows x JOIN coupons c ON c.id = x.coupon_id",
		"created_at", "x.store_id", "x.amount", "x.status = 'SUCCEEDED'")
	if err != nil {
		return nil, err
	}
	add(refunded, func(f *StatementFigures, r agg) { f.RefundedCount, f.RefundedAmount = r.Cnt, r.Amount })
	if storeID == 0 {
		// Expiries and voids belong to no store: the store they are booked at
		// is 0, whatever the transition row says.
		lapsed := "coupon_transitions x JOIN coupons c ON c.id = x.coupon_id JOIN campaigns k ON k.id = c.campaign_id"
		expired, err := query("expiries", lapsed, "created_at", "0", faceValueSQL("k"), "x.to_status = 'EXPIRED'")
		if err != nil {
			return nil, err
		}
		add(expired, func(f *StatementFigures, r agg) { f.ExpiredCount, f.ExpiredValue = r.Cnt, r.Amount })
		voided, err := query("voids", lapsed, "created_at", "0", "0", "x.to_status = 'VOIDED'")
		if err != nil {
			return nil, err
		}
		add(voided, func(f *StatementFigures, r agg) { f.VoidedCount = r.Cnt })
	}
	out := make([]StatementFigures, len(order))
	for i, k := range order {
		out[i] = *byKey[k]
	}
	return out, nil
}

// dayCase is a CASE expression mapping col to the index of its day.
func dayCase(col string, bounds []time.Time) (string, []any) {
	if len(bounds) == 2 {
		return "0", nil
	}
	var b strings.Builder
	args := make([]any, 0, len(bounds))
	b.WriteString("CASE")
	for i := 1; i < len(bounds)-1; i++ {
		fmt.Fprintf(&b, " WHEN %s < ? THEN %d", col, i-1)
		args = append(args, bounds[i])
	}
	fmt.Fprintf(&b, " ELSE %d END", len(bounds)-2)
	return b.String(), args
}

// StatementDaysIn returns the merchant's stored statement rows of the days
// from..to (YYYY-MM-DD, both included), day rows included.
func StatementDaysIn(db *gorm.DB, merchantID int64, from, to string) ([]StatementDay, error) {
	return statementDays(db, merchantID, from, to, false)
}

// ClosedStatementDays returns the merchant's closed statement rows of the
// days from..to, day rows included.
func ClosedStatementDays(db *gorm.DB, merchantID int64, from, to string) ([]StatementDay, error) {
	return statementDays(db, merchantID, from, to, true)
}

func statementDays(db *gorm.DB, merchantID int64, from, to string, closedOnly bool) ([]StatementDay, error) {
	q := db.Where("merchant_id = ? AND day >= ? AND day <= ?", merchantID, from, to)
	what := "stored"
	if closedOnly {
		q, what = q.Where("closed_at IS NOT NULL"), "closed"
	}
	var rows []StatementDay
	if err := q.Order("day, store_id, campaign_id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("%s statements %s..%s: %w", what, from, to, err)
	}
	return rows, nil
}

// ClaimStatementDay makes sure the merchant's day has its day row and takes
// it for writing in tx: it stamps computedAt on the row, and closedAt when
// closedAt is not nil, unless the day is already closed. It reports false,
// writing nothing, for a closed day. On PostgreSQL the update holds the day
// row's lock until tx ends, so two writers of one day take turns, and the
// second sees the first's close.
func ClaimStatementDay(tx *gorm.DB, merchantID int64, day string, computedAt time.Time, closedAt *time.Time) (bool, error) {
	err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&StatementDay{MerchantID: merchantID, Day: day,
		ComputedAt: computedAt}).Error
	if err != nil {
		return false, fmt.Errorf("day row of statement %s: %w", day, err)
	}
	res := tx.Exec(`UPDATE statement_days SET computed_at = ?, closed_at = ?
WHERE merchant_id = ? AND day = ? AND store_id = 0 AND campaign_id = 0 AND closed_at IS NULL`,
		computedAt, closedAt, merchantID, day)
	if res.Error != nil {
		return false, fmt.Errorf("claim statement %s: %w", day, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// ReplaceStatementLines replaces the lines of a day claimed in tx (see
// ClaimStatementDay) with lines, and sets the day row's totals to their sum.
// Every line gets the day row's closed_at and computed_at.
func ReplaceStatementLines(tx *gorm.DB, merchantID int64, day string, lines []StatementDay) error {
	err := tx.Exec(`DELETE FROM statement_days WHERE merchant_id = ? AND day = ? AND NOT (store_id = 0 AND campaign_id = 0)
AND closed_at IS NULL`, merchantID, day).Error
	if err != nil {
		return fmt.Errorf("clear statement %s: %w", day, err)
	}
	var dayRow StatementDay
	if err := tx.Where("merchant_id = ? AND day = ? AND store_id = 0 AND campaign_id = 0", merchantID, day).
		Take(&dayRow).Error; err != nil {
		return fmt.Errorf("day row of statement %s: %w", day, err)
	}
	total := StatementDay{}
	for i := range lines {
		l := &lines[i]
		if l.IsDayRow() {
			return fmt.Errorf("statement %s: a line without store and campaign", day)
		}
		l.ID, l.MerchantID, l.Day, l.ClosedAt, l.ComputedAt = 0, merchantID, day, dayRow.ClosedAt, dayRow.ComputedAt
		total.RedeemedCount += l.RedeemedCount
		total.RedeemedAmount += l.RedeemedAmount
		total.RefundedCount += l.RefundedCount
		total.RefundedAmount += l.RefundedAmount
		total.ExpiredCount += l.ExpiredCount
		total.ExpiredValue += l.ExpiredValue
		total.VoidedCount += l.VoidedCount
	}
	if len(lines) > 0 {
		if err := tx.CreateInBatches(lines, 200).Error; err != nil {
			return fmt.Errorf("store statement %s: %w", day, err)
		}
	}
	err = tx.Exec(`UPDATE statement_days SET redeemed_count = ?, redeemed_amount = ?, refunded_count = ?, refunded_amount = ?,
  expired_count = ?, expired_value = ?, voided_count = ?
WHERE id = ?`, total.RedeemedCount, total.RedeemedAmount, total.RefundedCount, total.RefundedAmount,
		total.ExpiredCount, total.ExpiredValue, total.VoidedCount, dayRow.ID).Error
	if err != nil {
		return fmt.Errorf("totals of statement %s: %w", day, err)
	}
	return nil
}

// StatementAdjustmentsBookedIn returns the merchant's adjustments booked on
// the days from..to.
func StatementAdjustmentsBookedIn(db *gorm.DB, merchantID int64, from, to string) ([]StatementAdjustment, error) {
	var rows []StatementAdjustment
	err := db.Where("merchant_id = ? AND day >= ? AND day <= ?", merchantID, from, to).
		Order("day, closed_day, store_id, campaign_id, kind").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("adjustments booked %s..%s: %w", from, to, err)
	}
	return rows, nil
}

// StatementAdjustmentsAgainst returns the merchant's adjustments against the
// closed days from..to, whenever they were booked.
func StatementAdjustmentsAgainst(db *gorm.DB, merchantID int64, from, to string) ([]StatementAdjustment, error) {
	var rows []StatementAdjustment
	err := db.Where("merchant_id = ? AND closed_day >= ? AND closed_day <= ?", merchantID, from, to).
		Order("closed_day, store_id, campaign_id, kind, day").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("adjustments of %s..%s: %w", from, to, err)
	}
	return rows, nil
}

// BookStatementAdjustment adds a to the adjustment booked on a.Day against
// the same closed day, store, campaign and figure, creating it if there is
// none: a difference found twice on one day is one row.
func BookStatementAdjustment(tx *gorm.DB, a StatementAdjustment) error {
	err := tx.Exec(`INSERT INTO statement_adjustments (merchant_id, day, closed_day, store_id, campaign_id, kind, count, amount, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (merchant_id, closed_day, store_id, campaign_id, kind, day) DO UPDATE SET
  count = statement_adjustments.count + excluded.count, amount = statement_adjustments.amount + excluded.amount,
  updated_at = excluded.updated_at`,
		a.MerchantID, a.Day, a.ClosedDay, a.StoreID, a.CampaignID, string(a.Kind), a.Count, a.Amount, a.CreatedAt, a.CreatedAt).Error
	if err != nil {
		return fmt.Errorf("book adjustment of %s on %s: %w", a.ClosedDay, a.Day, err)
	}
	return nil
}

// LockClosedStatementDay takes the day row of a closed day for writing in
// tx, so two runs booking its adjustments take turns on PostgreSQL (SQLite
// has one writer anyway). It reports false when the day is not closed.
func LockClosedStatementDay(tx *gorm.DB, merchantID int64, day string) (bool, error) {
	res := tx.Exec(`UPDATE statement_days SET computed_at = computed_at
WHERE merchant_id = ? AND day = ? AND store_id = 0 AND campaign_id = 0 AND closed_at IS NOT NULL`, merchantID, day)
	if res.Error != nil {
		return false, fmt.Errorf("lock closed statement %s: %w", day, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// Liability is what the unused coupons of a merchant that may still be
// redeemed are worth.
type Liability struct {
	// UnusedCount is how many UNUSED coupons have not reached their end of
	// validity.
	UnusedCount int64
	// FaceValue is their face value in fen (faceValueSQL: DISCOUNT coupons at
	// their cap).
	FaceValue int64
	// UncappedDiscountCount is how many of them are DISCOUNT coupons without
	// a cap, which add nothing to FaceValue.
	UncappedDiscountCount int64
}

// LiabilityOf computes the merchant's liability at now: its UNUSED coupons
// whose validity has not ended (an ended coupon the expiry job has not yet
// moved to EXPIRED is no longer owed) and whose campaign has not ENDED, at
// face value. A PAUSED campaign's coupons count: it may resume.
func LiabilityOf(db *gorm.DB, merchantID int64, now time.Time) (Liability, error) {
	var l Liability
	err := scanRaw(db, &l, `SELECT COUNT(*) AS unused_count, COALESCE(SUM(`+faceValueSQL("k")+`), 0) AS face_value,
  COALESCE(SUM(CASE WHEN k.type = 'DISCOUNT' AND k.max_discount = 0 THEN 1 ELSE 0 END), 0) AS uncapped_discount_count
FROM coupons c JOIN campaigns k ON k.id = c.campaign_id
WHERE c.merchant_id = ? AND c.status = 'UNUSED' AND c.valid_to > ? AND k.state <> 'ENDED'`, merchantID, now).Error
	if err != nil {
		return l, fmt.Errorf("liability of merchant %d: %w", merchantID, err)
	}
	return l, nil
}
