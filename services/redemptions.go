package services

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"gorm.io/gorm"

	"coupond/errcode"
	"coupond/models"
)

// Reject reasons: why a reserve did not take the coupon. A rejection is a final
// answer for its request id, replayed on every repeat.
const (
	RejectNotAvailable     = "COUPON_NOT_AVAILABLE"
	RejectExpired          = "COUPON_EXPIRED"
	RejectNotYetValid      = "COUPON_NOT_YET_VALID"
	RejectStoreNotEligible = "STORE_NOT_ELIGIBLE"
	RejectMinSpendNotMet   = "MIN_SPEND_NOT_MET"
)

// MaxOrderAmount caps an order amount: ¥100,000,000 in fen, far above any
// store order and far below what could overflow a discount computation.
const MaxOrderAmount = 10_000_000_000

// Release reasons recorded on RELEASED flows.
const (
	ReleaseFulfilmentFailed = "FULFILMENT_FAILED"
	ReleaseCancelled        = "CANCELLED"
)

// Redemptions runs the coupon state machine: one-shot redemption, the two-phase
// reserve/confirm/cancel protocol and refunds, each idempotent by request id.
type Redemptions struct {
	db            *gorm.DB
	now           func() time.Time
	holdTimeout   time.Duration
	fulfilTimeout time.Duration
	fulfiller     Fulfiller
	campaigns     *Campaigns
	log           *slog.Logger
	limits        *rateLimits
	observe       func(op models.Operation, outcome string, took time.Duration)
	// gate admits redemption transactions first come, first served, as many
	// at once as the pool has connections. database/sql hands a freed
	// connection to a random waiter, so under overload without the gate some
	// requests wait far longer than others; with it the queue is fair and
	// forms in front of the database rather than inside it.
	gate chan struct{}
	// crash is Options.CrashPoint.
	crash func(point CrashPoint, redeemNo string)
	// redeemOnce selects models.RedeemOnce for one-shot redemptions: the
	// builtin adapter on PostgreSQL.
	redeemOnce bool
	// lines lines up concurrent requests for one coupon (see couponLines);
	// nil runs every request on its own.
	lines *couponLines
}

// inGate runs fn once the gate admits it, or fails when ctx ends first.
func (s *Redemptions) inGate(ctx context.Context, fn func() error) error {
	if s.gate == nil {
		return fn()
	}
	select {
	case s.gate <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.gate }()
	return fn()
}

// observed reports a request's outcome to the OnRedemption hook.
func (s *Redemptions) observed(op models.Operation, start time.Time, flow *models.RedemptionFlow, err error) {
	if s.observe == nil {
		return
	}
	outcome := errcode.Internal
	var se *Error
	switch {
	case err == nil && flow != nil:
		outcome = string(flow.Status)
	case errors.As(err, &se):
		outcome = se.Code
	}
	s.observe(op, outcome, time.Since(start))
}

// RedeemInput is one scan of a coupon at a store.
type RedeemInput struct {
	Code        string
	StoreID     int64
	RequestID   string
	OrderAmount int64
}

// Redeem redeems a coupon in one call: it reserves the coupon, asks the
// fulfillment adapter for the order outside any transaction, then confirms, or
// releases the coupon on a definite failure. On an unknown outcome (timeout) the
// flow stays PROCESSING and compensation decides; a retry with the same request id
// returns the flow as it stands. A rejection is returned as a REJECTED flow, not
// an error.
func (s *Redemptions) Redeem(ctx context.Context, actor Actor, in RedeemInput) (flow *models.RedemptionFlow, err error) {
	defer func(start time.Time) { s.observed(models.OpRedeem, start, flow, err) }(time.Now())
	settle, _ := s.fulfiller.(TxFulfiller)
	flow, fresh, err := s.open(ctx, actor, models.OpRedeem, in, settle)
	if err == nil && fresh && flow.Status == models.FlowSucceeded {
		s.crashAt(CrashAfterConfirmCommit, flow.RedeemNo) // reserve, order and confirm in one commit
	}
	if err != nil || !fresh || flow.Status != models.FlowProcessing {
		return flow, err
	}
	s.crashAt(CrashAfterReserveCommit, flow.RedeemNo)
	// The business step and what follows must not depend on the client staying
	// connected: a cancelled request would turn a clean outcome into an unknown one.
	dctx := context.WithoutCancel(ctx)
	fctx, cancel := context.WithTimeout(dctx, s.fulfilTimeout)
	ref, ferr := s.fulfiller.Fulfil(fctx, FulfilRequest{MerchantID: flow.MerchantID, RedeemNo: flow.RedeemNo,
		CouponID: flow.CouponID, StoreID: flow.StoreID, OrderAmount: flow.OrderAmount, DiscountAmount: flow.DiscountAmount})
	cancel()
	switch {
	case ferr == nil:
		s.crashAt(CrashAfterOrderCreated, flow.RedeemNo)
		final, won, err := s.settle(dctx, actor, flow, ref)
		if err == nil && won {
			s.crashAt(CrashAfterConfirmCommit, flow.RedeemNo)
		}
		if err == nil && !won && final.Status != models.FlowSucceeded {
			// Compensation released the coupon while the order was being made:
			// the order must not stand without its redemption.
			if cerr := s.fulfiller.Cancel(dctx, flow.MerchantID, flow.RedeemNo); cerr != nil {
				s.log.ErrorContext(ctx, "cancel order of a released redemption", "redeem_no", flow.RedeemNo, "err", cerr)
			}
		}
		return final, err
	case errors.Is(ferr, ErrFulfilmentRejected):
		s.log.WarnContext(ctx, "fulfilment failed, releasing coupon", "redeem_no", flow.RedeemNo, "err", ferr)
		final, _, err := s.release(dctx, actor, flow, ReleaseFulfilmentFailed)
		return final, err
	default:
		s.log.WarnContext(ctx, "fulfilment outcome unknown, left to compensation", "redeem_no", flow.RedeemNo, "err", ferr)
		return flow, nil
	}
}

// Reserve takes a coupon for a client that runs its own order: on success the
// flow is PROCESSING, the coupon REDEEMING until HoldUntil, and the client must
// confirm or cancel the redemption number. A rejection is a REJECTED flow.
func (s *Redemptions) Reserve(ctx context.Context, actor Actor, in RedeemInput) (flow *models.RedemptionFlow, err error) {
	defer func(start time.Time) { s.observed(models.OpReserve, start, flow, err) }(time.Now())
	flow, _, err = s.open(ctx, actor, models.OpReserve, in, nil)
	return flow, err
}

// ConfirmInput completes a reserved redemption with the client's order.
type ConfirmInput struct {
	RedeemNo string
	OrderRef string
}

// Confirm moves a reserved redemption to SUCCEEDED and its coupon to REDEEMED.
// Confirming again with the same order reference returns the same result; a
// redemption that was cancelled, released by compensation or confirmed with
// another order reference is INVALID_STATE and nothing changes.
func (s *Redemptions) Confirm(ctx context.Context, actor Actor, in ConfirmInput) (*models.RedemptionFlow, error) {
	if in.OrderRef == "" {
		return nil, invalidf("orderRef is required")
	}
	if err := checkText("orderRef", in.OrderRef, 128, false); err != nil {
		return nil, err
	}
	flow, err := s.reservedFlow(ctx, actor, in.RedeemNo)
	if err != nil {
		return nil, err
	}
	if flow.Status == models.FlowProcessing {
		var won bool
		flow, won, err = s.settle(ctx, actor, flow, in.OrderRef)
		if err != nil {
			return nil, err
		}
		if won {
			s.crashAt(CrashAfterConfirmCommit, flow.RedeemNo)
		}
	}
	if flow.Status == models.FlowSucceeded && flow.OrderRef != nil && *flow.OrderRef == in.OrderRef {
		return flow, nil
	}
	return nil, fmt.Errorf("confirm %s (%s): %w", in.RedeemNo, flow.Status, ErrInvalidState)
}

// CancelInput gives up a reserved redemption.
type CancelInput struct {
	RedeemNo string
	Reason   string
}

// Cancel releases a PROCESSING redemption: the coupon goes back to UNUSED and
// the flow becomes RELEASED. Cancelling a released redemption again returns it
// unchanged; a succeeded one is INVALID_STATE (refund it instead).
func (s *Redemptions) Cancel(ctx context.Context, actor Actor, in CancelInput) (*models.RedemptionFlow, error) {
	if err := checkText("reason", in.Reason, 500, true); err != nil {
		return nil, err
	}
	flow, err := s.reservedFlow(ctx, actor, in.RedeemNo)
	if err != nil {
		return nil, err
	}
	if flow.Status == models.FlowProcessing {
		flow, _, err = s.release(ctx, actor, flow, ReleaseCancelled)
		if err != nil {
			return nil, err
		}
	}
	if flow.Status == models.FlowReleased {
		return flow, nil
	}
	return nil, fmt.Errorf("cancel %s (%s): %w", in.RedeemNo, flow.Status, ErrInvalidState)
}

// actionableFlow loads a redemption the actor may act on (confirm, cancel,
// refund): its merchant's, at a store the actor operates, within rate limits.
func (s *Redemptions) actionableFlow(ctx context.Context, actor Actor, redeemNo string) (*models.RedemptionFlow, error) {
	if err := actor.require(models.RoleAdmin, models.RoleClerk); err != nil {
		return nil, err
	}
	flow, err := s.byRedeemNo(s.db.WithContext(ctx), actor.MerchantID, redeemNo)
	if err != nil {
		return nil, err
	}
	if err := actor.requireStore(flow.StoreID); err != nil {
		return nil, err
	}
	if err := s.limits.redeem(actor, flow.StoreID); err != nil {
		return nil, err
	}
	return flow, nil
}

// reservedFlow loads a two-phase redemption the actor may act on.
func (s *Redemptions) reservedFlow(ctx context.Context, actor Actor, redeemNo string) (*models.RedemptionFlow, error) {
	flow, err := s.actionableFlow(ctx, actor, redeemNo)
	if err != nil {
		return nil, err
	}
	if flow.Operation != models.OpReserve {
		return nil, &Error{Code: ErrInvalidState.Code, Kind: ErrConflict,
			Message: "a one-shot redemption is confirmed or released by coupond itself"}
	}
	return flow, nil
}

// open validates and authorizes a reserve request, replays a known request id,
// and otherwise runs the reserve transaction: the conditional update of the
// coupon and the insert of the flow (PROCESSING, or REJECTED with its reason)
// commit together. With settle, an adapter whose orders live in the same
// database, the order and the confirmation commit in that same transaction.
// fresh is false when the flow is a replay. Requests for a coupon another
// request of this process is working on wait in its line (see couponLines).
func (s *Redemptions) open(ctx context.Context, actor Actor, op models.Operation, in RedeemInput, settle TxFulfiller) (flow *models.RedemptionFlow, fresh bool, err error) {
	code, err := NormalizeCouponCode(in.Code)
	if err != nil {
		return nil, false, err
	}
	if err := validateRequestID(in.RequestID); err != nil {
		return nil, false, err
	}
	if in.OrderAmount < 0 || in.OrderAmount > MaxOrderAmount {
		return nil, false, invalidf("orderAmount must be between 0 and %d fen", int64(MaxOrderAmount))
	}
	if err := actor.requireStore(in.StoreID); err != nil {
		return nil, false, err
	}
	if err := s.limits.redeem(actor, in.StoreID); err != nil {
		return nil, false, err
	}
	fp := fingerprint(string(op), code, strconv.FormatInt(in.StoreID, 10), strconv.FormatInt(in.OrderAmount, 10))
	t := lineTurn{run: true}
	if s.lines != nil {
		t = s.lines.join(lineKey{merchantID: actor.MerchantID, code: code},
			&lineRequest{ctx: ctx, actor: actor, op: op, in: in, fp: fp})
	}
	switch {
	case t.batch != nil:
		defer s.lines.pass(t.line, lineNews{})
		a := s.rejectTaken(t.batch, t.taken)
		return a.flow, a.fresh, a.err
	case !t.run:
		return t.flow, t.fresh, t.err
	}
	var news lineNews
	if t.line != nil {
		defer func() { s.lines.pass(t.line, news) }()
	}
	flow, fresh, news, err = s.attempt(ctx, actor, op, in, code, fp, settle)
	return flow, fresh, err
}

// attempt runs one validated reserve request against the database (see
// open). news is what it learned for the requests lined up behind it.
func (s *Redemptions) attempt(ctx context.Context, actor Actor, op models.Operation, in RedeemInput, code, fp string, settle TxFulfiller) (flow *models.RedemptionFlow, fresh bool, news lineNews, err error) {
	db := s.db.WithContext(ctx)
	now := s.now()
	flow = &models.RedemptionFlow{MerchantID: actor.MerchantID, RedeemNo: newFlowNo("RD", now), Operation: op,
		RequestID: in.RequestID, Fingerprint: fp, StoreID: in.StoreID, OperatorID: actor.operatorID(),
		OrderAmount: in.OrderAmount, CreatedAt: now, UpdatedAt: now}
	// seen is the coupon as this request's statements found it.
	var seen models.Coupon
	// Everything runs on one connection, taken once: under load a request that
	// went back to the pool between its steps would queue again behind
	// newcomers, and the tail would grow with the queue.
	//
	// A repeated request id is not looked up first: the flow's unique index
	// refuses the repeat's insert, its transaction rolls back with whatever it
	// touched, and the first request's flow is the answer. A fresh request,
	// the common case, saves a round trip inside its transaction.
	if settle != nil && s.redeemOnce {
		err = s.inGate(ctx, func() error { return s.redeemOnceOrReject(db, actor, flow, code, in, now, &seen) })
	} else {
		err = s.inGate(ctx, func() error {
			return db.Transaction(func(tx *gorm.DB) error {
				if actor.Role != models.RoleClerk { // a clerk's stores were checked when its token was made
					if err := (&Stores{db: s.db}).mustExist(tx, actor.MerchantID, in.StoreID); err != nil {
						return err
					}
				}
				got, ok, err := models.ReserveCoupon(tx, models.ReserveArgs{MerchantID: actor.MerchantID, Code: code,
					RedeemNo: flow.RedeemNo, StoreID: in.StoreID, OrderAmount: in.OrderAmount, Now: now})
				if err != nil {
					return err
				}
				if !ok {
					return s.reject(tx, flow, code, now, &seen)
				}
				campaign, err := s.campaigns.cached(tx, got.CampaignID)
				if err != nil {
					return err
				}
				hold := now.Add(s.holdTimeout)
				flow.CouponID, flow.Status, flow.HoldUntil = got.ID, models.FlowProcessing, &hold
				flow.DiscountAmount = discountFor(campaign, in.OrderAmount)
				if settle != nil {
					seen = models.Coupon{ID: got.ID, Status: models.CouponRedeemed}
					return s.settleInTx(tx, settle, flow, got.Version, actor, now)
				}
				seen = models.Coupon{ID: got.ID, Status: models.CouponRedeeming}
				return models.InsertFlow(tx, flow, transition(flow, models.CouponUnused, models.CouponRedeeming, got.Version, actor, now))
			})
		})
	}
	switch {
	case errors.Is(err, ErrCouponNotFound), errors.Is(err, gorm.ErrDuplicatedKey), errors.Is(err, errKnownRequest):
		// A repeat of a known request id, or a concurrent copy of a new one
		// that committed first: answer with the first request's flow. An
		// unknown code under a fresh request id is COUPON_NOT_FOUND.
		prior, ferr := s.byRequest(db, actor.MerchantID, op, in.RequestID)
		switch {
		case ferr != nil:
			return nil, false, news, ferr
		case prior != nil:
			flow, fresh, err = replay(prior, fp, nil)
			if err != nil {
				// Another request's flow, maybe of another coupon: nothing
				// learned for this line.
				return nil, false, news, err
			}
			return flow, fresh, newsOf(flow, models.Coupon{}), nil
		case errors.Is(err, ErrCouponNotFound):
			s.limits.failedLookup(actor)
			return nil, false, news, ErrCouponNotFound
		}
		return nil, false, news, fmt.Errorf("reserve coupon: %w", err)
	case err != nil:
		return nil, false, news, fmt.Errorf("reserve coupon: %w", err)
	}
	return flow, true, newsOf(flow, seen), nil
}

// redeemOnceOrReject is the one-shot redemption with the builtin adapter on
// PostgreSQL: one statement reserves, orders and confirms (models.RedeemOnce),
// and when its conditional update does not take the coupon, the rejection is
// recorded with a read and an insert. Neither needs an explicit transaction:
// each write is one statement.
func (s *Redemptions) redeemOnceOrReject(db *gorm.DB, actor Actor, flow *models.RedemptionFlow, code string, in RedeemInput, now time.Time, seen *models.Coupon) error {
	if actor.Role != models.RoleClerk { // a clerk's stores were checked when its token was made
		if err := (&Stores{db: s.db}).mustExist(db, actor.MerchantID, in.StoreID); err != nil {
			return err
		}
	}
	hold := now.Add(s.holdTimeout)
	flow.HoldUntil = &hold
	ok, err := models.RedeemOnce(db, models.ReserveArgs{MerchantID: actor.MerchantID, Code: code,
		RedeemNo: flow.RedeemNo, StoreID: in.StoreID, OrderAmount: in.OrderAmount, Now: now}, flow, actor.Label())
	if err != nil {
		return err
	}
	if ok {
		*seen = models.Coupon{ID: flow.CouponID, Status: models.CouponRedeemed}
		return nil
	}
	flow.HoldUntil = nil
	// One read answers both questions left: is this a repeat of a known
	// request id (then the stored flow is the answer, and nothing is
	// written), and if not, why was the coupon not taken.
	var row struct {
		models.Coupon
		Prior *int64
	}
	res := db.Raw(`SELECT c.*, (SELECT f.id FROM redemption_flows f
  WHERE f.merchant_id = c.merchant_id AND f.operation = ? AND f.request_id = ?) AS prior
FROM coupons c WHERE c.merchant_id = ? AND c.code = ?`, string(flow.Operation), flow.RequestID, flow.MerchantID, code).Scan(&row)
	switch {
	case res.Error != nil:
		return res.Error
	case res.RowsAffected == 0:
		return ErrCouponNotFound
	case row.Prior != nil:
		return errKnownRequest
	}
	*seen = row.Coupon
	return s.rejectCoupon(db, flow, &row.Coupon, now)
}

// errKnownRequest says a request id already has a flow: the caller answers
// with it.
var errKnownRequest = errors.New("request id already known")

// reject records, inside the reserve transaction, a REJECTED flow for a
// coupon the conditional update did not take, with the reason; an unknown code
// is ErrCouponNotFound and writes nothing.
func (s *Redemptions) reject(tx *gorm.DB, flow *models.RedemptionFlow, code string, now time.Time, seen *models.Coupon) error {
	var c models.Coupon
	err := tx.Where("merchant_id = ? AND code = ?", flow.MerchantID, code).Take(&c).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return ErrCouponNotFound
	}
	if err != nil {
		return err
	}
	*seen = c
	return s.rejectCoupon(tx, flow, &c, now)
}

// rejectCoupon records a REJECTED flow for coupon c with the first rule that
// keeps it from being reserved.
func (s *Redemptions) rejectCoupon(tx *gorm.DB, flow *models.RedemptionFlow, c *models.Coupon, now time.Time) error {
	campaign, err := s.campaigns.cached(tx, c.CampaignID)
	if err != nil {
		return err
	}
	reason, err := diagnose(tx, campaign, c, flow.StoreID, flow.OrderAmount, now)
	if err != nil {
		return err
	}
	if reason == "" {
		// Every rule holds now, yet the update did not match: the coupon changed
		// between the two statements, which for this request means it was taken.
		reason = RejectNotAvailable
	}
	flow.CouponID, flow.Status, flow.RejectReason, flow.FinishedAt = c.ID, models.FlowRejected, &reason, &now
	return models.InsertFlow(tx, flow)
}

// settleInTx completes a one-shot redemption whose business step commits in
// the reserve transaction itself (the builtin adapter): the order is created,
// the coupon moves on to REDEEMED and the flow is written SUCCEEDED, all in one
// commit. Both transitions are recorded, so the history is the same as on the
// two-transaction path.
func (s *Redemptions) settleInTx(tx *gorm.DB, settle TxFulfiller, flow *models.RedemptionFlow, reservedVersion int64, actor Actor, now time.Time) error {
	ref, err := settle.FulfilTx(tx, FulfilRequest{MerchantID: flow.MerchantID, RedeemNo: flow.RedeemNo, CouponID: flow.CouponID,
		StoreID: flow.StoreID, OrderAmount: flow.OrderAmount, DiscountAmount: flow.DiscountAmount}, now)
	if err != nil {
		return err
	}
	version, ok, err := models.MoveCoupon(tx, flow.CouponID, flow.RedeemNo, models.CouponRedeeming, models.CouponRedeemed, now)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("coupon %d is not held by %s inside its own transaction", flow.CouponID, flow.RedeemNo)
	}
	flow.Status, flow.OrderRef, flow.FinishedAt, flow.Version = models.FlowSucceeded, &ref, &now, 1
	return models.InsertFlow(tx, flow,
		transition(flow, models.CouponUnused, models.CouponRedeeming, reservedVersion, actor, now),
		transition(flow, models.CouponRedeeming, models.CouponRedeemed, version, actor, now))
}

// replay answers a repeated request id with the first request's flow, or with
// IDEMPOTENCY_KEY_REUSED when the parameters differ.
func replay(prior *models.RedemptionFlow, fp string, err error) (*models.RedemptionFlow, bool, error) {
	if err != nil {
		return nil, false, err
	}
	if prior.Fingerprint != fp {
		return nil, false, ErrIdempotencyKeyReused
	}
	return prior, false, nil
}

// diagnose names the first rule that keeps coupon c from being reserved at
// storeID for orderAmount, or "" when none does. After a failed reserve it
// explains the conditional update, which already decided; for a quote it is the
// answer.
func diagnose(tx *gorm.DB, campaign *models.Campaign, c *models.Coupon, storeID, orderAmount int64, now time.Time) (string, error) {
	switch {
	case c.Status == models.CouponExpired:
		return RejectExpired, nil
	case c.Status != models.CouponUnused:
		return RejectNotAvailable, nil
	case now.Before(c.ValidFrom):
		return RejectNotYetValid, nil
	case !now.Before(c.ValidTo):
		return RejectExpired, nil
	case orderAmount < campaign.MinSpend:
		return RejectMinSpendNotMet, nil
	}
	if !campaign.AllStores {
		var n int64
		if err := tx.Model(&models.CampaignStore{}).Where("campaign_id = ? AND store_id = ?", campaign.ID, storeID).Count(&n).Error; err != nil {
			return "", err
		}
		if n == 0 {
			return RejectStoreNotEligible, nil
		}
	}
	return "", nil
}

// QuoteInput asks what a coupon would do for an order at a store.
type QuoteInput struct {
	Code        string
	StoreID     int64
	OrderAmount int64
}

// Quote is what a redemption would give now: the coupon, the reason it would
// be rejected ("" when it would not), and the discount.
type Quote struct {
	Coupon         *models.Coupon
	RejectReason   string
	DiscountAmount int64
	// PayAmount is what the customer would pay: the order less the discount.
	PayAmount int64
}

// Eligible reports whether a redemption now would take the coupon.
func (q *Quote) Eligible() bool { return q.RejectReason == "" }

// Quote answers, without writing anything, whether a coupon could be redeemed
// at a store for an order and what it would take off, by the same rules as the
// reserve. It is a preview for people; only a redemption takes the coupon.
// Unknown codes count against the failed-lookup limit like redemptions do.
func (s *Redemptions) Quote(ctx context.Context, actor Actor, in QuoteInput) (*Quote, error) {
	code, err := NormalizeCouponCode(in.Code)
	if err != nil {
		return nil, err
	}
	if in.OrderAmount < 0 || in.OrderAmount > MaxOrderAmount {
		return nil, invalidf("orderAmount must be between 0 and %d fen", int64(MaxOrderAmount))
	}
	if err := actor.requireStore(in.StoreID); err != nil {
		return nil, err
	}
	if err := s.limits.failedLookups.allowed(actor.TokenID); err != nil && actor.TokenID != 0 {
		return nil, err
	}
	db := s.db.WithContext(ctx)
	var c models.Coupon
	err = db.Where("merchant_id = ? AND code = ?", actor.MerchantID, code).Take(&c).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		s.limits.failedLookup(actor)
		return nil, ErrCouponNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find coupon: %w", err)
	}
	campaign, err := s.campaigns.cached(db, c.CampaignID)
	if err != nil {
		return nil, err
	}
	reason, err := diagnose(db, campaign, &c, in.StoreID, in.OrderAmount, s.now())
	if err != nil {
		return nil, fmt.Errorf("quote coupon %d: %w", c.ID, err)
	}
	q := &Quote{Coupon: &c, RejectReason: reason, PayAmount: in.OrderAmount}
	if reason == "" {
		q.DiscountAmount = discountFor(campaign, in.OrderAmount)
		q.PayAmount -= q.DiscountAmount
	}
	return q, nil
}

// discountFor is what the coupon takes off an order of orderAmount fen.
func discountFor(c *models.Campaign, orderAmount int64) int64 {
	switch c.Type {
	case models.CampaignCash:
		return min(c.Value, orderAmount)
	case models.CampaignDiscount:
		d := orderAmount * c.Value / 100
		if c.MaxDiscount > 0 {
			d = min(d, c.MaxDiscount)
		}
		return d
	default:
		return c.Value
	}
}

// settle confirms a PROCESSING flow with its order: flow SUCCEEDED and coupon
// REDEEMED in one transaction. won is false when someone else (compensation or a
// concurrent confirm or cancel) finished the flow first; the flow returned is
// then the stored final one.
func (s *Redemptions) settle(ctx context.Context, actor Actor, flow *models.RedemptionFlow, orderRef string) (*models.RedemptionFlow, bool, error) {
	return s.finish(ctx, actor, flow, models.FlowOutcome{Status: models.FlowSucceeded, OrderRef: &orderRef},
		models.CouponRedeemed)
}

// release gives the coupon of a PROCESSING flow back: flow RELEASED and coupon
// UNUSED in one transaction, with the same race rules as settle.
func (s *Redemptions) release(ctx context.Context, actor Actor, flow *models.RedemptionFlow, reason string) (*models.RedemptionFlow, bool, error) {
	return s.finish(ctx, actor, flow, models.FlowOutcome{Status: models.FlowReleased, ReleaseReason: &reason},
		models.CouponUnused)
}

var errLostRace = errors.New("flow already finished")

func (s *Redemptions) finish(ctx context.Context, actor Actor, flow *models.RedemptionFlow, out models.FlowOutcome, to models.CouponStatus) (*models.RedemptionFlow, bool, error) {
	out.Now = s.now()
	db := s.db.WithContext(ctx)
	err := s.inGate(ctx, func() error {
		return db.Transaction(func(tx *gorm.DB) error {
			ok, err := models.FinishFlow(tx, flow.ID, out)
			if err != nil {
				return err
			}
			if !ok {
				return errLostRace
			}
			version, ok, err := models.MoveCoupon(tx, flow.CouponID, flow.RedeemNo, models.CouponRedeeming, to, out.Now)
			if err != nil {
				return err
			}
			if !ok {
				// The flow was PROCESSING, so its coupon must be REDEEMING and held
				// by it; anything else is a broken invariant, never papered over.
				return fmt.Errorf("coupon %d is not held by processing flow %s", flow.CouponID, flow.RedeemNo)
			}
			return recordTransition(tx, flow, models.CouponRedeeming, to, version, actor, out.Now)
		})
	})
	if errors.Is(err, errLostRace) {
		final, err := s.byRedeemNo(db, flow.MerchantID, flow.RedeemNo)
		return final, false, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("finish redemption %s as %s: %w", flow.RedeemNo, out.Status, err)
	}
	final := *flow
	final.Status, final.FinishedAt, final.UpdatedAt, final.Version = out.Status, &out.Now, out.Now, flow.Version+1
	if out.OrderRef != nil {
		final.OrderRef = out.OrderRef
	}
	final.ReleaseReason = out.ReleaseReason
	return &final, true, nil
}

func recordTransition(tx *gorm.DB, flow *models.RedemptionFlow, from, to models.CouponStatus, version int64, actor Actor, now time.Time) error {
	t := transition(flow, from, to, version, actor, now)
	return tx.Create(&t).Error
}

// transition is the history row of flow's coupon taking the edge from -> to.
func transition(flow *models.RedemptionFlow, from, to models.CouponStatus, version int64, actor Actor, now time.Time) models.CouponTransition {
	storeID := flow.StoreID
	return models.CouponTransition{MerchantID: flow.MerchantID, CouponID: flow.CouponID, FromStatus: from,
		ToStatus: to, VersionAfter: version, FlowNo: flow.RedeemNo, Actor: actor.Label(), StoreID: &storeID, CreatedAt: now}
}

func (s *Redemptions) byRequest(db *gorm.DB, merchantID int64, op models.Operation, requestID string) (*models.RedemptionFlow, error) {
	var flows []models.RedemptionFlow
	err := db.Where("merchant_id = ? AND operation = ? AND request_id = ?", merchantID, op, requestID).Limit(1).Find(&flows).Error
	if err != nil {
		return nil, fmt.Errorf("find request %s: %w", requestID, err)
	}
	if len(flows) == 0 {
		return nil, nil
	}
	return &flows[0], nil
}

func (s *Redemptions) byRedeemNo(db *gorm.DB, merchantID int64, redeemNo string) (*models.RedemptionFlow, error) {
	if redeemNo == "" || len(redeemNo) > 64 {
		return nil, invalidf("redeemNo is required")
	}
	var flow models.RedemptionFlow
	err := db.Where("merchant_id = ? AND redeem_no = ?", merchantID, redeemNo).Take(&flow).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, notFoundf("redemption %s not found", redeemNo)
	}
	if err != nil {
		return nil, fmt.Errorf("find redemption %s: %w", redeemNo, err)
	}
	return &flow, nil
}
