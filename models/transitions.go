package models

import (
	"time"

	"gorm.io/gorm"
)

// ReserveArgs are the conditions under which a coupon may move UNUSED -> REDEEMING.
type ReserveArgs struct {
	MerchantID  int64
	Code        string
	RedeemNo    string
	StoreID     int64
	OrderAmount int64
	Now         time.Time
}

// Reserved is what a successful reserve returns of the coupon.
type Reserved struct {
	ID         int64
	CampaignID int64
	Version    int64
}

// reserveSQL moves a coupon to REDEEMING only if it is UNUSED, inside its
// validity window, valid at the store and met by the order amount: the decision
// and the change are one statement, so two concurrent reserves cannot both win.
const reserveSQL = `UPDATE coupons SET status = 'REDEEMING', redeem_no = ?, version = version + 1, updated_at = ?
WHERE merchant_id = ? AND code = ? AND status = 'UNUSED' AND valid_from <= ? AND valid_to > ?
  AND EXISTS (SELECT 1 FROM campaigns c WHERE c.id = coupons.campaign_id AND c.min_spend <= ?
    AND (c.all_stores OR EXISTS (SELECT 1 FROM campaign_stores cs WHERE cs.campaign_id = c.id AND cs.store_id = ?)))
RETURNING id, campaign_id, version`

// ReserveCoupon performs the conditional reserve of the merchant's coupon with
// the given code. It returns the coupon and true when the coupon moved, or false
// when the code is unknown or any condition failed.
func ReserveCoupon(tx *gorm.DB, a ReserveArgs) (Reserved, bool, error) {
	var rows []Reserved
	err := tx.Raw(reserveSQL, a.RedeemNo, a.Now, a.MerchantID, a.Code, a.Now, a.Now, a.OrderAmount, a.StoreID).
		Scan(&rows).Error
	if err != nil || len(rows) != 1 {
		return Reserved{}, false, err
	}
	return rows[0], true, nil
}

// MoveCoupon moves a coupon held by redemption redeemNo from one status to
// another: REDEEMING -> REDEEMED, REDEEMING -> UNUSED (which clears the hold) or
// REDEEMED -> REFUNDED. It returns the new version and true when the row moved,
// false when the coupon was not in from or not held by redeemNo.
func MoveCoupon(tx *gorm.DB, couponID int64, redeemNo string, from, to CouponStatus, now time.Time) (int64, bool, error) {
	var versions []int64
	set := "status = ?, version = version + 1, updated_at = ?"
	if to == CouponUnused {
		set += ", redeem_no = NULL"
	}
	err := tx.Raw("UPDATE coupons SET "+set+" WHERE id = ? AND status = ? AND redeem_no = ? RETURNING version",
		string(to), now, couponID, string(from), redeemNo).Scan(&versions).Error
	if err != nil || len(versions) != 1 {
		return 0, false, err
	}
	return versions[0], true, nil
}

// FlowOutcome is what a PROCESSING flow becomes when it finishes.
type FlowOutcome struct {
	Status        FlowStatus
	OrderRef      *string
	ReleaseReason *string
	Now           time.Time
}

// FinishFlow moves a redemption flow from PROCESSING to its final status. It
// reports false when the flow had already left PROCESSING (another actor, such
// as the compensation job, finished it first), and for SUCCEEDED also when
// compensation has fenced the flow (see FenceFlow): a fenced flow can only be
// released.
func FinishFlow(tx *gorm.DB, flowID int64, o FlowOutcome) (bool, error) {
	where := "id = ? AND status = 'PROCESSING'"
	if o.Status == FlowSucceeded {
		where += " AND fenced_at IS NULL"
	}
	res := tx.Exec(`UPDATE redemption_flows SET status = ?, order_ref = COALESCE(?, order_ref), release_reason = ?,
  finished_at = ?, updated_at = ?, version = version + 1 WHERE `+where,
		string(o.Status), o.OrderRef, o.ReleaseReason, o.Now, o.Now, flowID)
	return res.RowsAffected == 1, res.Error
}

// ReserveIssueBudget takes n coupons from a campaign's budget in one conditional
// update; it reports false when fewer than n remain.
func ReserveIssueBudget(tx *gorm.DB, merchantID, campaignID, n int64) (bool, error) {
	res := tx.Exec(`UPDATE campaigns SET issued = issued + ? WHERE id = ? AND merchant_id = ? AND issued + ? <= total_quantity`,
		n, campaignID, merchantID, n)
	return res.RowsAffected == 1, res.Error
}

// ReserveCustomerQuota takes n coupons from one customer's per-campaign limit
// with one upsert that only applies while the limit holds; it reports false when
// the customer would exceed limit.
func ReserveCustomerQuota(tx *gorm.DB, merchantID, campaignID int64, customerRef string, n, limit int64) (bool, error) {
	if n > limit {
		return false, nil
	}
	res := tx.Exec(`INSERT INTO campaign_customers (merchant_id, campaign_id, customer_ref, issued) VALUES (?, ?, ?, ?)
ON CONFLICT (campaign_id, customer_ref) DO UPDATE SET issued = campaign_customers.issued + excluded.issued
WHERE campaign_customers.issued + excluded.issued <= ?`, merchantID, campaignID, customerRef, n, limit)
	return res.RowsAffected == 1, res.Error
}
