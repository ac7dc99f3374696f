package services

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// Several codes on one order (redeemCoupons, quoteCoupons,
// refundRedemptions): Douyin's same-order verify. The codes of one order are
// taken all or none:
//
//   - One transaction takes every code (the reserve's conditional update,
//     judged by rows affected; see takeCodes for the order of the locks), after
//     inserting the order's row (models.RedemptionOrder), whose unique
//     (merchant_id, request_id) is the request's idempotency anchor: a
//     concurrent copy of the request waits on that index and, once the first
//     commits, is refused by it and gets the first answer; a repeat while the
//     first is in flight gets the order as it stands (PROCESSING), never a
//     second execution. Each code gets its own flow (own redemption number,
//     own use of its coupon, request id "<requestId>#<n>", which no client
//     request id can be, since '#' is not allowed in one) naming the order.
//   - When any code cannot be taken, the transaction rolls back, so nothing
//     is taken, and a second one records the order REJECTED with every
//     code's reasons (orderVerdicts: the eligibility rules of diagnoseAll,
//     NOT_STACKABLE, and what the take itself found), the final answer for
//     the request id.
//   - The business order is one for the whole set: the fulfillment adapter is
//     asked once, keyed by OrderNo, the redemption number of the order's first
//     flow, so reconciliation's orders-vs-flows checks hold for it, and the
//     other flows find their order through the order row. With an adapter
//     whose orders live in coupond's database the order and every
//     confirmation commit in the taking transaction. Otherwise the order row's
//     one conditional update decides the outcome of every flow (settleOrder):
//     an order settles all flows, a definite failure releases
//     all, an unknown outcome leaves them to compensation, which resolves the
//     whole order the same way by looking up OrderNo (Compensator.resolveOrder).

// MaxCodesPerOrder caps the codes of one redeemCoupons or quoteCoupons
// request and the redemptions of one refundRedemptions request.
const MaxCodesPerOrder = 10

// RedeemCodesInput is one order paid with several coupons.
type RedeemCodesInput struct {
	// Codes are 1 to MaxCodesPerOrder codes, each once; their discounts apply
	// in this order.
	Codes       []string
	StoreID     int64
	RequestID   string
	OrderAmount int64
	// CustomerRef, optional (required from APP tokens), as in RedeemInput.
	CustomerRef string
}

// CodeVerdict is what stands in the way of one code of an order.
type CodeVerdict struct {
	// Code is the code, normalised.
	Code string `json:"code"`
	// Reasons are every rule the code fails, the first the one a redemption
	// of it alone would record; empty when the code itself is fine.
	Reasons []string `json:"reasons"`
}

// OrderRedemption is the answer to RedeemCodes.
type OrderRedemption struct {
	Order *models.RedemptionOrder
	// Flows are the order's redemptions in the order of its codes; none
	// when it was REJECTED.
	Flows []*models.RedemptionFlow
	// Verdicts are the codes' reasons, one per code in the order given; set
	// when the order was REJECTED.
	Verdicts []CodeVerdict
}

// PayAmount is what the customer pays: the order less the discounts taken.
func (o *OrderRedemption) PayAmount() int64 { return o.Order.OrderAmount - o.Order.DiscountAmount }

// orderRequest is a RedeemCodes request, validated and authorized.
type orderRequest struct {
	actor Actor
	in    RedeemCodesInput
	keys  []codeKey
	codes []string
	fp    string
}

// checkCodes validates and normalises the codes of one order: 1 to
// MaxCodesPerOrder, none twice.
func checkCodes(raw []string) ([]codeKey, []string, error) {
	if len(raw) == 0 || len(raw) > MaxCodesPerOrder {
		return nil, nil, invalidf("codes must hold 1 to %d codes, not %d", MaxCodesPerOrder, len(raw))
	}
	keys := make([]codeKey, len(raw))
	codes := make([]string, len(raw))
	for i, c := range raw {
		k, err := lookupCode(c)
		if err != nil {
			return nil, nil, invalidf("codes[%d]: %v", i, err)
		}
		if slices.Contains(codes[:i], k.code) {
			return nil, nil, invalidf("codes: %s is given twice", k.code)
		}
		keys[i], codes[i] = k, k.code
	}
	return keys, codes, nil
}

// admitOrder validates and authorizes a multi-code request and counts it,
// once, against the rate limits; nothing is read or written.
func (s *Redemptions) admitOrder(actor Actor, in RedeemCodesInput) (*orderRequest, error) {
	keys, codes, err := checkCodes(in.Codes)
	if err != nil {
		return nil, err
	}
	if err := validateRequestID(in.RequestID); err != nil {
		return nil, err
	}
	if err := s.admitCaller(actor, in.StoreID, in.OrderAmount, in.CustomerRef); err != nil {
		return nil, err
	}
	params := append([]string{"REDEEM_CODES", strconv.FormatInt(in.StoreID, 10), strconv.FormatInt(in.OrderAmount, 10),
		"customer=" + in.CustomerRef}, codes...)
	return &orderRequest{actor: actor, in: in, keys: keys, codes: codes, fp: fingerprint(params...)}, nil
}

// orderRejected rolls back the taking transaction of an order whose code at
// index could not be taken: reason is what the take found ("" when the
// conditional update did not match, which the rules then explain).
type orderRejected struct {
	index  int
	reason string
}

func (e *orderRejected) Error() string {
	return fmt.Sprintf("code %d not taken: %s", e.index, e.reason)
}

// RedeemCodes redeems several coupons for one order, all or none: every code
// is taken with one order and one request id, or none is and every code's
// reasons are returned (a REJECTED order, not an error). The discounts apply
// in the order of the codes, each on what the ones before left, never below
// zero; at most one coupon of a non-stackable campaign goes on an order
// (NOT_STACKABLE). A repeat of the request id with the same parameters
// returns the first answer (the order as it stands), with others
// IDEMPOTENCY_KEY_REUSED. An unknown code is COUPON_NOT_FOUND and writes
// nothing.
func (s *Redemptions) RedeemCodes(ctx context.Context, actor Actor, in RedeemCodesInput) (*OrderRedemption, error) {
	defer s.tills.served()
	ctx, span := startSpan(ctx, s.tracer, "Redemptions.RedeemCodes", actor)
	defer span.End()
	req, err := s.admitOrder(actor, in)
	if err != nil {
		return nil, err
	}
	out, fresh, err := s.takeOrder(ctx, req)
	if err != nil || !fresh || out.Order.Status != models.FlowProcessing {
		if err == nil && fresh && out.Order.Status == models.FlowSucceeded {
			s.crashAt(CrashAfterConfirmCommit, out.Order.OrderNo)
		}
		return out, err
	}
	s.crashAt(CrashAfterReserveCommit, out.Order.OrderNo)
	// As for one code: the business step must not depend on the client
	// staying connected.
	return s.fulfilOrder(context.WithoutCancel(ctx), actor, out)
}

// takeOrder runs the taking transaction of req and, when a code could not be
// taken, records the rejection. fresh is false for a replay.
func (s *Redemptions) takeOrder(ctx context.Context, req *orderRequest) (*OrderRedemption, bool, error) {
	db := s.db.WithContext(ctx)
	now := s.now()
	local, err := s.days.local(ctx, req.actor.MerchantID, now)
	if err != nil {
		return nil, false, fmt.Errorf("redeem codes: %w", err)
	}
	codesJSON, _ := json.Marshal(req.codes)
	order := &models.RedemptionOrder{MerchantID: req.actor.MerchantID, RequestID: req.in.RequestID, Fingerprint: req.fp,
		StoreID: req.in.StoreID, OperatorID: req.actor.operatorID(), Status: models.FlowProcessing, Codes: string(codesJSON),
		CodeCount: int64(len(req.codes)), OrderAmount: req.in.OrderAmount, CreatedAt: now, UpdatedAt: now}
	if req.in.CustomerRef != "" {
		order.CustomerRef = &req.in.CustomerRef
	}
	flows := make([]*models.RedemptionFlow, len(req.codes))
	for i := range flows {
		flows[i] = &models.RedemptionFlow{MerchantID: req.actor.MerchantID, RedeemNo: newFlowNo("RD", now),
			Operation: models.OpRedeem, RequestID: req.in.RequestID + "#" + strconv.Itoa(i+1), Fingerprint: req.fp,
			StoreID: req.in.StoreID, OperatorID: req.actor.operatorID(), OrderAmount: req.in.OrderAmount,
			CreatedAt: now, UpdatedAt: now}
	}
	order.OrderNo = flows[0].RedeemNo
	complete, _ := s.adapter.Fulfiller.(TxFulfiller)
	err = s.gate.run(ctx, func() error {
		return db.Transaction(func(tx *gorm.DB) error {
			if err := checkStore(tx, &request{actor: req.actor, in: RedeemInput{StoreID: req.in.StoreID}}); err != nil {
				return err
			}
			if err := models.InsertRedemptionOrder(tx, order); err != nil {
				return err
			}
			return s.takeCodes(tx, req, order, flows, complete, local, now)
		})
	})
	var rejected *orderRejected
	switch {
	case err == nil:
		for _, f := range flows {
			asAnswer(f)
		}
		return &OrderRedemption{Order: order, Flows: flows}, true, nil
	case errors.Is(err, gorm.ErrDuplicatedKey):
		out, err := s.replayOrder(db, req)
		return out, false, err
	case errors.As(err, &rejected):
		return s.rejectOrder(ctx, req, rejected, now, local)
	}
	return nil, false, fmt.Errorf("redeem codes: %w", err)
}

// takeCodes takes every code of req on tx for order, whose row tx has just
// inserted: the reserve's conditional update, the stacking rule, the limits,
// and the discount on what the codes before left. With complete, the one
// business order and every confirmation commit in tx too. Any code not taken
// rolls tx back with an *orderRejected.
//
// The rows are locked in one order whatever the order of the codes (the
// coupons by code, each flow's limit counters as allowancesOf orders them),
// so two orders sharing coupons wait for each other instead of deadlocking;
// the stacking rule and the discounts follow the order given.
func (s *Redemptions) takeCodes(tx *gorm.DB, req *orderRequest, order *models.RedemptionOrder, flows []*models.RedemptionFlow,
	complete TxFulfiller, local, now time.Time) error {
	hold := now.Add(s.holdTimeout)
	byCode := make([]int, len(flows))
	for i := range byCode {
		byCode[i] = i
	}
	slices.SortFunc(byCode, func(a, b int) int { return strings.Compare(req.codes[a], req.codes[b]) })
	got := make([]models.Reserved, len(flows))
	campaigns := make([]*models.Campaign, len(flows))
	for _, i := range byCode {
		flow := flows[i]
		r, ok, err := models.ReserveCoupon(tx, models.ReserveArgs{MerchantID: req.actor.MerchantID, Code: req.codes[i],
			RedeemNo: flow.RedeemNo, StoreID: req.in.StoreID, OrderAmount: req.in.OrderAmount,
			CustomerRef: req.in.CustomerRef, Clock: models.ClockOf(local), Now: now})
		if err != nil {
			return err
		}
		if !ok {
			return &orderRejected{index: i}
		}
		if campaigns[i], err = s.campaigns.cached(tx, r.CampaignID); err != nil {
			return err
		}
		got[i] = r
		flow.CouponID, flow.Status, flow.HoldUntil, flow.UseNo, flow.OrderID = r.ID, models.FlowProcessing, &hold, r.UseNo, &order.ID
		if customer := customerOf(r.CustomerRef, req.in.CustomerRef); customer != "" {
			flow.CustomerRef = &customer
		}
	}
	nonStackable := 0
	for i := range flows {
		if !campaigns[i].Stackable {
			if nonStackable++; nonStackable > 1 {
				return &orderRejected{index: i, reason: RejectNotStackable}
			}
		}
	}
	for _, i := range byCode {
		flow := flows[i]
		if reason, err := takeAllowances(tx, campaigns[i], flow, deref(flow.CustomerRef), dayOf(local)); err != nil || reason != "" {
			if err == nil {
				err = &orderRejected{index: i, reason: reason}
			}
			return err
		}
	}
	left := req.in.OrderAmount
	reserved := make([]models.CouponTransition, len(flows))
	for i, flow := range flows {
		flow.DiscountAmount = min(campaigns[i].Discount(left), left)
		left -= flow.DiscountAmount
		order.DiscountAmount += flow.DiscountAmount
		reserved[i] = flow.Transition(models.CouponUnused, models.CouponRedeeming, got[i].Version, req.actor.Label(), now)
	}
	if complete == nil {
		for i, flow := range flows {
			if err := models.InsertFlow(tx, flow, reserved[i]); err != nil {
				return err
			}
		}
		return models.SetRedemptionOrderDiscount(tx, order.MerchantID, order.ID, order.DiscountAmount)
	}
	ref, err := complete.FulfilTx(tx, orderFulfilRequest(order, flows[0]), now)
	if err != nil {
		return err
	}
	for i, flow := range flows {
		version, after, ok, err := models.ConfirmUse(tx, flow.CouponID, flow.RedeemNo, 0, now)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("coupon %d is not held by %s inside its own transaction", flow.CouponID, flow.RedeemNo)
		}
		flow.Status, flow.OrderRef, flow.FinishedAt, flow.Version = models.FlowSucceeded, &ref, &now, 1
		if err := models.InsertFlow(tx, flow, reserved[i],
			flow.Transition(models.CouponRedeeming, after, version, req.actor.Label(), now)); err != nil {
			return err
		}
		if err := models.InsertRedemptionEvent(tx, models.EventRedemptionSucceeded, flow.MerchantID, flow.ID, now); err != nil {
			return err
		}
	}
	if err := models.SetRedemptionOrderDiscount(tx, order.MerchantID, order.ID, order.DiscountAmount); err != nil {
		return err
	}
	if ok, err := models.FinishRedemptionOrder(tx, order.MerchantID, order.ID, models.FlowSucceeded, &ref, now); err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("order %s is not PROCESSING inside its own transaction", order.OrderNo)
		}
		return err
	}
	order.Status, order.OrderRef, order.FinishedAt, order.Version = models.FlowSucceeded, &ref, &now, 1
	return nil
}

// orderFulfilRequest is the business step of a multi-code order: one order
// for the whole set, keyed by the order's first redemption number, for the
// order amount less every discount.
func orderFulfilRequest(order *models.RedemptionOrder, first *models.RedemptionFlow) FulfilRequest {
	return FulfilRequest{MerchantID: order.MerchantID, RedeemNo: order.OrderNo, CouponID: first.CouponID,
		StoreID: order.StoreID, OrderAmount: order.OrderAmount, DiscountAmount: order.DiscountAmount}
}

// rejectOrder records the REJECTED order of req, whose taking transaction
// rolled back at rejected, with every code's reasons, in a transaction of its
// own. A concurrent copy of the request that committed first makes the
// insert fail on the unique index, and its answer is replayed. An unknown
// code is COUPON_NOT_FOUND, with nothing written.
func (s *Redemptions) rejectOrder(ctx context.Context, req *orderRequest, rejected *orderRejected, now, local time.Time) (*OrderRedemption, bool, error) {
	db := s.db.WithContext(ctx)
	var order *models.RedemptionOrder
	var verdicts []CodeVerdict
	err := s.gate.run(ctx, func() error {
		return db.Transaction(func(tx *gorm.DB) error {
			v, err := s.orderVerdicts(tx, req.actor, req.keys, req.in.StoreID, req.in.OrderAmount, req.in.CustomerRef, local)
			if err != nil {
				return err
			}
			mine := &v[rejected.index].CodeVerdict
			switch {
			case rejected.reason != "" && !slices.Contains(mine.Reasons, rejected.reason):
				mine.Reasons = append([]string{rejected.reason}, mine.Reasons...)
			case rejected.reason == "" && len(mine.Reasons) == 0:
				// Every rule holds now, yet the update did not match: the
				// coupon changed between the two transactions, which for this
				// request means it was taken.
				mine.Reasons = []string{RejectNotAvailable}
			}
			verdicts = make([]CodeVerdict, len(v))
			for i := range v {
				verdicts[i] = v[i].CodeVerdict
			}
			data, err := json.Marshal(verdicts)
			if err != nil {
				return err
			}
			codesJSON, _ := json.Marshal(req.codes)
			order = &models.RedemptionOrder{MerchantID: req.actor.MerchantID, RequestID: req.in.RequestID, Fingerprint: req.fp,
				OrderNo: newFlowNo("RD", now), StoreID: req.in.StoreID, OperatorID: req.actor.operatorID(),
				Status: models.FlowRejected, Codes: string(codesJSON), CodeCount: int64(len(req.codes)),
				OrderAmount: req.in.OrderAmount, Verdicts: string(data), CreatedAt: now, UpdatedAt: now, FinishedAt: &now}
			if req.in.CustomerRef != "" {
				order.CustomerRef = &req.in.CustomerRef
			}
			return models.InsertRedemptionOrder(tx, order)
		})
	})
	var nf *codeNotFound
	switch {
	case err == nil:
		return &OrderRedemption{Order: order, Verdicts: verdicts}, true, nil
	case errors.Is(err, gorm.ErrDuplicatedKey):
		out, err := s.replayOrder(db, req)
		return out, false, err
	case errors.As(err, &nf):
		// A concurrent copy may have been answered before the code vanished;
		// codes are never deleted, so this is an unknown code.
		if prior, perr := models.RedemptionOrderByRequest(db, req.actor.MerchantID, req.in.RequestID); perr == nil && prior != nil {
			out, err := s.answerOrder(db, prior, req.fp)
			return out, false, err
		}
		s.limits.failedLookup(req.actor, req.in.CustomerRef)
		return nil, false, nf.err
	}
	return nil, false, fmt.Errorf("redeem codes: record rejection: %w", err)
}

// codeNotFound is an unknown code of an order.
type codeNotFound struct{ err error }

func (e *codeNotFound) Error() string { return e.err.Error() }

// replayOrder answers a request id that already has an order.
func (s *Redemptions) replayOrder(db *gorm.DB, req *orderRequest) (*OrderRedemption, error) {
	prior, err := models.RedemptionOrderByRequest(db, req.actor.MerchantID, req.in.RequestID)
	if err != nil {
		return nil, err
	}
	if prior == nil {
		return nil, fmt.Errorf("redeem codes: request %s conflicted but is not found", req.in.RequestID)
	}
	return s.answerOrder(db, prior, req.fp)
}

// answerOrder is the answer of a stored order: IDEMPOTENCY_KEY_REUSED when
// fp is not its fingerprint, else the order with its flows or its verdicts,
// as they stand.
func (s *Redemptions) answerOrder(db *gorm.DB, order *models.RedemptionOrder, fp string) (*OrderRedemption, error) {
	if order.Fingerprint != fp {
		return nil, ErrIdempotencyKeyReused
	}
	out := &OrderRedemption{Order: order}
	if order.Status == models.FlowRejected {
		if err := json.Unmarshal([]byte(order.Verdicts), &out.Verdicts); err != nil {
			return nil, fmt.Errorf("order %s: verdicts: %w", order.RequestID, err)
		}
		return out, nil
	}
	flows, err := models.FlowsOfOrder(db, order.MerchantID, order.ID)
	if err != nil {
		return nil, fmt.Errorf("order %s: flows: %w", order.RequestID, err)
	}
	out.Flows = flows
	return out, nil
}

// fulfilOrder asks the adapter for the one order of a taken multi-code
// order and settles all its flows by the answer: an order confirms them, a
// definite failure releases them, anything else leaves them PROCESSING for
// compensation.
func (s *Redemptions) fulfilOrder(ctx context.Context, actor Actor, out *OrderRedemption) (*OrderRedemption, error) {
	fctx, cancel := context.WithTimeout(ctx, s.adapter.timeout)
	ref, err := s.adapter.Fulfil(fctx, orderFulfilRequest(out.Order, out.Flows[0]))
	cancel()
	switch {
	case err == nil:
		s.crashAt(CrashAfterOrderCreated, out.Order.OrderNo)
		final, won, err := s.settleOrder(ctx, actor, out.Order, out.Flows, models.FlowSucceeded, &ref, "")
		if err != nil {
			return nil, err
		}
		if won {
			s.crashAt(CrashAfterConfirmCommit, out.Order.OrderNo)
		}
		if !won && final.Order.Status != models.FlowSucceeded {
			// Compensation released the order while it was being made: the
			// business order must not stand without its redemptions.
			if cerr := s.adapter.Cancel(ctx, out.Order.MerchantID, out.Order.OrderNo); cerr != nil {
				s.hooks.log.ErrorContext(ctx, "cancel order of a released multi-code order", "order_no", out.Order.OrderNo, "err", cerr)
			}
		}
		return final, nil
	case errors.Is(err, ErrFulfilmentRejected):
		s.hooks.log.WarnContext(ctx, "fulfilment failed, releasing coupons", "order_no", out.Order.OrderNo, "err", err)
		final, _, err := s.settleOrder(ctx, actor, out.Order, out.Flows, models.FlowReleased, nil, ReleaseFulfilmentFailed)
		return final, err
	default:
		s.hooks.log.WarnContext(ctx, "fulfilment outcome unknown, left to compensation", "order_no", out.Order.OrderNo, "err", err)
		return out, nil
	}
}

// settleOrder finishes a PROCESSING multi-code order as to (SUCCEEDED with
// orderRef, or RELEASED) in one transaction: the order row's conditional
// update decides, and every flow and its coupon follow (finishTx). won is
// false when someone else (compensation) finished the order first; the
// answer is then the order as stored.
func (s *Redemptions) settleOrder(ctx context.Context, actor Actor, order *models.RedemptionOrder, flows []*models.RedemptionFlow,
	to models.FlowStatus, orderRef *string, releaseReason string) (*OrderRedemption, bool, error) {
	now := s.now()
	db := s.db.WithContext(ctx)
	out := models.FlowOutcome{Status: to, OrderRef: orderRef, Now: now}
	coupon := models.CouponRedeemed
	if to == models.FlowReleased {
		out.ReleaseReason, coupon = &releaseReason, models.CouponUnused
	}
	err := s.gate.run(ctx, func() error {
		return db.Transaction(func(tx *gorm.DB) error {
			ok, err := models.FinishRedemptionOrder(tx, order.MerchantID, order.ID, to, orderRef, now)
			if err != nil {
				return err
			}
			if !ok {
				return errLostRace
			}
			for _, f := range flows {
				if _, err := s.finishTx(tx, actor, f, out, coupon, 0); err != nil {
					if errors.Is(err, errLostRace) {
						return fmt.Errorf("flow %s of order %s is not PROCESSING with its order", f.RedeemNo, order.OrderNo)
					}
					return err
				}
			}
			return nil
		})
	})
	if err != nil && !errors.Is(err, errLostRace) {
		return nil, false, fmt.Errorf("finish order %s as %s: %w", order.OrderNo, to, err)
	}
	stored, rerr := models.RedemptionOrderByID(db, order.MerchantID, order.ID)
	if rerr != nil {
		return nil, false, rerr
	}
	final, rerr := s.answerOrder(db, stored, stored.Fingerprint)
	return final, err == nil, rerr
}

// codeQuote is one code of an order as orderVerdicts judges it.
type codeQuote struct {
	CodeVerdict
	coupon   *models.Coupon
	campaign *models.Campaign
}

// orderVerdicts judges the codes of an order for storeID, orderAmount and
// customer at local (the merchant's clock), reading only: each code's
// reasons are diagnoseAll's (the rules of the reserve, one home), and a
// coupon of a non-stackable campaign after the order's first one is also
// NOT_STACKABLE. An unknown code is a *codeNotFound.
func (s *Redemptions) orderVerdicts(db *gorm.DB, actor Actor, keys []codeKey, storeID, orderAmount int64, customer string, local time.Time) ([]codeQuote, error) {
	out := make([]codeQuote, len(keys))
	nonStackable := 0
	for i, k := range keys {
		c, err := models.CouponByCode(db, actor.MerchantID, k.code)
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, &codeNotFound{err: fmt.Errorf("codes[%d] %s: %w", i, k.code, k.notFound())}
		}
		if err != nil {
			return nil, fmt.Errorf("find coupon: %w", err)
		}
		campaign, err := s.campaigns.current(db, c.CampaignID)
		if err != nil {
			return nil, err
		}
		reasons, err := diagnoseAll(db, campaign, c, storeID, orderAmount, customer, local)
		if err != nil {
			return nil, fmt.Errorf("judge coupon %d: %w", c.ID, err)
		}
		if !campaign.Stackable {
			if nonStackable++; nonStackable > 1 {
				reasons = append(reasons, RejectNotStackable)
			}
		}
		out[i] = codeQuote{CodeVerdict: CodeVerdict{Code: k.code, Reasons: reasons}, coupon: c, campaign: campaign}
	}
	for i := range out {
		if out[i].Reasons == nil {
			out[i].Reasons = []string{}
		}
	}
	return out, nil
}

// QuoteCodesInput asks what several coupons would do for one order.
type QuoteCodesInput struct {
	Codes       []string
	StoreID     int64
	OrderAmount int64
	// CustomerRef, optional (required from APP tokens).
	CustomerRef string
}

// OrderQuote is what a multi-code redemption would give now.
type OrderQuote struct {
	// Quotes are the codes' quotes in the order given; a code's
	// DiscountAmount is what it would take off what the codes before it
	// left, 0 for a code that is not eligible.
	Quotes []*Quote
	// DiscountAmount is the order's discount; PayAmount what the customer
	// would pay.
	DiscountAmount int64
	PayAmount      int64
}

// Eligible reports whether a redemption of the order now would take every
// code.
func (q *OrderQuote) Eligible() bool {
	for _, c := range q.Quotes {
		if !c.Eligible() {
			return false
		}
	}
	return true
}

// QuoteCodes is Quote for several codes on one order, without writing
// anything: every rule each code fails now (NOT_STACKABLE included), when
// it is usable next, and the stacked discounts, by the rules of RedeemCodes.
// It reads the limits as they stand: it does not count the order's own uses
// of them, which only the redemption takes. Unknown codes count against the
// failed-lookup limit like redemptions do.
func (s *Redemptions) QuoteCodes(ctx context.Context, actor Actor, in QuoteCodesInput) (*OrderQuote, error) {
	keys, _, err := checkCodes(in.Codes)
	if err != nil {
		return nil, err
	}
	if err := s.quoteAllowed(actor, in.StoreID, in.OrderAmount, in.CustomerRef); err != nil {
		return nil, err
	}
	db := s.db.WithContext(ctx)
	now, err := s.days.local(ctx, actor.MerchantID, s.now())
	if err != nil {
		return nil, err
	}
	v, err := s.orderVerdicts(db, actor, keys, in.StoreID, in.OrderAmount, in.CustomerRef, now)
	var nf *codeNotFound
	if errors.As(err, &nf) {
		s.limits.failedLookup(actor, in.CustomerRef)
		return nil, nf.err
	}
	if err != nil {
		return nil, err
	}
	out := &OrderQuote{PayAmount: in.OrderAmount}
	for _, c := range v {
		q := &Quote{Coupon: c.coupon, Reasons: c.Reasons, UsableNextAt: usableNextAt(c.campaign, c.coupon, c.Reasons, now)}
		if len(c.Reasons) == 0 {
			q.DiscountAmount = min(c.campaign.Discount(out.PayAmount), out.PayAmount)
			out.PayAmount -= q.DiscountAmount
			out.DiscountAmount += q.DiscountAmount
		} else {
			q.RejectReason = c.Reasons[0]
		}
		out.Quotes = append(out.Quotes, q)
	}
	for _, q := range out.Quotes {
		q.PayAmount = out.PayAmount
	}
	return out, nil
}
