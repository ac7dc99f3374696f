package services

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"

	"coupond/errcode"
	"coupond/models"
)

// Release reasons recorded on RELEASED flows.
const (
	ReleaseFulfilmentFailed = "FULFILMENT_FAILED"
	ReleaseCancelled        = "CANCELLED"
)

// Redemptions runs the coupon state machine: one-shot redemption, the two-phase
// reserve/confirm/cancel protocol and refunds, each idempotent by request id.
//
// A redemption goes through the steps of DESIGN.md §3, each in its own file:
// admit (idempotency.go: validate, authorize, fingerprint), take
// (take.go: the conditional update and the flow, in the coupon's line of
// lines.go), fulfil (the adapter, outside any transaction), settle
// (settle.go: confirm or release) and answer. How a one-shot redemption
// takes its coupon is chosen once, in newRedemptions: one statement, one
// transaction with the order inside it, or a reserve whose order is made
// afterwards.
type Redemptions struct {
	db          *gorm.DB
	now         func() time.Time
	holdTimeout time.Duration
	campaigns   *Campaigns
	adapter     adapter
	limits      *rateLimits
	gate        *gate
	// oneShot takes the coupon of a one-shot redemption; reserve takes the
	// coupon of a two-phase one and leaves it REDEEMING.
	oneShot, reserve taker
	// lines lines up concurrent requests for one coupon (see couponLines);
	// nil runs every request on its own.
	lines *couponLines
	// front answers duplicates and spares the database hot coupons' takes
	// across replicas when there is Redis (redisFront); otherwise it only
	// runs the take in its line (noFront).
	front front
	hooks hooks
	// tracer makes the spans of the entry points (Options.TracerProvider).
	tracer trace.Tracer
	// days tells merchant-local days, for the daily limits.
	days *merchantDays
	// tills hears of every request answered, for the background work that
	// paces itself beside them.
	tills *tills
}

// adapter is the fulfillment adapter and the deadline of one call to it.
type adapter struct {
	Fulfiller
	timeout time.Duration
}

// hooks are what the protocol tells the rest of the process: logs, the
// outcome of each request (metrics), and the crash points of fault tests.
type hooks struct {
	log     *slog.Logger
	observe func(op models.Operation, outcome string, took time.Duration)
	crash   func(point CrashPoint, redeemNo string)
}

// newRedemptions builds the service and chooses, once, how a one-shot
// redemption takes its coupon: with an adapter whose orders are rows of
// coupond's orders table, on PostgreSQL, one statement does everything; with
// any adapter whose orders live in coupond's database, one transaction; with
// an adapter outside the database, a reserve transaction, then the adapter,
// then a settle transaction (on SQLite, the takes of concurrent requests
// share one transaction and one commit). With a Cache (Redis), a front shared by the
// replicas stands before the database (redisFront).
func newRedemptions(db *gorm.DB, o Options, campaigns *Campaigns, t *tills) *Redemptions {
	s := &Redemptions{db: db, tills: t, now: o.Now, holdTimeout: o.HoldTimeout, campaigns: campaigns,
		adapter: adapter{Fulfiller: o.Fulfiller, timeout: o.FulfilTimeout}, limits: newRateLimits(o.Limits, o.Now),
		gate: newGate(db, t), hooks: hooks{log: o.Logger, observe: o.OnRedemption, crash: o.CrashPoint},
		tracer: o.TracerProvider.Tracer("coupond/services"), days: &merchantDays{db: db}}
	// On SQLite, whose one writer runs transactions one at a time anyway,
	// concurrent takes share a transaction and its commit (groupCommit).
	var group *groupCommit
	if models.DialectOfDB(db) == models.SQLite {
		group = newGroupCommit(db, t)
	}
	s.reserve = txTake{s: s, group: group}
	switch f := o.Fulfiller.(type) {
	case orderTable:
		if models.RedeemOnceSupported(db) {
			s.oneShot = statementTake{s: s, pipeline: newPipeline(db, s.gate, t), counting: txTake{s: s, complete: f}}
		} else {
			s.oneShot = txTake{s: s, complete: f, group: group}
		}
	case TxFulfiller:
		s.oneShot = txTake{s: s, complete: f, group: group}
	default:
		s.oneShot = s.reserve
	}
	if !o.NoCouponLines {
		s.lines = newCouponLines(s.rejectTaken)
	}
	s.front = noFront{lines: s.lines}
	if o.Cache != nil {
		s.front = newRedisFront(s, o.Cache, o.HoldTimeout, o.FulfilTimeout)
	}
	return s
}

// RedeemInput is one scan of a coupon at a store.
type RedeemInput struct {
	Code        string
	StoreID     int64
	RequestID   string
	OrderAmount int64
	// CustomerRef, optional (required from APP tokens, whose rate limits
	// count it), is the customer redeeming: a coupon issued to another
	// customer is rejected (CUSTOMER_MISMATCH), and the use counts against
	// the campaign's per-customer limits. A coupon issued to a customer
	// counts for that customer when it is "".
	CustomerRef string
}

// Redeem redeems a coupon in one call: it takes the coupon, has the
// fulfillment adapter make the order outside any transaction, then confirms,
// or releases the coupon on a definite failure. On an unknown outcome
// (timeout) the flow stays PROCESSING and compensation decides; a retry with
// the same request id returns the flow as it stands. A rejection is returned
// as a REJECTED flow, not an error.
func (s *Redemptions) Redeem(ctx context.Context, actor Actor, in RedeemInput) (flow *models.RedemptionFlow, err error) {
	ctx, span := startSpan(ctx, s.tracer, "Redemptions.Redeem", actor)
	defer func() { endFlowSpan(span, flow, err) }()
	defer func(start time.Time) { s.observed(models.OpRedeem, start, flow, err) }(time.Now())
	req, err := s.admit(actor, models.OpRedeem, in)
	if err != nil {
		return nil, err
	}
	dup, answered, done := s.front.claim(ctx, req)
	if answered {
		return dup.flow, dup.err
	}
	defer func() { done(flow, err); asAnswer(flow) }()
	t := s.front.take(ctx, req, s.oneShot)
	switch {
	case t.err != nil || !t.fresh:
		return t.flow, t.err
	case t.flow.Status == models.FlowSucceeded: // taken, ordered and confirmed in one commit
		s.crashAt(CrashAfterConfirmCommit, t.flow.RedeemNo)
		return t.flow, nil
	case t.flow.Status != models.FlowProcessing: // rejected
		return t.flow, nil
	}
	s.crashAt(CrashAfterReserveCommit, t.flow.RedeemNo)
	// The business step and what follows must not depend on the client staying
	// connected: a cancelled request would turn a clean outcome into an unknown one.
	return s.fulfil(context.WithoutCancel(ctx), actor, t.flow)
}

// fulfil asks the adapter for the order of a taken one-shot redemption and
// settles the flow by the answer: an order confirms it, a definite failure
// releases the coupon, and anything else leaves it PROCESSING for
// compensation.
func (s *Redemptions) fulfil(ctx context.Context, actor Actor, flow *models.RedemptionFlow) (*models.RedemptionFlow, error) {
	fctx, cancel := context.WithTimeout(ctx, s.adapter.timeout)
	ref, err := s.adapter.Fulfil(fctx, fulfilRequest(flow))
	cancel()
	switch {
	case err == nil:
		s.crashAt(CrashAfterOrderCreated, flow.RedeemNo)
		return s.confirm(ctx, actor, flow, ref)
	case errors.Is(err, ErrFulfilmentRejected):
		s.hooks.log.WarnContext(ctx, "fulfilment failed, releasing coupon", "redeem_no", flow.RedeemNo, "err", err)
		final, _, err := s.release(ctx, actor, flow, ReleaseFulfilmentFailed, 0)
		return final, err
	default:
		s.hooks.log.WarnContext(ctx, "fulfilment outcome unknown, left to compensation", "redeem_no", flow.RedeemNo, "err", err)
		return flow, nil
	}
}

// confirm settles a redemption whose order exists. When compensation
// released the coupon while the order was being made, the order must not
// stand without its redemption: it is cancelled.
func (s *Redemptions) confirm(ctx context.Context, actor Actor, flow *models.RedemptionFlow, ref string) (*models.RedemptionFlow, error) {
	final, won, err := s.settle(ctx, actor, flow, ref, 0)
	if err != nil {
		return nil, err
	}
	if won {
		s.crashAt(CrashAfterConfirmCommit, flow.RedeemNo)
	} else if final.Status != models.FlowSucceeded {
		if cerr := s.adapter.Cancel(ctx, flow.MerchantID, flow.RedeemNo); cerr != nil {
			s.hooks.log.ErrorContext(ctx, "cancel order of a released redemption", "redeem_no", flow.RedeemNo, "err", cerr)
		}
	}
	return final, nil
}

// Reserve takes a coupon for a client that runs its own order: on success the
// flow is PROCESSING, the coupon REDEEMING until HoldUntil, and the client must
// confirm or cancel the redemption number. A rejection is a REJECTED flow.
func (s *Redemptions) Reserve(ctx context.Context, actor Actor, in RedeemInput) (flow *models.RedemptionFlow, err error) {
	ctx, span := startSpan(ctx, s.tracer, "Redemptions.Reserve", actor)
	defer func() { endFlowSpan(span, flow, err) }()
	defer func(start time.Time) { s.observed(models.OpReserve, start, flow, err) }(time.Now())
	req, err := s.admit(actor, models.OpReserve, in)
	if err != nil {
		return nil, err
	}
	dup, answered, done := s.front.claim(ctx, req)
	if answered {
		return dup.flow, dup.err
	}
	defer func() { done(flow, err); asAnswer(flow) }()
	t := s.front.take(ctx, req, s.reserve)
	return t.flow, t.err
}

// ConfirmInput completes a reserved redemption with the client's order.
type ConfirmInput struct {
	RedeemNo string
	OrderRef string
	// CustomerRef, required from APP tokens, names the customer.
	CustomerRef string
}

// Confirm moves a reserved redemption to SUCCEEDED and its coupon to REDEEMED.
// Confirming again with the same order reference returns the same result; a
// redemption that was cancelled, released by compensation or confirmed with
// another order reference is INVALID_STATE and nothing changes.
func (s *Redemptions) Confirm(ctx context.Context, actor Actor, in ConfirmInput) (*models.RedemptionFlow, error) {
	defer s.tills.served()
	if in.OrderRef == "" {
		return nil, invalidf("orderRef is required")
	}
	if err := checkText("orderRef", in.OrderRef, 128, false); err != nil {
		return nil, err
	}
	flow, err := s.reservedFlow(ctx, actor, in.RedeemNo, in.CustomerRef)
	if err != nil {
		return nil, err
	}
	if flow.Status == models.FlowProcessing {
		var won bool
		flow, won, err = s.settle(ctx, actor, flow, in.OrderRef, 0)
		if err != nil {
			return nil, err
		}
		if won {
			s.crashAt(CrashAfterConfirmCommit, flow.RedeemNo)
		}
	}
	if flow.Status == models.FlowSucceeded && flow.OrderRef != nil && *flow.OrderRef == in.OrderRef {
		return asAnswer(flow), nil
	}
	return nil, fmt.Errorf("confirm %s (%s): %w", in.RedeemNo, flow.Status, ErrInvalidState)
}

// CancelInput gives up a reserved redemption.
type CancelInput struct {
	RedeemNo string
	Reason   string
	// CustomerRef, required from APP tokens, names the customer.
	CustomerRef string
}

// Cancel releases a PROCESSING redemption: the coupon goes back to UNUSED and
// the flow becomes RELEASED. Cancelling a released redemption again returns it
// unchanged; a succeeded one is INVALID_STATE (refund it instead).
func (s *Redemptions) Cancel(ctx context.Context, actor Actor, in CancelInput) (*models.RedemptionFlow, error) {
	if err := checkText("reason", in.Reason, 500, true); err != nil {
		return nil, err
	}
	flow, err := s.reservedFlow(ctx, actor, in.RedeemNo, in.CustomerRef)
	if err != nil {
		return nil, err
	}
	if flow.Status == models.FlowProcessing {
		flow, _, err = s.release(ctx, actor, flow, ReleaseCancelled, 0)
		if err != nil {
			return nil, err
		}
	}
	if flow.Status == models.FlowReleased {
		return asAnswer(flow), nil
	}
	return nil, fmt.Errorf("cancel %s (%s): %w", in.RedeemNo, flow.Status, ErrInvalidState)
}

// asAnswer is flow as a client gets it: without what only this process
// knows of it (CouponAfter), so a first answer and its replays, read back
// from the ledger, are the same.
func asAnswer(flow *models.RedemptionFlow) *models.RedemptionFlow {
	if flow != nil {
		flow.CouponAfter = ""
	}
	return flow
}

// actionableFlow loads a redemption the actor may act on (confirm, cancel,
// refund): the actor has one of roles, and the flow is its merchant's, at a
// store the actor operates, within rate limits (an APP token's charged to
// customerRef, which it must give).
func (s *Redemptions) actionableFlow(ctx context.Context, actor Actor, redeemNo, customerRef string, roles ...models.Role) (*models.RedemptionFlow, error) {
	if err := actor.require(roles...); err != nil {
		return nil, err
	}
	if err := actor.requireCustomer(customerRef); err != nil {
		return nil, err
	}
	flow, err := flowByRedeemNo(s.db.WithContext(ctx), actor.MerchantID, redeemNo)
	if err != nil {
		return nil, err
	}
	if err := actor.requireStore(flow.StoreID); err != nil {
		return nil, err
	}
	if err := s.limits.redeem(actor, flow.StoreID, customerRef); err != nil {
		return nil, err
	}
	return flow, nil
}

// reservedFlow loads a two-phase redemption the actor may act on: an
// administrator, a clerk at its stores, or a mini-program (APP) for a
// customer.
func (s *Redemptions) reservedFlow(ctx context.Context, actor Actor, redeemNo, customerRef string) (*models.RedemptionFlow, error) {
	flow, err := s.actionableFlow(ctx, actor, redeemNo, customerRef, models.RoleAdmin, models.RoleClerk, models.RoleApp)
	if err != nil {
		return nil, err
	}
	if flow.Operation != models.OpReserve {
		return nil, &Error{Code: ErrInvalidState.Code, Kind: ErrConflict,
			Message: "a one-shot redemption is confirmed or released by coupond itself"}
	}
	return flow, nil
}

// observed reports a request's outcome to the OnRedemption hook.
func (s *Redemptions) observed(op models.Operation, start time.Time, flow *models.RedemptionFlow, err error) {
	s.tills.served()
	if s.hooks.observe == nil {
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
	s.hooks.observe(op, outcome, time.Since(start))
}

// Waiting reports whether a redemption request of this process had to wait
// for the database in the last quarter of a second behind more than one
// batch, or for a connection (tills.waited). Background work
// that shares the database gives way to the tills while it does (the
// webhook Deliverer's Yield).
func (s *Redemptions) Waiting() bool { return s.tills.queuedWithin(tillsQueuedFor) }

// RedisStats counts what the Redis front did; all zero without Redis.
func (s *Redemptions) RedisStats() RedisStats { return s.front.stats() }

// crashAt calls the CrashPoint hook, if any.
func (s *Redemptions) crashAt(point CrashPoint, redeemNo string) {
	if s.hooks.crash != nil {
		s.hooks.crash(point, redeemNo)
	}
}
