package models

import (
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// FindingStatus is the review state of a finding.
type FindingStatus string

// Finding states: a finding is OPEN until finance resolves it with a note.
const (
	FindingOpen     FindingStatus = "OPEN"
	FindingResolved FindingStatus = "RESOLVED"
)

// FindingKind names a class of discrepancy between coupons, ledger and orders.
type FindingKind string

// Finding kinds, one per reconciliation check plus the compensation job's own.
const (
	// FindingSucceededFlowCouponNotRedeemed: a SUCCEEDED redemption whose coupon
	// is not REDEEMED or REFUNDED under that redemption number.
	FindingSucceededFlowCouponNotRedeemed FindingKind = "SUCCEEDED_FLOW_COUPON_NOT_REDEEMED"
	// FindingRedeemedCouponFlowCount: a REDEEMED or REFUNDED coupon without
	// exactly one succeeded redemption.
	FindingRedeemedCouponFlowCount FindingKind = "REDEEMED_COUPON_FLOW_COUNT"
	// FindingProcessingFlowCouponNotHeld: a PROCESSING redemption whose coupon is
	// not REDEEMING under that redemption number.
	FindingProcessingFlowCouponNotHeld FindingKind = "PROCESSING_FLOW_COUPON_NOT_HELD"
	// FindingRedeemingCouponWithoutFlow: a REDEEMING coupon without the
	// PROCESSING redemption that holds it.
	FindingRedeemingCouponWithoutFlow FindingKind = "REDEEMING_COUPON_WITHOUT_FLOW"
	// FindingStuckRedeeming: a coupon REDEEMING past its hold deadline plus one
	// compensation interval: compensation is not converging.
	FindingStuckRedeeming FindingKind = "STUCK_REDEEMING"
	// FindingOrderWithoutRedemption: a live order without a succeeded,
	// unrefunded redemption.
	FindingOrderWithoutRedemption FindingKind = "ORDER_WITHOUT_REDEMPTION"
	// FindingRedemptionWithoutOrder: a succeeded, unrefunded one-shot
	// redemption without a live order.
	FindingRedemptionWithoutOrder FindingKind = "REDEMPTION_WITHOUT_ORDER"
	// FindingRefundWithoutRedemption: a refund whose redemption is not a
	// succeeded redemption of the same coupon.
	FindingRefundWithoutRedemption FindingKind = "REFUND_WITHOUT_REDEMPTION"
	// FindingRefundCount: a REFUNDED coupon without exactly one refund, or a
	// refund of a coupon that is not REFUNDED.
	FindingRefundCount FindingKind = "REFUND_COUNT"
	// FindingHistoryMismatch: a coupon whose version is not the number of its
	// transitions, or whose last transition does not end in its status.
	FindingHistoryMismatch FindingKind = "HISTORY_MISMATCH"
	// FindingIllegalTransition: a transition along an edge the state machine
	// does not have, or one that does not start where the previous one ended.
	FindingIllegalTransition FindingKind = "ILLEGAL_TRANSITION"
	// FindingIssuedCountMismatch: a campaign whose issued and reissued counters
	// do not add up to its coupons.
	FindingIssuedCountMismatch FindingKind = "ISSUED_COUNT_MISMATCH"
	// FindingLookupFailing: compensation could not learn the outcome of a stuck
	// redemption from the fulfillment adapter after repeated tries.
	FindingLookupFailing FindingKind = "LOOKUP_FAILING"
)

// Finding is one discrepancy, written once (DedupeKey is unique per merchant)
// and reviewed by finance: OPEN -> RESOLVED with the resolver and a note.
type Finding struct {
	ID         int64
	MerchantID int64
	Kind       FindingKind
	CouponID   *int64
	RedeemNo   *string
	Details    string
	DedupeKey  string
	Status     FindingStatus
	ResolvedBy *string
	Note       *string
	ResolvedAt *time.Time
	CreatedAt  time.Time
}

// InsertFindings writes findings, skipping any whose dedupe key the merchant
// already has, and returns how many were new.
func InsertFindings(tx *gorm.DB, fs []Finding) (int64, error) {
	if len(fs) == 0 {
		return 0, nil
	}
	res := tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(fs, 500)
	return res.RowsAffected, res.Error
}

// ResolveFinding moves an OPEN finding of a merchant to RESOLVED; it reports
// false when no such OPEN finding exists.
func ResolveFinding(tx *gorm.DB, merchantID, id int64, by, note string, now time.Time) (bool, error) {
	res := tx.Exec(`UPDATE findings SET status = 'RESOLVED', resolved_by = ?, note = ?, resolved_at = ?
WHERE id = ? AND merchant_id = ? AND status = 'OPEN'`, by, note, now, id, merchantID)
	return res.RowsAffected == 1, res.Error
}
