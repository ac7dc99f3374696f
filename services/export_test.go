package services

import (
	"context"
	"fmt"
	"testing"

	"coupond/models"
)

// SetIssuance makes c issue coupons in chunks of chunk coupons, drawing their
// codes from fill; zero values restore the defaults.
func SetIssuance(c *Campaigns, chunk int64, fill func([]string)) { c.chunk, c.fillCodes = chunk, fill }

// FillCouponCodes is fillCouponCodes, for tests that draw real codes.
var FillCouponCodes = fillCouponCodes

// CheckWithReference runs the reconciliation checks as they were first
// written, one plain query each, for tests that compare them with Check.
func CheckWithReference(ctx context.Context, r *Reconciler) ([]Violation, error) {
	vs, _, err := r.run(ctx, referenceChecks, runMode{workers: 1}, 0)
	return vs, err
}

// CheckYielding runs the checks as the scheduled job does: one at a time,
// in batches of each merchant's ids, without parallel workers. With span 0
// the batches and pauses are the job's own; otherwise every batch covers
// span ids and there are no pauses, so a small span puts batch boundaries
// between the rows of a small ledger.
func CheckYielding(ctx context.Context, r *Reconciler, span int64) ([]Violation, error) {
	mode := yieldingRun
	if span > 0 {
		mode = runMode{workers: 1, yield: true, span: span}
	}
	vs, _, err := r.run(ctx, checks, mode, 0)
	return vs, err
}

// SetTallyHook has fn called after each batch a yielding run's tally
// counts (nil: none).
func SetTallyHook(fn func()) { testHookTallied = fn }

// referenceChecks are the checks as first written: the straightforward SQL of
// each invariant, kept to prove the faster SQL in checks reports the same.
var referenceChecks = []check{
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
		sql: `SELECT c.merchant_id, c.id AS coupon_id, c.status AS a, COALESCE(s.n, 0) AS n, c.uses_total - c.uses_left AS m
FROM coupons c
LEFT JOIN (SELECT coupon_id, COUNT(*) AS n FROM redemption_flows WHERE status = 'SUCCEEDED' GROUP BY coupon_id) s
  ON s.coupon_id = c.id
WHERE c.uses_total > 1 AND (COALESCE(s.n, 0) <> c.uses_total - c.uses_left
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
		sql: `SELECT c.merchant_id, c.id AS coupon_id, c.redeem_no
FROM coupons c
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
		// cancelling its order.
		sql: `SELECT o.merchant_id, o.coupon_id, o.redeem_no, o.id AS ref_id
FROM orders o
WHERE o.status = 'CREATED' AND NOT EXISTS (SELECT 1 FROM redemption_flows f
  WHERE f.merchant_id = o.merchant_id AND (f.redeem_no = o.redeem_no OR f.order_id IN (SELECT g.id
      FROM redemption_orders g WHERE g.merchant_id = o.merchant_id AND g.order_no = o.redeem_no))
    AND (f.status = 'PROCESSING' OR (f.status = 'SUCCEEDED'
      AND NOT EXISTS (SELECT 1 FROM refund_flows r WHERE r.redemption_id = f.id AND r.created_at < ?))))`,
		args:    func(p checkParams) []any { return []any{p.refundCutoff} },
		subject: byRedeemNo,
		details: func(r checkRow) string {
			return fmt.Sprintf("order %d is live without a succeeded, unrefunded redemption", num(r.RefID))
		},
	},
	{
		kind: models.FindingRedemptionWithoutOrder, orders: true,
		sql: `SELECT f.merchant_id, f.coupon_id, f.redeem_no
FROM redemption_flows f
WHERE f.status = 'SUCCEEDED' AND f.operation = 'REDEEM'
  AND NOT EXISTS (SELECT 1 FROM refund_flows r WHERE r.redemption_id = f.id)
  AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.status = 'CREATED' AND o.redeem_no = COALESCE((SELECT g.order_no
    FROM redemption_orders g WHERE g.id = f.order_id), f.redeem_no))`,
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
FROM coupons c LEFT JOIN (SELECT coupon_id, COUNT(*) AS n FROM refund_flows GROUP BY coupon_id) s ON s.coupon_id = c.id
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
		sql: `SELECT c.merchant_id, c.id AS coupon_id, c.status AS a, lt.to_status AS b, c.version AS n, COALESCE(t.n, 0) AS m
FROM coupons c
LEFT JOIN (SELECT coupon_id, COUNT(*) AS n FROM coupon_transitions GROUP BY coupon_id) t ON t.coupon_id = c.id
LEFT JOIN coupon_transitions lt ON lt.coupon_id = c.id AND lt.version_after = c.version
WHERE c.version <> COALESCE(t.n, 0)
   OR (c.version > 0 AND (lt.id IS NULL OR lt.to_status <> c.status))
   OR (c.version = 0 AND c.status <> 'UNUSED')`,
		args: noArgs, subject: byCoupon,
		details: func(r checkRow) string {
			return fmt.Sprintf("coupon is %s at version %d with %d transitions, the last ending in %s",
				str(r.A), num(r.N), num(r.M), str(r.B))
		},
	},
	{
		kind: models.FindingIllegalTransition,
		sql: `SELECT t.merchant_id, t.coupon_id, t.id AS ref_id, t.from_status AS a, t.to_status AS b, t.flow_no AS c,
  p.to_status AS d
FROM coupon_transitions t
LEFT JOIN coupon_transitions p ON p.coupon_id = t.coupon_id AND p.version_after = t.version_after - 1
WHERE NOT ` + models.LegalEdgeSQL("t") + `
   OR (t.version_after = 1 AND t.from_status <> 'UNUSED')
   OR (t.version_after > 1 AND (p.id IS NULL OR p.to_status <> t.from_status))`,
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

// LineOf reports whether a line is open for the merchant's coupon code and how
// many requests wait in it.
func LineOf(r *Redemptions, merchantID int64, code string) (open bool, waiting int) {
	norm, err := NormalizeCouponCode(code)
	if err != nil {
		panic(err)
	}
	r.lines.mu.Lock()
	defer r.lines.mu.Unlock()
	line := r.lines.lines[lineKey{merchantID: merchantID, code: norm}]
	if line == nil {
		return false, 0
	}
	return true, len(line.waiters)
}

// HoldGate takes every slot of r's redemption gate, so redemptions wait
// before touching the database, until release is called.
func HoldGate(r *Redemptions) (release func()) {
	for range cap(r.gate.slots) {
		r.gate.slots <- struct{}{}
	}
	return func() {
		for range cap(r.gate.slots) {
			<-r.gate.slots
		}
	}
}

// RequestKey and TakenKey are the Redis keys of a request id and of a
// coupon's taken-for-good marker, for tests that read or plant them.
var (
	RequestKey = requestKey
	TakenKey   = takenKey
)

// WaitUsageWrites waits until no background write of a token's last use is
// in flight, so a test can tell "not written" from "not written yet".
func (t *Tokens) WaitUsageWrites() {
	for range maxUsageWriters {
		t.usageWriters <- struct{}{}
	}
	for range maxUsageWriters {
		<-t.usageWriters
	}
}

// RaceEnabled reports whether the tests run with the race detector.
const RaceEnabled = raceEnabled

// SkipUnderRace skips a long, single-goroutine-heavy test when the race
// detector is on: under it the test takes ten times as long and finds
// nothing the concurrent tests do not. scripts/test.sh runs these tests in a
// step of their own without the detector (see raceFreeTests there), so CI
// still runs every one of them.
func SkipUnderRace(t testing.TB) {
	t.Helper()
	if raceEnabled {
		t.Skip("run without the race detector by scripts/test.sh")
	}
}

// SetEventCountSpan makes w's next count of the outbox's events start with
// statements over span watermark keys, so that a small outbox is read in
// many statements.
func SetEventCountSpan(w *Webhooks, span int64) {
	w.events.mu.Lock()
	w.events.span = span
	w.events.mu.Unlock()
}
