package services

import (
	"fmt"
	"strconv"
	"time"

	"coupond/models"
)

// checkRow is what every check query selects, each using the columns it needs.
type checkRow struct {
	MerchantID int64
	CouponID   *int64
	RedeemNo   *string
	RefID      *int64
	A, B, C, D *string
	N, M       *int64
}

func str(p *string) string {
	if p == nil {
		return "NULL"
	}
	return *p
}

func num(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// check is one reconciliation query.
type check struct {
	kind models.FindingKind
	// orders marks checks that need the builtin adapter's orders table.
	orders  bool
	sql     string
	args    func(p checkParams) []any
	subject func(r checkRow) string
	details func(r checkRow) string
}

type checkParams struct {
	now, refundCutoff, stuckCutoff time.Time
}

func byRedeemNo(r checkRow) string { return str(r.RedeemNo) }
func byCoupon(r checkRow) string   { return strconv.FormatInt(num(r.CouponID), 10) }
func byRef(r checkRow) string      { return strconv.FormatInt(num(r.RefID), 10) }
func noArgs(checkParams) []any     { return nil }

var checks = []check{
	{
		kind: models.FindingSucceededFlowCouponNotRedeemed,
		sql: `SELECT f.merchant_id, f.coupon_id, f.redeem_no, c.status AS a, c.redeem_no AS b
FROM redemption_flows f JOIN coupons c ON c.id = f.coupon_id
WHERE f.status = 'SUCCEEDED' AND c.uses_total = 1
  AND NOT (c.status IN ('REDEEMED', 'REFUNDED') AND c.redeem_no IS NOT NULL AND c.redeem_no = f.redeem_no)`,
		args: noArgs, subject: byRedeemNo,
		details: func(r checkRow) string {
			return fmt.Sprintf("redemption succeeded but its coupon is %s held by %s", str(r.A), str(r.B))
		},
	},
	{
		kind: models.FindingRedeemedCouponFlowCount,
		sql: `SELECT c.merchant_id, c.id AS coupon_id, c.status AS a, COALESCE(s.n, 0) AS n
FROM coupons c LEFT JOIN (SELECT coupon_id, COUNT(*) AS n FROM redemption_flows WHERE status = 'SUCCEEDED' GROUP BY coupon_id) s
  ON s.coupon_id = c.id
WHERE c.status IN ('REDEEMED', 'REFUNDED') AND c.uses_total = 1 AND COALESCE(s.n, 0) <> 1`,
		args: noArgs, subject: byCoupon,
		details: func(r checkRow) string {
			return fmt.Sprintf("coupon is %s with %d succeeded redemptions, want 1", str(r.A), num(r.N))
		},
	},
	{
		kind: models.FindingRedeemedCouponFlowCount,
		// A multi-use card's ledger: its SUCCEEDED flows are its confirmed
		// uses, uses_total - uses_left (so at most uses_total, and successful
		// uses - refunded uses <= uses_total with them); it is REDEEMED
		// exactly when no use is left, and never REFUNDED (a refund kills
		// one use, not the card).
		// Cards are only issued by campaigns with more than one use per
		// coupon, so the campaigns' index finds them.
		sql: `SELECT c.merchant_id, c.id AS coupon_id, c.status AS a, COALESCE(s.n, 0) AS n, c.uses_total - c.uses_left AS m
FROM campaigns k JOIN coupons c ON c.merchant_id = k.merchant_id AND c.campaign_id = k.id
LEFT JOIN (SELECT coupon_id, COUNT(*) AS n FROM redemption_flows WHERE status = 'SUCCEEDED' GROUP BY coupon_id) s
  ON s.coupon_id = c.id
WHERE k.uses_per_coupon > 1 AND c.uses_total > 1 AND (COALESCE(s.n, 0) <> c.uses_total - c.uses_left
  OR (c.status = 'REDEEMED') <> (c.uses_left = 0) OR c.status = 'REFUNDED')`,
		args: noArgs, subject: byCoupon,
		details: func(r checkRow) string {
			return fmt.Sprintf("card is %s with %d succeeded uses, want %d (uses total - uses left)", str(r.A), num(r.N), num(r.M))
		},
	},
	{
		kind: models.FindingProcessingFlowCouponNotHeld,
		sql: `SELECT f.merchant_id, f.coupon_id, f.redeem_no, c.status AS a, c.redeem_no AS b
FROM redemption_flows f JOIN coupons c ON c.id = f.coupon_id
WHERE f.status = 'PROCESSING'
  AND NOT (c.status = 'REDEEMING' AND c.redeem_no IS NOT NULL AND c.redeem_no = f.redeem_no)`,
		args: noArgs, subject: byRedeemNo,
		details: func(r checkRow) string {
			return fmt.Sprintf("redemption is processing but its coupon is %s held by %s", str(r.A), str(r.B))
		},
	},
	{
		kind: models.FindingRedeemingCouponWithoutFlow,
		// Reached through merchants so the (merchant_id, status) index finds
		// the few REDEEMING coupons instead of a scan of them all.
		sql: `SELECT c.merchant_id, c.id AS coupon_id, c.redeem_no
FROM merchants m JOIN coupons c ON c.merchant_id = m.id
WHERE c.status = 'REDEEMING' AND NOT EXISTS (SELECT 1 FROM redemption_flows f
  WHERE f.coupon_id = c.id AND f.redeem_no = c.redeem_no AND f.status = 'PROCESSING')`,
		args:    noArgs,
		subject: func(r checkRow) string { return byCoupon(r) + ":" + str(r.RedeemNo) },
		details: func(r checkRow) string { return "coupon is REDEEMING without the processing redemption holding it" },
	},
	{
		kind: models.FindingStuckRedeeming,
		sql: `SELECT c.merchant_id, c.id AS coupon_id, f.redeem_no
FROM coupons c JOIN redemption_flows f ON f.coupon_id = c.id AND f.redeem_no = c.redeem_no AND f.status = 'PROCESSING'
WHERE c.status = 'REDEEMING' AND f.hold_until < ?`,
		args:    func(p checkParams) []any { return []any{p.stuckCutoff} },
		subject: byRedeemNo,
		details: func(r checkRow) string {
			return "coupon is still REDEEMING past its hold deadline and one compensation interval"
		},
	},
	{
		kind: models.FindingOrderWithoutRedemption, orders: true,
		// A live order is justified by a redemption in flight or a succeeded one
		// not refunded; a refund younger than the grace period may still be
		// cancelling its order. A redemption number names one flow at most, so
		// this is the orders without a live flow plus the orders whose
		// succeeded flow was refunded: two anti- and semi-joins, where a refund
		// test nested in the first would run once per flow.
		// The one order of a multi-code order is keyed by its first flow's
		// redemption number and moves with all its flows, so the first part
		// holds for it as it is; a refunded first flow leaves it justified
		// while another flow of the order stands (order_id is NULL, and the
		// last test empty, for every other flow).
		sql: `SELECT o.merchant_id, o.coupon_id, o.redeem_no, o.id AS ref_id
FROM orders o
WHERE o.status = 'CREATED' AND NOT EXISTS (SELECT 1 FROM redemption_flows f
  WHERE f.merchant_id = o.merchant_id AND f.redeem_no = o.redeem_no AND f.status IN ('PROCESSING', 'SUCCEEDED'))
UNION ALL
SELECT o.merchant_id, o.coupon_id, o.redeem_no, o.id AS ref_id
FROM orders o JOIN redemption_flows f ON f.merchant_id = o.merchant_id AND f.redeem_no = o.redeem_no
WHERE o.status = 'CREATED' AND f.status = 'SUCCEEDED'
  AND EXISTS (SELECT 1 FROM refund_flows r WHERE r.redemption_id = f.id AND r.created_at < ?)
  AND NOT EXISTS (SELECT 1 FROM redemption_flows g WHERE f.order_id IS NOT NULL AND g.merchant_id = f.merchant_id
    AND g.order_id = f.order_id AND g.status = 'SUCCEEDED'
    AND NOT EXISTS (SELECT 1 FROM refund_flows r WHERE r.redemption_id = g.id AND r.created_at < ?))`,
		args:    func(p checkParams) []any { return []any{p.refundCutoff, p.refundCutoff} },
		subject: byRedeemNo,
		details: func(r checkRow) string {
			return fmt.Sprintf("order %d is live without a succeeded, unrefunded redemption", num(r.RefID))
		},
	},
	{
		kind: models.FindingRedemptionWithoutOrder, orders: true,
		// A flow of a multi-code order has the order's one business order,
		// keyed by the order's first redemption number.
		sql: `SELECT f.merchant_id, f.coupon_id, f.redeem_no
FROM redemption_flows f
WHERE f.status = 'SUCCEEDED' AND f.operation = 'REDEEM'
  AND NOT EXISTS (SELECT 1 FROM refund_flows r WHERE r.redemption_id = f.id)
  AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.merchant_id = f.merchant_id AND o.status = 'CREATED'
    AND o.redeem_no = COALESCE((SELECT g.order_no FROM redemption_orders g WHERE g.merchant_id = f.merchant_id
      AND g.id = f.order_id), f.redeem_no))`,
		args: noArgs, subject: byRedeemNo,
		details: func(r checkRow) string { return "redemption succeeded but has no live order" },
	},
	{
		kind: models.FindingRefundWithoutRedemption,
		sql: `SELECT r.merchant_id, r.coupon_id, r.redeem_no, r.id AS ref_id, f.status AS a
FROM refund_flows r LEFT JOIN redemption_flows f ON f.id = r.redemption_id
WHERE f.id IS NULL OR f.status <> 'SUCCEEDED' OR f.coupon_id <> r.coupon_id OR f.redeem_no <> r.redeem_no
  OR f.merchant_id <> r.merchant_id`,
		args: noArgs, subject: byRef,
		details: func(r checkRow) string {
			return fmt.Sprintf("refund %d does not reverse a succeeded redemption of its coupon (redemption %s)",
				num(r.RefID), str(r.A))
		},
	},
	{
		kind: models.FindingRefundCount,
		sql: `SELECT c.merchant_id, c.id AS coupon_id, c.status AS a, COALESCE(s.n, 0) AS n
FROM merchants m JOIN coupons c ON c.merchant_id = m.id
LEFT JOIN (SELECT coupon_id, COUNT(*) AS n FROM refund_flows GROUP BY coupon_id) s ON s.coupon_id = c.id
WHERE c.status = 'REFUNDED' AND c.uses_total = 1 AND COALESCE(s.n, 0) <> 1`,
		args: noArgs, subject: byCoupon,
		details: func(r checkRow) string {
			return fmt.Sprintf("coupon is %s with %d refunds, want 1", str(r.A), num(r.N))
		},
	},
	{
		kind: models.FindingRefundCount,
		sql: `SELECT c.merchant_id, c.id AS coupon_id, c.status AS a, COUNT(*) AS n
FROM refund_flows r JOIN coupons c ON c.id = r.coupon_id
WHERE c.status <> 'REFUNDED' AND c.uses_total = 1
GROUP BY c.merchant_id, c.id, c.status`,
		args: noArgs, subject: byCoupon,
		details: func(r checkRow) string {
			return fmt.Sprintf("coupon is %s with %d refunds, want 0", str(r.A), num(r.N))
		},
	},
	{
		kind: models.FindingHistoryMismatch,
		// One join of each coupon with its transitions, counted and searched
		// for the one that made the current version (versions are unique per
		// coupon), instead of joining the transitions twice.
		sql: `SELECT c.merchant_id, c.id AS coupon_id, c.status AS a,
  MAX(t.to_status) FILTER (WHERE t.version_after = c.version) AS b, c.version AS n, COUNT(t.id) AS m
FROM coupons c LEFT JOIN coupon_transitions t ON t.merchant_id = c.merchant_id AND t.coupon_id = c.id
GROUP BY c.merchant_id, c.id
HAVING c.version <> COUNT(t.id)
   OR (c.version > 0 AND MAX(t.to_status) FILTER (WHERE t.version_after = c.version) IS DISTINCT FROM c.status)
   OR (c.version = 0 AND c.status <> 'UNUSED')`,
		args: noArgs, subject: byCoupon,
		details: func(r checkRow) string {
			return fmt.Sprintf("coupon is %s at version %d with %d transitions, the last ending in %s",
				str(r.A), num(r.N), num(r.M), str(r.B))
		},
	},
	{
		kind: models.FindingIllegalTransition,
		// The transition before t is the previous one in version order when its
		// version is t's minus one (versions are unique per coupon): one ordered
		// pass with lag instead of joining the table with itself.
		sql: `SELECT t.merchant_id, t.coupon_id, t.id AS ref_id, t.from_status AS a, t.to_status AS b, t.flow_no AS c,
  CASE WHEN t.prev_version = t.version_after - 1 THEN t.prev_to END AS d
FROM (SELECT t.*, LAG(t.version_after) OVER w AS prev_version, LAG(t.to_status) OVER w AS prev_to
  FROM coupon_transitions t WINDOW w AS (PARTITION BY t.coupon_id ORDER BY t.version_after)) t
WHERE NOT ` + models.LegalEdgeSQL("t") + `
   OR (t.version_after = 1 AND t.from_status <> 'UNUSED')
   OR (t.version_after > 1 AND (t.prev_version IS NULL OR t.prev_version <> t.version_after - 1 OR t.prev_to <> t.from_status))`,
		args: noArgs, subject: byRef,
		details: func(r checkRow) string {
			return fmt.Sprintf("transition %d %s -> %s by %s is not a legal edge after %s",
				num(r.RefID), str(r.A), str(r.B), str(r.C), str(r.D))
		},
	},
	{
		kind: models.FindingIssuedCountMismatch,
		sql: `SELECT k.merchant_id, k.id AS ref_id, k.issued + k.reissued AS n, COALESCE(s.n, 0) AS m
FROM campaigns k LEFT JOIN (SELECT campaign_id, COUNT(*) AS n FROM coupons GROUP BY campaign_id) s ON s.campaign_id = k.id
WHERE k.issued + k.reissued <> COALESCE(s.n, 0)`,
		args: noArgs, subject: byRef,
		details: func(r checkRow) string {
			return fmt.Sprintf("campaign %d counts %d issued and reissued coupons but has %d", num(r.RefID), num(r.N), num(r.M))
		},
	},
}
