package models

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
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
	// FindingAllowanceCountMismatch: a counter of the limits at redemption
	// (perCustomerLimit, perCustomerDailyLimit, perStoreDailyLimit) that does
	// not equal the held and succeeded, unrefunded uses it counts.
	FindingAllowanceCountMismatch FindingKind = "ALLOWANCE_COUNT_MISMATCH"
	// FindingLookupFailing: compensation could not learn the outcome of a stuck
	// redemption from the fulfillment adapter after repeated tries.
	FindingLookupFailing FindingKind = "LOOKUP_FAILING"
	// FindingWebhookFailing: a webhook endpoint failed every attempt for 3
	// days and was disabled.
	FindingWebhookFailing FindingKind = "WEBHOOK_FAILING"
)

// Finding is one discrepancy, written once (DedupeKey is unique per merchant)
// and reviewed by finance: OPEN -> RESOLVED with the resolver and a note, and
// back to OPEN (Reopened + 1) when reconciliation finds it again. Its
// finding_events rows keep the history the row itself overwrites.
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
	// Reopened counts how often the finding went from RESOLVED back to OPEN.
	Reopened int64
	// LastSeenAt is when a check last found the discrepancy.
	LastSeenAt *time.Time
}

// FindingAction names an event in a finding's history.
type FindingAction string

// Finding history actions.
const (
	FindingEventOpened   FindingAction = "OPENED"
	FindingEventResolved FindingAction = "RESOLVED"
	FindingEventReopened FindingAction = "REOPENED"
)

// FindingEvent is one step of a finding's history, stored in finding_events:
// opened once, then resolved (by whom, with the note) and reopened as often as
// that happens.
type FindingEvent struct {
	ID         int64
	MerchantID int64
	FindingID  int64
	Action     FindingAction
	// Actor resolved the finding; nil for events of the reconciliation.
	Actor     *string
	Note      *string
	CreatedAt time.Time
}

// findingKeysChunk bounds the keys of one IN list.
const findingKeysChunk = 500

// InsertFindings writes findings, skipping any whose dedupe key the merchant
// already has, and returns how many were new. Each finding's OPENED event is
// written with it, once whoever writes the finding first; a finding without
// LastSeenAt was last seen when it was created.
func InsertFindings(tx *gorm.DB, fs []Finding) (int64, error) {
	if len(fs) == 0 {
		return 0, nil
	}
	keys := map[int64][]string{}
	for i := range fs {
		if fs[i].LastSeenAt == nil {
			at := fs[i].CreatedAt
			fs[i].LastSeenAt = &at
		}
		keys[fs[i].MerchantID] = append(keys[fs[i].MerchantID], fs[i].DedupeKey)
	}
	var n int64
	err := tx.Transaction(func(tx *gorm.DB) error {
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(fs, 500)
		if res.Error != nil {
			return res.Error
		}
		n = res.RowsAffected
		for m, ks := range keys {
			for c := range slices.Chunk(ks, findingKeysChunk) {
				// The partial unique index finding_events_opened keeps one OPENED
				// event per finding, whichever run wrote it.
				var opened []int64
				err := scanRaw(tx, &opened, `INSERT INTO finding_events (merchant_id, finding_id, action, created_at)
SELECT merchant_id, id, 'OPENED', created_at FROM findings WHERE merchant_id = ? AND dedupe_key IN ?
ON CONFLICT DO NOTHING RETURNING finding_id`, m, c).Error
				if err != nil {
					return err
				}
				if err := insertFindingOpenedEvents(tx, m, opened); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return n, err
}

// ResolvedFindingKeys returns which of keys name a RESOLVED finding of the
// merchant.
func ResolvedFindingKeys(tx *gorm.DB, merchantID int64, keys []string) ([]string, error) {
	var out []string
	for c := range slices.Chunk(keys, findingKeysChunk) {
		var got []string
		err := tx.Model(&Finding{}).Where("merchant_id = ? AND status = ? AND dedupe_key IN ?", merchantID,
			string(FindingResolved), c).Pluck("dedupe_key", &got).Error
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// ReopenFinding moves the merchant's RESOLVED finding with key back to OPEN,
// counts the reopening, clears the resolution (its REOPENED event follows the
// RESOLVED one in the history, which keeps it) and appends the event, and
// writes its finding.opened event (data.reopened true) on tx. It
// reports false, writing nothing, when no such RESOLVED finding exists: it is
// open already or was reopened by another run. A finding resolved after
// resolvedBy is left resolved: the check that saw it read data older than
// the resolution (a read replica's).
func ReopenFinding(tx *gorm.DB, merchantID int64, key string, now, resolvedBy time.Time) (bool, error) {
	res := tx.Exec(`UPDATE findings SET status = 'OPEN', reopened = reopened + 1, last_seen_at = ?,
resolved_by = NULL, note = NULL, resolved_at = NULL
WHERE merchant_id = ? AND dedupe_key = ? AND status = 'RESOLVED' AND (resolved_at IS NULL OR resolved_at <= ?)`, now, merchantID, key, resolvedBy)
	if res.Error != nil || res.RowsAffected != 1 {
		return false, res.Error
	}
	err := tx.Exec(`INSERT INTO finding_events (merchant_id, finding_id, action, created_at)
SELECT merchant_id, id, 'REOPENED', ? FROM findings WHERE merchant_id = ? AND dedupe_key = ?`, now, merchantID, key).Error
	if err != nil {
		return false, err
	}
	var f Finding
	if err := tx.Where("merchant_id = ? AND dedupe_key = ?", merchantID, key).Take(&f).Error; err != nil {
		return false, err
	}
	if err := insertFindingOpenedEvent(tx, &f, true, now); err != nil {
		return false, err
	}
	return true, nil
}

// SeeFindings records that a check found the merchant's findings with keys
// again at now.
func SeeFindings(tx *gorm.DB, merchantID int64, keys []string, now time.Time) error {
	for c := range slices.Chunk(keys, findingKeysChunk) {
		if err := tx.Exec(`UPDATE findings SET last_seen_at = ? WHERE merchant_id = ? AND dedupe_key IN ?`,
			now, merchantID, c).Error; err != nil {
			return err
		}
	}
	return nil
}

// ResolveFinding moves an OPEN finding of a merchant to RESOLVED and appends
// its RESOLVED event with by and note; it reports false, writing nothing,
// when no such OPEN finding exists. Run it in a transaction.
func ResolveFinding(tx *gorm.DB, merchantID, id int64, by, note string, now time.Time) (bool, error) {
	res := tx.Exec(`UPDATE findings SET status = 'RESOLVED', resolved_by = ?, note = ?, resolved_at = ?
WHERE id = ? AND merchant_id = ? AND status = 'OPEN'`, by, note, now, id, merchantID)
	if res.Error != nil || res.RowsAffected != 1 {
		return false, res.Error
	}
	err := tx.Create(&FindingEvent{MerchantID: merchantID, FindingID: id, Action: FindingEventResolved, Actor: &by,
		Note: &note, CreatedAt: now}).Error
	return err == nil, err
}

// FindingByID returns the merchant's finding id; another merchant's or an
// unknown id is gorm.ErrRecordNotFound.
func FindingByID(db *gorm.DB, merchantID, id int64) (*Finding, error) {
	var f Finding
	if err := db.Where("id = ? AND merchant_id = ?", id, merchantID).Take(&f).Error; err != nil {
		return nil, err
	}
	return &f, nil
}

// FindingFilter narrows MerchantFindings; zero fields do not filter.
type FindingFilter struct {
	Status   FindingStatus
	Kind     FindingKind
	CouponID int64
	// From and To bound the creation time: From <= created_at < To.
	From, To time.Time
}

// MerchantFindings returns a query of one merchant's findings that match f,
// for the caller to order and page.
func MerchantFindings(db *gorm.DB, merchantID int64, f FindingFilter) *gorm.DB {
	q := db.Model(&Finding{}).Where("merchant_id = ?", merchantID)
	if f.Status != "" {
		q = q.Where("status = ?", string(f.Status))
	}
	if f.Kind != "" {
		q = q.Where("kind = ?", string(f.Kind))
	}
	if f.CouponID != 0 {
		q = q.Where("coupon_id = ?", f.CouponID)
	}
	if !f.From.IsZero() {
		q = q.Where("created_at >= ?", f.From.UTC())
	}
	if !f.To.IsZero() {
		q = q.Where("created_at < ?", f.To.UTC())
	}
	return q
}

// FindingEvents returns the history of the merchant's findings among ids,
// oldest first per finding.
func FindingEvents(db *gorm.DB, merchantID int64, ids []int64) ([]FindingEvent, error) {
	var out []FindingEvent
	err := db.Where("merchant_id = ? AND finding_id IN ?", merchantID, ids).Order("finding_id, id").Find(&out).Error
	return out, err
}

// EachFindingForExport calls fn with the merchant's findings that match f,
// newest first: one query per batch rows, each continuing below the last id
// of the one before, so memory stays at one batch. It stops at fn's first
// error.
func EachFindingForExport(db *gorm.DB, merchantID int64, f FindingFilter, batch BatchSize, fn func(Finding) error) error {
	before := int64(-1)
	for {
		n := batch()
		q := MerchantFindings(db, merchantID, f)
		if before >= 0 {
			q = q.Where("id < ?", before)
		}
		var rows []Finding
		if err := q.Order("id DESC").Limit(n).Find(&rows).Error; err != nil {
			return fmt.Errorf("export findings: %w", err)
		}
		for _, r := range rows {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(rows) < n {
			return nil
		}
		before = rows[len(rows)-1].ID
	}
}

// insertFindingOpenedEvents writes finding.opened for each of the merchant's
// findings ids, which this transaction opened.
func insertFindingOpenedEvents(tx *gorm.DB, merchantID int64, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	var fs []Finding
	if err := tx.Where("merchant_id = ? AND id IN ?", merchantID, ids).Order("id").Find(&fs).Error; err != nil {
		return err
	}
	for i := range fs {
		if err := insertFindingOpenedEvent(tx, &fs[i], false, fs[i].CreatedAt); err != nil {
			return err
		}
	}
	return nil
}

// insertFindingOpenedEvent writes the finding.opened event of f, opened
// for the first time or (reopened) again by a check that found it after it
// was resolved, at at.
func insertFindingOpenedEvent(tx *gorm.DB, f *Finding, reopened bool, at time.Time) error {
	data := map[string]any{"findingId": strconv.FormatInt(f.ID, 10), "kind": f.Kind, "details": f.Details,
		"redeemNo": f.RedeemNo, "couponId": nil, "reopened": reopened}
	if f.CouponID != nil {
		data["couponId"] = strconv.FormatInt(*f.CouponID, 10)
	}
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return InsertEvent(tx, &OutboxEvent{MerchantID: f.MerchantID, UID: NewEventUID(), Type: EventFindingOpened,
		Data: string(b), CreatedAt: at})
}

// OpenFindingStats counts, across all merchants, the OPEN findings and
// returns when the oldest was created (nil when none is open).
func OpenFindingStats(db *gorm.DB) (int64, *time.Time, error) {
	var row struct {
		N      int64
		Oldest *time.Time
	}
	err := scanRaw(db, &row, `SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM findings WHERE status = 'OPEN'`).Error
	return row.N, row.Oldest, err
}
