package services

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// Expirer moves UNUSED coupons whose validity ended to EXPIRED (the expiry
// job), so the unused-coupon and liability figures finance reads are true.
// Each batch is one transaction: one conditional update of up to batchSize
// coupons (a coupon a redemption takes meanwhile no longer matches), a
// transition row per coupon (actor system) and an audit record per merchant.
// A coupon held REDEEMING past its validity is left to compensation, which
// may still confirm it; if it releases the coupon instead, the next run
// expires it.
type Expirer struct {
	db         *gorm.DB
	now        func() time.Time
	audit      *Audit
	batchSize  int
	maxBatches int
}

// ExpiryResult counts what one expiry run did.
type ExpiryResult struct {
	// Expired is how many coupons the run moved to EXPIRED.
	Expired int
	// Batches is how many transactions it took.
	Batches int
}

// Counts returns the result as named counts for the job-run record.
func (r ExpiryResult) Counts() map[string]int64 {
	return map[string]int64{"expired": int64(r.Expired), "batches": int64(r.Batches)}
}

// Run expires every merchant's ended coupons, in at most maxBatches batches;
// what is left waits for the next run.
func (e *Expirer) Run(ctx context.Context) (ExpiryResult, error) {
	res, _, err := e.run(ctx, 0)
	return res, err
}

// run is Run over one merchant, or every merchant when merchantID is 0; it
// also returns the counts of each merchant it expired coupons of.
func (e *Expirer) run(ctx context.Context, merchantID int64) (ExpiryResult, map[int64]*ExpiryResult, error) {
	var res ExpiryResult
	byMerchant := map[int64]*ExpiryResult{}
	for range e.maxBatches {
		if err := ctx.Err(); err != nil {
			return res, byMerchant, fmt.Errorf("expiry: %w", err)
		}
		n, err := e.batch(ctx, merchantID, byMerchant)
		if err != nil {
			return res, byMerchant, err
		}
		if n == 0 {
			break
		}
		res.Expired += n
		res.Batches++
		if n < e.batchSize {
			break
		}
	}
	return res, byMerchant, nil
}

// batch expires one batch in one transaction and returns its size.
func (e *Expirer) batch(ctx context.Context, merchantID int64, byMerchant map[int64]*ExpiryResult) (int, error) {
	now := e.now()
	batchNo := newFlowNo("EX", now)
	var expired []models.Expired
	perMerchant := map[int64]int{}
	err := e.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if expired, err = models.ExpireCoupons(tx, merchantID, now, e.batchSize); err != nil || len(expired) == 0 {
			return err
		}
		ts := make([]models.CouponTransition, len(expired))
		for i, c := range expired {
			ts[i] = models.CouponTransition{MerchantID: c.MerchantID, CouponID: c.ID, FromStatus: models.CouponUnused,
				ToStatus: models.CouponExpired, VersionAfter: c.Version, FlowNo: batchNo, Actor: SystemActor(c.MerchantID).Label(), CreatedAt: now}
			perMerchant[c.MerchantID]++
		}
		if err := models.RecordTransitions(tx, ts...); err != nil {
			return err
		}
		merchants := make([]int64, 0, len(perMerchant))
		for m := range perMerchant {
			merchants = append(merchants, m)
		}
		slices.Sort(merchants)
		codes := map[int64][]string{}
		for _, c := range expired {
			codes[c.MerchantID] = append(codes[c.MerchantID], c.Code)
		}
		for _, m := range merchants {
			if err := recordEvent(tx, m, models.EventCouponExpired, 0, now, map[string]any{
				"batchNo": batchNo, "count": len(codes[m]), "codes": codes[m]}); err != nil {
				return err
			}
			if err := e.audit.record(tx, SystemActor(m), "coupon.expire", "batch:"+batchNo,
				"expired "+strconv.Itoa(perMerchant[m])+" coupons whose validity ended", nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("expire coupons: %w", err)
	}
	for id, n := range perMerchant {
		m := byMerchant[id]
		if m == nil {
			m = &ExpiryResult{}
			byMerchant[id] = m
		}
		m.Expired += n
		m.Batches++
	}
	return len(expired), nil
}
