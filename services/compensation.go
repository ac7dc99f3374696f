package services

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// ReleaseHoldTimeout is the release reason of a redemption that compensation
// released because it was still PROCESSING past its hold deadline and the
// business system had no order for it.
const ReleaseHoldTimeout = "HOLD_TIMEOUT"

// Compensator makes stuck redemptions converge. A redemption still PROCESSING
// past its hold deadline (a crashed or timed-out request, or a reservation its
// client never confirmed) is claimed and resolved:
//
//   - one-shot, order exists: rolled forward (flow SUCCEEDED, coupon REDEEMED);
//   - one-shot, no order: fenced, then released: the flow is marked so that it
//     can no longer succeed, the adapter cancels the redemption number so a late
//     Fulfil is refused, and only then is the coupon given back;
//   - lookup or cancel fails: left for the next run, and after
//     LookupFailuresBeforeFinding tries a LOOKUP_FAILING finding is opened;
//   - two-phase reservation: released; a later confirm answers INVALID_STATE.
//
// Claims (a lease taken with FOR UPDATE SKIP LOCKED on PostgreSQL) only keep
// workers from doing the same work twice; correctness rests on the conditional
// updates of Redemptions.finish, so any number of workers may run at once. The
// fence and the coupon's move carry the coupon version read at the claim as
// well as the holder's redemption number (the seed's fifth pitfall): a coupon
// that moved on since is never touched.
type Compensator struct {
	db             *gorm.DB
	now            func() time.Time
	red            *Redemptions
	fulfiller      Fulfiller
	log            *slog.Logger
	batchSize      int
	maxBatches     int
	lease          time.Duration
	lookupFailures int64
}

// CompensationResult counts what one compensation run did.
type CompensationResult struct {
	// Claimed is how many stuck redemptions the run took on.
	Claimed int
	// RolledForward were confirmed because their order exists.
	RolledForward int
	// Released were fenced and given back (or were reservations past their
	// deadline).
	Released int
	// Failed could not be resolved this time (lookup, cancel or database error)
	// and are retried by the next run.
	Failed int
	// Lost were finished by someone else (the original request, a confirm or
	// cancel, another worker) between the claim and the resolution.
	Lost int
	// FindingsOpened is how many LOOKUP_FAILING findings the run opened.
	FindingsOpened int
}

// add adds the counts of o to r.
func (r *CompensationResult) add(o CompensationResult) {
	r.Claimed += o.Claimed
	r.RolledForward += o.RolledForward
	r.Released += o.Released
	r.Failed += o.Failed
	r.Lost += o.Lost
	r.FindingsOpened += o.FindingsOpened
}

// Counts returns the result as named counts for the job-run record.
func (r CompensationResult) Counts() map[string]int64 {
	return map[string]int64{"claimed": int64(r.Claimed), "rolledForward": int64(r.RolledForward),
		"released": int64(r.Released), "failed": int64(r.Failed), "lost": int64(r.Lost),
		"findingsOpened": int64(r.FindingsOpened)}
}

// Run resolves the redemptions of every merchant that are stuck now, in
// batches of at most batchSize, visiting each at most once per run. Errors on
// one redemption are logged and counted as Failed and do not stop the run; Run
// returns the first of them, or an error when claiming fails or ctx ends.
func (c *Compensator) Run(ctx context.Context) (CompensationResult, error) {
	res, _, err := c.run(ctx, 0)
	return res, err
}

// run is Run over one merchant, or every merchant when merchantID is 0; it
// also returns the counts of each merchant it claimed redemptions of.
func (c *Compensator) run(ctx context.Context, merchantID int64) (CompensationResult, map[int64]*CompensationResult, error) {
	var (
		res        CompensationResult
		byMerchant = map[int64]*CompensationResult{}
		firstErr   error
		lastID     int64
	)
	for range c.maxBatches {
		if err := ctx.Err(); err != nil {
			return res, byMerchant, fmt.Errorf("compensation: %w", err)
		}
		flows, err := c.claim(ctx, merchantID, lastID)
		if err != nil {
			return res, byMerchant, err
		}
		for i := range flows {
			lastID = max(lastID, flows[i].ID)
			one := CompensationResult{Claimed: 1}
			out, err := c.resolve(ctx, &flows[i], &one)
			if err != nil {
				out = outcomeRetry
				c.log.ErrorContext(ctx, "compensation", "redeem_no", flows[i].RedeemNo, "err", err)
				if firstErr == nil {
					firstErr = err
				}
			}
			switch out {
			case outcomeRolledForward:
				one.RolledForward++
			case outcomeReleased:
				one.Released++
			case outcomeLost:
				one.Lost++
			default:
				one.Failed++
			}
			res.add(one)
			m := byMerchant[flows[i].MerchantID]
			if m == nil {
				m = &CompensationResult{}
				byMerchant[flows[i].MerchantID] = m
			}
			m.add(one)
		}
		if len(flows) < c.batchSize {
			break
		}
	}
	return res, byMerchant, firstErr
}

// claim leases the next batch of stuck redemptions after lastID to this worker
// in one short transaction. On PostgreSQL rows another worker is claiming are
// skipped rather than waited for; on SQLite the clause is dropped and the
// single writer serialises claims.
func (c *Compensator) claim(ctx context.Context, merchantID, lastID int64) ([]models.StuckFlow, error) {
	now := c.now()
	var flows []models.StuckFlow
	err := c.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		flows, err = models.ClaimStuckFlows(tx, merchantID, now, now.Add(c.lease), lastID, c.batchSize)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim stuck redemptions: %w", err)
	}
	return flows, nil
}

// outcome is how compensation left one redemption.
type outcome int

const (
	outcomeRetry outcome = iota
	outcomeRolledForward
	outcomeReleased
	outcomeLost
)

// resolve decides one claimed redemption. It returns an error only for
// failures of coupond's own database; adapter failures are outcomeRetry.
func (c *Compensator) resolve(ctx context.Context, f *models.StuckFlow, res *CompensationResult) (outcome, error) {
	actor := SystemActor(f.MerchantID)
	flow := &f.RedemptionFlow
	if f.Operation == models.OpReserve {
		// The client runs its own order and never confirmed in time: the
		// reservation simply ends; a late confirm finds it RELEASED.
		return c.release(ctx, actor, f)
	}
	if f.OrderID != nil {
		return c.resolveOrder(ctx, actor, f, res)
	}
	db := c.db.WithContext(ctx)
	if f.FencedAt == nil {
		lctx, cancel := context.WithTimeout(ctx, c.red.adapter.timeout)
		look, err := c.fulfiller.Lookup(lctx, f.MerchantID, f.RedeemNo)
		cancel()
		if err != nil {
			return c.failed(ctx, flow, fmt.Errorf("look up order: %w", err), res)
		}
		if look.Exists {
			_, won, err := c.red.settle(ctx, actor, flow, look.OrderRef, f.CouponVersion)
			if err != nil || !won {
				return outcomeLost, err
			}
			return outcomeRolledForward, nil
		}
		ok, err := models.FenceFlow(db, f.ID, f.CouponVersion, c.now())
		if err != nil {
			return outcomeRetry, fmt.Errorf("fence redemption %s: %w", f.RedeemNo, err)
		}
		if !ok {
			return outcomeLost, nil
		}
	}
	// From here the flow can only be released. Cancel fences the redemption
	// number at the business system before the coupon is given back, so an
	// order can never appear for a coupon that is free again.
	cctx, cancel := context.WithTimeout(ctx, c.red.adapter.timeout)
	err := c.fulfiller.Cancel(cctx, f.MerchantID, f.RedeemNo)
	cancel()
	if err != nil {
		return c.failed(ctx, flow, fmt.Errorf("fence at the adapter: %w", err), res)
	}
	return c.release(ctx, actor, f)
}

// resolveOrder decides a claimed flow of a multi-code order by deciding the
// whole order, the same way resolve decides one flow: the business order is
// looked up by the order's key (its first redemption number); it exists:
// every flow is confirmed; it does not: the order is fenced (it can no longer
// succeed), the key cancelled at the adapter, and every coupon given back.
// The order row's conditional update decides, so the order's other flows,
// claimed in the same batch or by another worker, are found finished
// (outcomeLost), and a late answer of the original request loses.
func (c *Compensator) resolveOrder(ctx context.Context, actor Actor, f *models.StuckFlow, res *CompensationResult) (outcome, error) {
	db := c.db.WithContext(ctx)
	order, err := models.RedemptionOrderByID(db, f.MerchantID, *f.OrderID)
	if err != nil {
		return outcomeRetry, fmt.Errorf("find order of %s: %w", f.RedeemNo, err)
	}
	if order.Status != models.FlowProcessing {
		return outcomeLost, nil
	}
	flows, err := models.FlowsOfOrder(db, f.MerchantID, order.ID)
	if err != nil {
		return outcomeRetry, fmt.Errorf("find flows of order %s: %w", order.OrderNo, err)
	}
	if order.FencedAt == nil {
		lctx, cancel := context.WithTimeout(ctx, c.red.adapter.timeout)
		look, err := c.fulfiller.Lookup(lctx, f.MerchantID, order.OrderNo)
		cancel()
		if err != nil {
			return c.failed(ctx, &f.RedemptionFlow, fmt.Errorf("look up order: %w", err), res)
		}
		if look.Exists {
			_, won, err := c.red.settleOrder(ctx, actor, order, flows, models.FlowSucceeded, &look.OrderRef, "")
			if err != nil || !won {
				return outcomeLost, err
			}
			return outcomeRolledForward, nil
		}
		ok, err := models.FenceRedemptionOrder(db, f.MerchantID, order.ID, c.now())
		if err != nil {
			return outcomeRetry, fmt.Errorf("fence order %s: %w", order.OrderNo, err)
		}
		if !ok {
			return outcomeLost, nil
		}
	}
	cctx, cancel := context.WithTimeout(ctx, c.red.adapter.timeout)
	err = c.fulfiller.Cancel(cctx, f.MerchantID, order.OrderNo)
	cancel()
	if err != nil {
		return c.failed(ctx, &f.RedemptionFlow, fmt.Errorf("fence at the adapter: %w", err), res)
	}
	_, won, err := c.red.settleOrder(ctx, actor, order, flows, models.FlowReleased, nil, ReleaseHoldTimeout)
	if err != nil || !won {
		return outcomeLost, err
	}
	return outcomeReleased, nil
}

func (c *Compensator) release(ctx context.Context, actor Actor, f *models.StuckFlow) (outcome, error) {
	_, won, err := c.red.release(ctx, actor, &f.RedemptionFlow, ReleaseHoldTimeout, f.CouponVersion)
	if err != nil || !won {
		return outcomeLost, err
	}
	return outcomeReleased, nil
}

// failed records an unsuccessful try at the adapter: the flow stays PROCESSING
// for the next run, and after lookupFailures tries a finding is opened (once).
func (c *Compensator) failed(ctx context.Context, flow *models.RedemptionFlow, cause error, res *CompensationResult) (outcome, error) {
	c.log.WarnContext(ctx, "compensation could not resolve redemption", "redeem_no", flow.RedeemNo, "err", cause)
	db := c.db.WithContext(ctx)
	now := c.now()
	attempts, ok, err := models.CountLookupFailure(db, flow.ID, now)
	if err != nil {
		return outcomeRetry, fmt.Errorf("count failed try of %s: %w", flow.RedeemNo, err)
	}
	if !ok || attempts < c.lookupFailures {
		return outcomeRetry, nil
	}
	couponID, redeemNo := flow.CouponID, flow.RedeemNo
	n, err := models.InsertFindings(db, []models.Finding{{MerchantID: flow.MerchantID, Kind: models.FindingLookupFailing,
		CouponID: &couponID, RedeemNo: &redeemNo, DedupeKey: string(models.FindingLookupFailing) + ":" + redeemNo,
		Details: fmt.Sprintf("%d tries failed; last: %v", attempts, cause), Status: models.FindingOpen, CreatedAt: now}})
	if err != nil {
		return outcomeRetry, fmt.Errorf("open finding for %s: %w", flow.RedeemNo, err)
	}
	res.FindingsOpened += int(n)
	return outcomeRetry, nil
}
