package models

import (
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// JobRunStatus is the state of one run of a background job.
type JobRunStatus string

// Job run states. A run left RUNNING belongs to a process that died mid-run.
const (
	JobRunning   JobRunStatus = "RUNNING"
	JobSucceeded JobRunStatus = "SUCCEEDED"
	JobFailed    JobRunStatus = "FAILED"
)

// JobRun records one run of a background job: when it ran, what it did (counts,
// a JSON object of named integers) and how it ended. Singleton jobs carry their
// schedule slot, unique per job.
type JobRun struct {
	ID         int64
	Job        string
	Slot       *string
	Node       string
	Status     JobRunStatus
	Counts     string
	Error      *string
	StartedAt  time.Time
	FinishedAt *time.Time
}

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

// ClaimJobRun inserts a RUNNING run. A run with a slot claims it: when the job
// already has a run for that slot nothing is written and ClaimJobRun reports
// false.
func ClaimJobRun(tx *gorm.DB, run *JobRun) (bool, error) {
	res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(run)
	return res.RowsAffected == 1, res.Error
}

// FinishJobRun records how a RUNNING run ended.
func FinishJobRun(tx *gorm.DB, id int64, status JobRunStatus, counts string, errText *string, now time.Time) error {
	return tx.Exec(`UPDATE job_runs SET status = ?, counts = ?, error = ?, finished_at = ? WHERE id = ? AND status = 'RUNNING'`,
		string(status), counts, errText, now, id).Error
}

// FenceFlow marks a PROCESSING redemption as being released by compensation:
// from then on FinishFlow refuses to make it SUCCEEDED. It reports false when the
// flow has left PROCESSING. Marking an already fenced flow again succeeds, so a
// compensation run that died after fencing can be finished by the next.
func FenceFlow(tx *gorm.DB, flowID int64, now time.Time) (bool, error) {
	res := tx.Exec(`UPDATE redemption_flows SET fenced_at = COALESCE(fenced_at, ?), updated_at = ?
WHERE id = ? AND status = 'PROCESSING'`, now, now, flowID)
	return res.RowsAffected == 1, res.Error
}

// CountLookupFailure adds one to the failed compensation attempts of a
// PROCESSING redemption, gives up its claim so the next run retries it, and
// returns the new count; false when the flow has left PROCESSING.
func CountLookupFailure(tx *gorm.DB, flowID int64, now time.Time) (int64, bool, error) {
	var attempts []int64
	err := tx.Raw(`UPDATE redemption_flows SET attempts = attempts + 1, claimed_until = NULL, updated_at = ?
WHERE id = ? AND status = 'PROCESSING' RETURNING attempts`, now, flowID).Scan(&attempts).Error
	if err != nil || len(attempts) != 1 {
		return 0, false, err
	}
	return attempts[0], true, nil
}
