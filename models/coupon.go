package models

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// CouponStatus is a state of the coupon state machine.
type CouponStatus string

// Coupon states. REFUNDED, EXPIRED and VOIDED are terminal.
const (
	CouponUnused    CouponStatus = "UNUSED"
	CouponRedeeming CouponStatus = "REDEEMING"
	CouponRedeemed  CouponStatus = "REDEEMED"
	CouponRefunded  CouponStatus = "REFUNDED"
	CouponExpired   CouponStatus = "EXPIRED"
	// CouponVoided: an admin killed the code (leaked, fraud), with a reason.
	CouponVoided CouponStatus = "VOIDED"
)

// Edge is one transition of the coupon state machine.
type Edge struct{ From, To CouponStatus }

// LegalEdges are the coupon state machine's edges (DESIGN.md §2), the only
// ones a coupon may take. Reconciliation and the tests read them from here.
var LegalEdges = []Edge{
	{CouponUnused, CouponRedeeming},
	{CouponRedeeming, CouponRedeemed},
	{CouponRedeeming, CouponUnused},
	{CouponRedeemed, CouponRefunded},
	{CouponUnused, CouponExpired},
	{CouponUnused, CouponVoided},
}

// Legal reports whether from -> to is an edge of the state machine.
func Legal(from, to CouponStatus) bool { return slices.Contains(LegalEdges, Edge{from, to}) }

// TakenForGood reports whether a coupon in status s can never be taken again:
// no path of LegalEdges leads from s back to UNUSED.
func TakenForGood(s CouponStatus) bool {
	return s == CouponRedeemed || s == CouponRefunded || s == CouponExpired || s == CouponVoided
}

// LegalEdgeSQL is an SQL condition that holds when the transition row alias
// (from_status, to_status) is one of LegalEdges.
func LegalEdgeSQL(alias string) string {
	parts := make([]string, len(LegalEdges))
	for i, e := range LegalEdges {
		parts[i] = fmt.Sprintf("(%s.from_status = '%s' AND %s.to_status = '%s')", alias, e.From, alias, e.To)
	}
	return "(" + strings.Join(parts, " OR ") + ")"
}

// Coupon is one code of a campaign.
type Coupon struct {
	ID           int64
	MerchantID   int64
	CampaignID   int64
	Code         string
	Status       CouponStatus
	Version      int64
	ValidFrom    time.Time
	ValidTo      time.Time
	CustomerRef  *string
	RedeemNo     *string
	ReissuedFrom *int64
	// UsesTotal is how many uses the coupon gives (1, or its campaign's
	// usesPerCoupon for a multi-use card); UsesLeft how many are not yet
	// confirmed. UsesTotal - UsesLeft is the number of its SUCCEEDED flows,
	// and it is REDEEMED exactly when UsesLeft is 0.
	UsesTotal int64 `gorm:"default:1"`
	UsesLeft  int64 `gorm:"default:1"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

// eligibleSQL is the one definition of "the coupons row may be taken now":
// UNUSED with a use left, inside its validity window, its campaign ACTIVE (not paused or
// ended), its minimum spend met by the order and valid at the store, and,
// when it was issued to a customer and the request names one, issued to that
// customer, and its campaign's weekday and time-of-day rules (timeRuleSQL)
// allow the merchant-local clock. Every statement that takes a coupon puts it
// in its WHERE, so the rule and the change are one statement; now, amount and
// store are parameter references ("?" or "$n"), now used twice, and so is
// customer (an empty string for none); clock is clockSQL's relation. The time
// rules depend only on the clock and the campaign, so each request computes
// the merchant-local weekday and minute once, in Go, and passes them as
// parameters; the statement judges them against the campaign row.
// services.diagnose explains the same rule in Go, reason by reason, and
// TestEligibilityExplained holds the two together on both databases.
func eligibleSQL(now, amount, store, customer, clock string) string {
	return `coupons.status = 'UNUSED' AND coupons.uses_left > 0 AND coupons.valid_from <= ` + now + ` AND coupons.valid_to > ` + now + `
  AND (coupons.customer_ref IS NULL OR ` + customer + ` = '' OR coupons.customer_ref = ` + customer + `)
  AND EXISTS (SELECT 1 FROM campaigns c, ` + clock + ` clk WHERE c.id = coupons.campaign_id AND c.min_spend <= ` + amount + `
    AND c.state = 'ACTIVE' AND ` + timeRuleSQL("c", "clk") + `
    AND (c.all_stores OR EXISTS (SELECT 1 FROM campaign_stores cs WHERE cs.campaign_id = c.id AND cs.store_id = ` + store + `)))`
}

// clockSQL is the one-row clock relation eligibleSQL takes, from three
// parameter references: LocalClock's Day, PrevDay and Minute.
func clockSQL(d, p, m string) string {
	return `(SELECT CAST(` + d + ` AS BIGINT) AS d, CAST(` + p + ` AS BIGINT) AS p, CAST(` + m + ` AS BIGINT) AS m)`
}

// CouponEligible reports whether the coupon with id could be taken now at
// storeID for orderAmount by customer ("" for none) at the merchant-local
// clock k, by the very condition the taking statements use. It reads only;
// for checks that explain or test the rule.
func CouponEligible(db *gorm.DB, couponID, storeID, orderAmount int64, customer string, k LocalClock, now time.Time) (bool, error) {
	var n int64
	err := scanRaw(db, &n, `SELECT COUNT(*) FROM coupons WHERE coupons.id = ? AND `+eligibleSQL("?", "?", "?", "?", clockSQL("?", "?", "?")),
		couponID, now.UTC(), now.UTC(), customer, customer, k.Day, k.PrevDay, k.Minute, orderAmount, storeID).Error
	return n == 1, err
}

// CouponByCode returns the merchant's coupon with the normalised code, or
// gorm.ErrRecordNotFound.
func CouponByCode(db *gorm.DB, merchantID int64, code string) (*Coupon, error) {
	var c Coupon
	if err := db.Where("merchant_id = ? AND code = ?", merchantID, code).Take(&c).Error; err != nil {
		return nil, err
	}
	return &c, nil
}

// ReserveArgs are the conditions under which a coupon may move UNUSED -> REDEEMING.
type ReserveArgs struct {
	MerchantID  int64
	Code        string
	RedeemNo    string
	StoreID     int64
	OrderAmount int64
	// CustomerRef is the request's customer, "" for none.
	CustomerRef string
	// Clock is Now on the merchant's clock.
	Clock LocalClock
	Now   time.Time
}

// Reserved is what a successful reserve returns of the coupon.
type Reserved struct {
	ID         int64
	CampaignID int64
	Version    int64
	// UseNo is the use of the coupon the reserve holds, 1 to its uses total.
	UseNo int64
	// CustomerRef is the customer the coupon was issued to, if any.
	CustomerRef *string
}

// reserveSQL moves a coupon to REDEEMING only if it is eligible (eligibleSQL):
// the decision and the change are one statement, so two concurrent reserves
// cannot both win.
var reserveSQL = `UPDATE coupons SET status = 'REDEEMING', redeem_no = ?, version = version + 1, updated_at = ?
WHERE merchant_id = ? AND code = ? AND ` + eligibleSQL("?", "?", "?", "?", clockSQL("?", "?", "?")) + `
RETURNING id, campaign_id, version, uses_total - uses_left + 1 AS use_no, customer_ref`

// ReserveCoupon performs the conditional reserve of the merchant's coupon with
// the given code. It returns the coupon and true when the coupon moved, or false
// when the code is unknown or any condition failed.
func ReserveCoupon(tx *gorm.DB, a ReserveArgs) (Reserved, bool, error) {
	var rows []Reserved
	err := tx.Raw(reserveSQL, a.RedeemNo, a.Now, a.MerchantID, a.Code, a.Now, a.Now, a.CustomerRef, a.CustomerRef,
		a.Clock.Day, a.Clock.PrevDay, a.Clock.Minute, a.OrderAmount, a.StoreID).
		Scan(&rows).Error
	if err != nil || len(rows) != 1 {
		return Reserved{}, false, err
	}
	return rows[0], true, nil
}

// MoveCoupon moves a coupon held by redemption redeemNo from one status to
// another: REDEEMING -> REDEEMED (confirms a use: see ConfirmUse),
// REDEEMING -> UNUSED (which clears the hold) or REDEEMED -> REFUNDED. It
// returns the new version and true when the row moved, false when the coupon
// was not in from or not held by redeemNo. An edge the state machine does not
// have is an error and changes nothing.
func MoveCoupon(tx *gorm.DB, couponID int64, redeemNo string, from, to CouponStatus, now time.Time) (int64, bool, error) {
	return MoveCouponAt(tx, couponID, redeemNo, from, to, 0, now)
}

// MoveCouponAt is MoveCoupon that also requires the coupon to be still at
// version, the one the caller read (0: any), as the seed's fifth pitfall
// asks of an actor that decided on an older read, such as compensation.
func MoveCouponAt(tx *gorm.DB, couponID int64, redeemNo string, from, to CouponStatus, version int64, now time.Time) (int64, bool, error) {
	v, _, ok, err := moveCoupon(tx, couponID, redeemNo, from, to, version, now)
	return v, ok, err
}

// ConfirmUse confirms the use that redemption redeemNo holds of its
// REDEEMING coupon (at version, 0: any): one conditional update counts the
// use off (uses_left - 1) and moves the coupon to REDEEMED when it was the
// last, or back to UNUSED, free for its next use, when uses are left. It
// returns the new version and status, and false when the coupon was not
// REDEEMING under redeemNo.
func ConfirmUse(tx *gorm.DB, couponID int64, redeemNo string, version int64, now time.Time) (int64, CouponStatus, bool, error) {
	return moveCoupon(tx, couponID, redeemNo, CouponRedeeming, CouponRedeemed, version, now)
}

func moveCoupon(tx *gorm.DB, couponID int64, redeemNo string, from, to CouponStatus, version int64, now time.Time) (int64, CouponStatus, bool, error) {
	if !Legal(from, to) {
		return 0, "", false, fmt.Errorf("move coupon %d: %s -> %s is not an edge of the state machine", couponID, from, to)
	}
	var rows []struct {
		Version int64
		Status  CouponStatus
	}
	set, args := "status = ?, version = version + 1, updated_at = ?", []any{string(to), now}
	switch {
	case to == CouponUnused:
		set += ", redeem_no = NULL"
	case from == CouponRedeeming && to == CouponRedeemed:
		// The SET expressions read the row as it was: uses_left = 1 means
		// this is the last use.
		set = `status = CASE WHEN uses_left = 1 THEN 'REDEEMED' ELSE 'UNUSED' END,
  redeem_no = CASE WHEN uses_left = 1 THEN redeem_no END,
  uses_left = uses_left - 1, version = version + 1, updated_at = ?`
		args = []any{now}
	}
	where := "id = ? AND status = ? AND redeem_no = ?"
	args = append(args, couponID, string(from), redeemNo)
	if version != 0 {
		where, args = where+" AND version = ?", append(args, version)
	}
	err := scanRaw(tx, &rows, "UPDATE coupons SET "+set+" WHERE "+where+" RETURNING version, status", args...).Error
	if err != nil || len(rows) != 1 {
		return 0, "", false, err
	}
	return rows[0].Version, rows[0].Status, true, nil
}

// CouponAndRequest reads, with one query, the merchant's coupon with the
// code and whether the merchant already has a flow of operation op under
// requestID. The coupon is nil when the code is unknown.
func CouponAndRequest(db *gorm.DB, merchantID int64, code string, op Operation, requestID string) (*Coupon, bool, error) {
	var row struct {
		Coupon
		Prior *int64
	}
	res := scanRaw(db, &row, `SELECT c.*, (SELECT f.id FROM redemption_flows f
  WHERE f.merchant_id = c.merchant_id AND f.operation = ? AND f.request_id = ?) AS prior
FROM coupons c WHERE c.merchant_id = ? AND c.code = ?`, string(op), requestID, merchantID, code)
	if res.Error != nil || res.RowsAffected == 0 {
		return nil, false, res.Error
	}
	return &row.Coupon, row.Prior != nil, nil
}

// CutCouponValidity ends at the validity of the campaign's coupons that could
// still be taken or are held (UNUSED, REDEEMING) and were valid past it: an
// ended campaign's coupons expire on the expiry job's next run. It returns
// how many coupons it cut.
func CutCouponValidity(tx *gorm.DB, merchantID, campaignID int64, at time.Time) (int64, error) {
	res := tx.Exec(`UPDATE coupons SET valid_to = ?, updated_at = ?
WHERE merchant_id = ? AND campaign_id = ? AND status IN ('UNUSED', 'REDEEMING') AND valid_to > ?`,
		at, at, merchantID, campaignID, at)
	return res.RowsAffected, res.Error
}

// Expired is a coupon ExpireCoupons moved to EXPIRED.
type Expired struct {
	ID         int64
	MerchantID int64
	Version    int64
	Code       string
}

// ExpireCoupons moves up to limit UNUSED coupons whose validity ended by now
// to EXPIRED, oldest end first, with one conditional update: a coupon a
// redemption takes meanwhile no longer matches (status = 'UNUSED' is checked
// again on the row itself), so each coupon ends REDEEMED or EXPIRED, never
// both. A coupon held REDEEMING is left to compensation. A merchantID other
// than 0 expires only that merchant's coupons.
//
// On PostgreSQL the coupons are picked FOR UPDATE SKIP LOCKED: a coupon a
// redemption holds is left for the next run instead of waited for. A batch
// of the redemption pipeline locks its coupons in code order and this
// update in its own, so waiting could close a cycle (a deadlock, seen in
// TestExpiryRacesRedemptions); never waiting cannot.
func ExpireCoupons(tx *gorm.DB, merchantID int64, now time.Time, limit int) ([]Expired, error) {
	pick := `SELECT id FROM coupons WHERE valid_to <= ? AND status = 'UNUSED'`
	args := []any{now, now}
	if merchantID != 0 {
		pick += ` AND merchant_id = ?`
		args = append(args, merchantID)
	}
	pick += ` ORDER BY valid_to, id LIMIT ?`
	if DialectOfDB(tx) == Postgres {
		pick += ` FOR UPDATE SKIP LOCKED`
	}
	args = append(args, limit, now)
	var rows []Expired
	err := scanRaw(tx, &rows, `UPDATE coupons SET status = 'EXPIRED', version = version + 1, updated_at = ?
WHERE id IN (`+pick+`) AND status = 'UNUSED' AND valid_to <= ?
RETURNING id, merchant_id, version, code`, args...).Error
	return rows, err
}

// VoidCoupon moves the merchant's UNUSED coupon with the code to VOIDED with
// one conditional update and returns it as it now is; false, having written
// nothing, when there is no such UNUSED coupon.
func VoidCoupon(tx *gorm.DB, merchantID int64, code string, now time.Time) (*Coupon, bool, error) {
	var rows []Coupon
	err := scanRaw(tx, &rows, `UPDATE coupons SET status = 'VOIDED', version = version + 1, updated_at = ?
WHERE merchant_id = ? AND code = ? AND status = 'UNUSED' RETURNING *`, now, merchantID, code).Error
	if err != nil || len(rows) != 1 {
		return nil, false, err
	}
	return &rows[0], true, nil
}

// CouponByID returns the coupon with id, or gorm.ErrRecordNotFound.
func CouponByID(db *gorm.DB, id int64) (*Coupon, error) {
	var c Coupon
	if err := db.Take(&c, id).Error; err != nil {
		return nil, err
	}
	return &c, nil
}

// EachCouponOfCampaign calls fn with the coupons of the merchant's campaign
// created (issued) in from <= created_at < to (zero times do not bound), in
// issue order: one query per batch rows, each continuing after the last id of
// the one before, so memory stays at one batch. It stops at fn's first error.
func EachCouponOfCampaign(db *gorm.DB, merchantID, campaignID int64, from, to time.Time, batch BatchSize, fn func(Coupon) error) error {
	var after int64
	for {
		n := batch()
		q := db.Where("merchant_id = ? AND campaign_id = ? AND id > ?", merchantID, campaignID, after)
		if !from.IsZero() {
			q = q.Where("created_at >= ?", from.UTC())
		}
		if !to.IsZero() {
			q = q.Where("created_at < ?", to.UTC())
		}
		var rows []Coupon
		if err := q.Order("id").Limit(n).Find(&rows).Error; err != nil {
			return fmt.Errorf("export coupons of campaign %d: %w", campaignID, err)
		}
		for _, r := range rows {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(rows) < n {
			return nil
		}
		after = rows[len(rows)-1].ID
	}
}

// CouponsByIDs returns the merchant's coupons among ids.
func CouponsByIDs(db *gorm.DB, merchantID int64, ids []int64) ([]Coupon, error) {
	var out []Coupon
	return out, db.Where("merchant_id = ? AND id IN ?", merchantID, ids).Find(&out).Error
}

// CouponFilter narrows MerchantCoupons; zero fields do not filter.
type CouponFilter struct {
	CampaignID  int64
	Status      CouponStatus
	CustomerRef string
	// RedeemedAt keeps coupons whose live redemption (in progress or
	// succeeded, refunded or not) is at this store.
	RedeemedAt int64
}

// MerchantCoupons is the query of the merchant's coupons that f keeps, for
// paging.
func MerchantCoupons(db *gorm.DB, merchantID int64, f CouponFilter) *gorm.DB {
	q := db.Model(&Coupon{}).Where("merchant_id = ?", merchantID)
	if f.CampaignID != 0 {
		q = q.Where("campaign_id = ?", f.CampaignID)
	}
	if f.Status != "" {
		q = q.Where("status = ?", string(f.Status))
	}
	if f.CustomerRef != "" {
		q = q.Where("customer_ref = ?", f.CustomerRef)
	}
	if f.RedeemedAt != 0 {
		q = q.Where(`EXISTS (SELECT 1 FROM redemption_flows f WHERE f.merchant_id = coupons.merchant_id
  AND f.coupon_id = coupons.id AND f.store_id = ? AND f.status IN ('PROCESSING', 'SUCCEEDED'))`, f.RedeemedAt)
	}
	return q
}
