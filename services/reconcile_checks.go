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
	orders bool
	// batch is the table whose ids the yielding run walks in ranges, one
	// merchant at a time: each {in:alias.column} in sql then restricts that
	// alias to the merchant and the range (see expandBatch). Empty: the check
	// runs whole (its rows are few, found through a partial or status index).
	batch batchTable
	// tally, when set, replaces sql's batches in a yielding run: the check
	// compares counters with the rows they count, and a batch of counters
	// can count more rows than a batch should read (see tally).
	tally *tally
	// applies, when set, is asked first in a yielding run, for each
	// merchant (its one parameter): a merchant for whom it selects no row
	// cannot have the check's findings, and its batches are skipped.
	applies string
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
WHERE f.status = 'SUCCEEDED' AND c.uses_total = 1 AND {in:f.coupon_id} AND {in:c.id}
  AND NOT (c.status IN ('REDEEMED', 'REFUNDED') AND c.redeem_no IS NOT NULL AND c.redeem_no = f.redeem_no)`,
		batch: byCoupons, args: noArgs, subject: byRedeemNo,
		details: func(r checkRow) string {
			return fmt.Sprintf("redemption succeeded but its coupon is %s held by %s", str(r.A), str(r.B))
		},
	},
	{
		kind: models.FindingRedeemedCouponFlowCount,
		sql: `SELECT c.merchant_id, c.id AS coupon_id, c.status AS a, COALESCE(s.n, 0) AS n
FROM coupons c LEFT JOIN (SELECT sf.coupon_id, COUNT(*) AS n FROM redemption_flows sf
  WHERE sf.status = 'SUCCEEDED' AND {in:sf.coupon_id} GROUP BY sf.coupon_id) s
  ON s.coupon_id = c.id
WHERE c.status IN ('REDEEMED', 'REFUNDED') AND c.uses_total = 1 AND {in:c.id} AND COALESCE(s.n, 0) <> 1`,
		batch: byCoupons, args: noArgs, subject: byCoupon,
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
LEFT JOIN (SELECT sf.coupon_id, COUNT(*) AS n FROM redemption_flows sf
  WHERE sf.status = 'SUCCEEDED' AND {in:sf.coupon_id} GROUP BY sf.coupon_id) s
  ON s.coupon_id = c.id
WHERE k.uses_per_coupon > 1 AND c.uses_total > 1 AND {in:c.id} AND (COALESCE(s.n, 0) <> c.uses_total - c.uses_left
  OR (c.status = 'REDEEMED') <> (c.uses_left = 0) OR c.status = 'REFUNDED')`,
		batch: byCoupons, args: noArgs, subject: byCoupon,
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
		// No index covers a coupon's status (a transition is a HOT update),
		// so this reads every coupon: in batches, in a yielding run.
		sql: `SELECT c.merchant_id, c.id AS coupon_id, c.redeem_no
FROM coupons c
WHERE c.status = 'REDEEMING' AND {in:c.id} AND NOT EXISTS (SELECT 1 FROM redemption_flows f
  WHERE f.coupon_id = c.id AND f.redeem_no = c.redeem_no AND f.status = 'PROCESSING')`,
		batch: byCoupons, args: noArgs,
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
WHERE o.status = 'CREATED' AND {in:o.id} AND NOT EXISTS (SELECT 1 FROM redemption_flows f
  WHERE f.merchant_id = o.merchant_id AND f.redeem_no = o.redeem_no AND f.status IN ('PROCESSING', 'SUCCEEDED'))
UNION ALL
SELECT o.merchant_id, o.coupon_id, o.redeem_no, o.id AS ref_id
FROM orders o JOIN redemption_flows f ON f.merchant_id = o.merchant_id AND f.redeem_no = o.redeem_no
WHERE o.status = 'CREATED' AND {in:o.id} AND f.status = 'SUCCEEDED'
  AND EXISTS (SELECT 1 FROM refund_flows r WHERE r.merchant_id = f.merchant_id AND r.redemption_id = f.id AND r.created_at < ?)
  AND NOT EXISTS (SELECT 1 FROM redemption_flows g WHERE f.order_id IS NOT NULL AND g.merchant_id = f.merchant_id
    AND g.order_id = f.order_id AND g.status = 'SUCCEEDED'
    AND NOT EXISTS (SELECT 1 FROM refund_flows r WHERE r.merchant_id = g.merchant_id AND r.redemption_id = g.id AND r.created_at < ?))`,
		batch:   byOrders,
		args:    func(p checkParams) []any { return []any{p.refundCutoff, p.refundCutoff} },
		subject: byRedeemNo,
		details: func(r checkRow) string {
			return fmt.Sprintf("order %d is live without a succeeded, unrefunded redemption", num(r.RefID))
		},
	},
	{
		kind: models.FindingRedemptionWithoutOrder, orders: true,
		// A flow of a multi-code order has the order's one business order,
		// keyed by the order's first redemption number. The multi-code
		// order is joined, not looked up in a subquery: PostgreSQL ran
		// such a subquery twice per flow, 6.7 s of a 1M-flow audit's
		// 8.4 s check (1.2 s joined).
		sql: `SELECT f.merchant_id, f.coupon_id, f.redeem_no
FROM redemption_flows f LEFT JOIN redemption_orders g ON g.merchant_id = f.merchant_id AND g.id = f.order_id
WHERE f.status = 'SUCCEEDED' AND f.operation = 'REDEEM' AND {in:f.coupon_id}
  AND NOT EXISTS (SELECT 1 FROM refund_flows r WHERE r.merchant_id = f.merchant_id AND r.redemption_id = f.id)
  AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.merchant_id = f.merchant_id AND o.status = 'CREATED'
    AND o.redeem_no = COALESCE(g.order_no, f.redeem_no))`,
		batch: byCoupons, args: noArgs, subject: byRedeemNo,
		details: func(r checkRow) string { return "redemption succeeded but has no live order" },
	},
	{
		kind: models.FindingRefundWithoutRedemption,
		sql: `SELECT r.merchant_id, r.coupon_id, r.redeem_no, r.id AS ref_id, f.status AS a
FROM refund_flows r LEFT JOIN redemption_flows f ON f.id = r.redemption_id
WHERE {in:r.coupon_id} AND (f.id IS NULL OR f.status <> 'SUCCEEDED' OR f.coupon_id <> r.coupon_id OR f.redeem_no <> r.redeem_no
  OR f.merchant_id <> r.merchant_id)`,
		batch: byCoupons, args: noArgs, subject: byRef,
		details: func(r checkRow) string {
			return fmt.Sprintf("refund %d does not reverse a succeeded redemption of its coupon (redemption %s)",
				num(r.RefID), str(r.A))
		},
	},
	{
		kind: models.FindingRefundCount,
		sql: `SELECT c.merchant_id, c.id AS coupon_id, c.status AS a, COALESCE(s.n, 0) AS n
FROM merchants m JOIN coupons c ON c.merchant_id = m.id
LEFT JOIN (SELECT sr.coupon_id, COUNT(*) AS n FROM refund_flows sr WHERE {in:sr.coupon_id} GROUP BY sr.coupon_id) s ON s.coupon_id = c.id
WHERE c.status = 'REFUNDED' AND c.uses_total = 1 AND {in:c.id} AND COALESCE(s.n, 0) <> 1`,
		batch: byCoupons, args: noArgs, subject: byCoupon,
		details: func(r checkRow) string {
			return fmt.Sprintf("coupon is %s with %d refunds, want 1", str(r.A), num(r.N))
		},
	},
	{
		kind: models.FindingRefundCount,
		sql: `SELECT c.merchant_id, c.id AS coupon_id, c.status AS a, COUNT(*) AS n
FROM refund_flows r JOIN coupons c ON c.id = r.coupon_id
WHERE c.status <> 'REFUNDED' AND c.uses_total = 1 AND {in:r.coupon_id} AND {in:c.id}
GROUP BY c.merchant_id, c.id, c.status`,
		batch: byCoupons, args: noArgs, subject: byCoupon,
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
FROM coupons c LEFT JOIN coupon_transitions t ON t.merchant_id = c.merchant_id AND t.coupon_id = c.id AND {in:t.coupon_id}
WHERE {in:c.id}
GROUP BY c.merchant_id, c.id
HAVING c.version <> COUNT(t.id)
   OR (c.version > 0 AND MAX(t.to_status) FILTER (WHERE t.version_after = c.version) IS DISTINCT FROM c.status)
   OR (c.version = 0 AND c.status <> 'UNUSED')`,
		batch: byCoupons, args: noArgs, subject: byCoupon,
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
  FROM coupon_transitions t WHERE {in:t.coupon_id} WINDOW w AS (PARTITION BY t.coupon_id ORDER BY t.version_after)) t
WHERE NOT ` + models.LegalEdgeSQL("t") + `
   OR (t.version_after = 1 AND t.from_status <> 'UNUSED')
   OR (t.version_after > 1 AND (t.prev_version IS NULL OR t.prev_version <> t.version_after - 1 OR t.prev_to <> t.from_status))`,
		batch: byCoupons, args: noArgs, subject: byRef,
		details: func(r checkRow) string {
			return fmt.Sprintf("transition %d %s -> %s by %s is not a legal edge after %s",
				num(r.RefID), str(r.A), str(r.B), str(r.C), str(r.D))
		},
	},
	{
		kind: models.FindingIssuedCountMismatch,
		sql: `SELECT k.merchant_id, k.id AS ref_id, k.issued + k.reissued AS n, COALESCE(s.n, 0) AS m
FROM campaigns k LEFT JOIN (SELECT sc.campaign_id, COUNT(*) AS n FROM coupons sc WHERE {in:sc.campaign_id} GROUP BY sc.campaign_id) s
  ON s.campaign_id = k.id
WHERE {in:k.id} AND k.issued + k.reissued <> COALESCE(s.n, 0)`,
		batch: byCampaigns, args: noArgs, subject: byRef,
		tally: &tally{
			totals: `SELECT k.merchant_id, k.id AS ref_id, k.issued + k.reissued AS n FROM campaigns k WHERE k.merchant_id = ?`,
			table:  byCoupons,
			counts: `SELECT sc.merchant_id, sc.campaign_id AS ref_id, COUNT(*) AS n FROM coupons sc WHERE {in:sc.id}
GROUP BY sc.merchant_id, sc.campaign_id`,
		},
		details: func(r checkRow) string {
			return fmt.Sprintf("campaign %d counts %d issued and reissued coupons but has %d", num(r.RefID), num(r.N), num(r.M))
		},
	},
	{
		kind: models.FindingAllowanceCountMismatch,
		// Each counter of the limits at redemption against the uses it
		// counts: the flows that took one (allowance_day set), held or
		// succeeded and not refunded (a release or a refund gives the use
		// back in its own transaction), under the campaign's limits that
		// apply to them. The counters and each scope's uses are one union
		// summed per counter key, so a counter without uses and uses
		// without a counter show alike, in one aggregate. Each scope's
		// uses are read only when a campaign of the batch has its limit
		// (the uncorrelated EXISTS runs once, before the branch): the
		// planner, sure that few flows match, started from a scan of the
		// whole ledger, 640 ms beside the tills for campaigns without
		// limits (docs/TUNING.md).
		sql: `SELECT x.merchant_id, x.campaign_id AS ref_id, x.scope AS a, x.subject AS b, x.day AS c,
  CAST(SUM(x.used) AS BIGINT) AS n, CAST(SUM(x.uses) AS BIGINT) AS m
FROM (
  SELECT a.merchant_id, a.campaign_id, a.scope, a.subject, a.day, a.used, 0 AS uses FROM redemption_allowances a WHERE {in:a.campaign_id}
  UNION ALL
  SELECT f.merchant_id, k.id, 'CUSTOMER', f.customer_ref, '', 0, 1
  FROM redemption_flows f JOIN coupons c ON c.id = f.coupon_id
  JOIN campaigns k ON k.id = c.campaign_id AND k.merchant_id = f.merchant_id AND k.merchant_id = c.merchant_id
  WHERE {in:k.id} AND k.per_customer_limit > 0
    AND EXISTS (SELECT 1 FROM campaigns lk WHERE {in:lk.id} AND lk.per_customer_limit > 0) AND f.allowance_day <> '' AND f.customer_ref IS NOT NULL AND f.customer_ref <> ''
    AND f.status IN ('PROCESSING', 'SUCCEEDED') AND NOT EXISTS (SELECT 1 FROM refund_flows r WHERE r.merchant_id = f.merchant_id AND r.redemption_id = f.id)
  UNION ALL
  SELECT f.merchant_id, k.id, 'CUSTOMER_DAY', f.customer_ref, f.allowance_day, 0, 1
  FROM redemption_flows f JOIN coupons c ON c.id = f.coupon_id
  JOIN campaigns k ON k.id = c.campaign_id AND k.merchant_id = f.merchant_id AND k.merchant_id = c.merchant_id
  WHERE {in:k.id} AND k.per_customer_daily_limit > 0
    AND EXISTS (SELECT 1 FROM campaigns lk WHERE {in:lk.id} AND lk.per_customer_daily_limit > 0) AND f.allowance_day <> '' AND f.customer_ref IS NOT NULL AND f.customer_ref <> ''
    AND f.status IN ('PROCESSING', 'SUCCEEDED') AND NOT EXISTS (SELECT 1 FROM refund_flows r WHERE r.merchant_id = f.merchant_id AND r.redemption_id = f.id)
  UNION ALL
  SELECT f.merchant_id, k.id, 'STORE_DAY', CAST(f.store_id AS TEXT), f.allowance_day, 0, 1
  FROM redemption_flows f JOIN coupons c ON c.id = f.coupon_id
  JOIN campaigns k ON k.id = c.campaign_id AND k.merchant_id = f.merchant_id AND k.merchant_id = c.merchant_id
  WHERE {in:k.id} AND k.per_store_daily_limit > 0
    AND EXISTS (SELECT 1 FROM campaigns lk WHERE {in:lk.id} AND lk.per_store_daily_limit > 0) AND f.allowance_day <> ''
    AND f.status IN ('PROCESSING', 'SUCCEEDED') AND NOT EXISTS (SELECT 1 FROM refund_flows r WHERE r.merchant_id = f.merchant_id AND r.redemption_id = f.id)
) x
GROUP BY x.merchant_id, x.campaign_id, x.scope, x.subject, x.day
HAVING SUM(x.used) <> SUM(x.uses)`,
		batch: byCampaigns, args: noArgs,
		// Every row of the check is a counter or a use under a campaign
		// with a limit: a merchant with neither has none. Beside the tills
		// the statement above cost a merchant without limits 118 ms in one
		// batch over its campaigns (docs/TUNING.md).
		applies: `SELECT m.id AS merchant_id FROM merchants m WHERE m.id = ? AND (
  EXISTS (SELECT 1 FROM campaigns k WHERE k.merchant_id = m.id
    AND (k.per_customer_limit > 0 OR k.per_customer_daily_limit > 0 OR k.per_store_daily_limit > 0))
  OR EXISTS (SELECT 1 FROM redemption_allowances a WHERE a.merchant_id = m.id))`,
		subject: func(r checkRow) string {
			return fmt.Sprintf("%d:%s:%s:%s", num(r.RefID), str(r.A), str(r.B), str(r.C))
		},
		details: func(r checkRow) string {
			day := ""
			if str(r.C) != "" {
				day = " on " + str(r.C)
			}
			return fmt.Sprintf("campaign %d's %s limit counter of %s%s counts %d uses, but %d held or succeeded, unrefunded uses count against it",
				num(r.RefID), str(r.A), str(r.B), day, num(r.N), num(r.M))
		},
	},
}
