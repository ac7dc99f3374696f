package services

import (
	"context"
	"fmt"
	"time"

	"coupond/models"
)

// CloseDayResult totals what the daily-statement job did: the statements of
// the previous local day it stored, and the adjustments it booked.
type CloseDayResult struct {
	Merchants      int
	Lines          int
	RedeemedCount  int64
	RedeemedAmount int64
	RefundedCount  int64
	RefundedAmount int64
	ExpiredCount   int64
	VoidedCount    int64
	// AlreadyClosed counts merchants whose previous day finance had closed
	// before the job came to store it.
	AlreadyClosed int
	// Adjustments counts the adjustment rows booked.
	Adjustments int
}

// add adds the totals of one merchant's day, o, to r.
func (r *CloseDayResult) add(o CloseDayResult) {
	r.Merchants += o.Merchants
	r.Lines += o.Lines
	r.RedeemedCount += o.RedeemedCount
	r.RedeemedAmount += o.RedeemedAmount
	r.RefundedCount += o.RefundedCount
	r.RefundedAmount += o.RefundedAmount
	r.ExpiredCount += o.ExpiredCount
	r.VoidedCount += o.VoidedCount
	r.AlreadyClosed += o.AlreadyClosed
	r.Adjustments += o.Adjustments
}

// Counts returns the result as named counts for the job-run record.
func (r CloseDayResult) Counts() map[string]int64 {
	return map[string]int64{"merchants": int64(r.Merchants), "lines": int64(r.Lines),
		"redeemedCount": r.RedeemedCount, "redeemedAmount": r.RedeemedAmount,
		"refundedCount": r.RefundedCount, "refundedAmount": r.RefundedAmount,
		"expiredCount": r.ExpiredCount, "voidedCount": r.VoidedCount,
		"alreadyClosed": int64(r.AlreadyClosed), "adjustments": int64(r.Adjustments)}
}

// CloseDay stores, for every merchant, the statement of the day before today
// in the merchant's time zone (unless finance closed it already), books the
// adjustments of recently closed days, and returns the totals; the daily
// statement job records them in its run. It fails on the first merchant whose
// statement cannot be stored.
func (s *Statements) CloseDay(ctx context.Context) (CloseDayResult, error) {
	res, _, err := s.closeDay(ctx, 0)
	return res, err
}

// closeDay is CloseDay for one merchant, or every merchant when merchantID is
// 0; it also returns the totals of each merchant whose day had lines or
// adjustments.
func (s *Statements) closeDay(ctx context.Context, merchantID int64) (CloseDayResult, map[int64]*CloseDayResult, error) {
	var res CloseDayResult
	byMerchant := map[int64]*CloseDayResult{}
	merchants, err := models.Merchants(s.db.WithContext(ctx), merchantID)
	if err != nil {
		return res, byMerchant, fmt.Errorf("list merchants: %w", err)
	}
	now := s.now()
	for _, m := range merchants {
		if err := ctx.Err(); err != nil {
			return res, byMerchant, fmt.Errorf("daily statement: %w", err)
		}
		loc, err := time.LoadLocation(m.Timezone)
		if err != nil {
			return res, byMerchant, fmt.Errorf("time zone of merchant %d: %w", m.ID, err)
		}
		day := localDay(now, loc, -1)
		wrote, lines, err := s.storeDay(ctx, SystemActor(m.ID), m.ID, loc, day, false)
		if err != nil {
			return res, byMerchant, err
		}
		one := CloseDayResult{Merchants: 1}
		if !wrote {
			one.AlreadyClosed = 1
		}
		for _, l := range lines {
			if l.StoreID != 0 {
				one.Lines++ // counted per store and campaign
			}
			one.RedeemedCount += l.RedeemedCount
			one.RedeemedAmount += l.RedeemedAmount
			one.RefundedCount += l.RefundedCount
			one.RefundedAmount += l.RefundedAmount
			one.ExpiredCount += l.ExpiredCount
			one.VoidedCount += l.VoidedCount
		}
		if one.Adjustments, err = s.bookAdjustments(ctx, m.ID, loc); err != nil {
			return res, byMerchant, err
		}
		res.add(one)
		if len(lines) > 0 || one.Adjustments > 0 {
			byMerchant[m.ID] = &one
		}
	}
	return res, byMerchant, nil
}
