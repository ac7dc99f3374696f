package services

import (
	"errors"
	"fmt"
	"strconv"

	"gorm.io/gorm"

	"coupond/models"
)

// request is one reserve or redeem request, validated and authorized: the
// admit step of the protocol.
type request struct {
	actor Actor
	op    models.Operation
	in    RedeemInput
	// code is in.Code normalised.
	code string
	// key is what code was looked up by, for the answer when it is unknown.
	key codeKey
	// fp fingerprints the parameters, to tell a repeat of the request id
	// from its reuse for another request.
	fp string
}

// admit validates and authorizes a request and counts it against the rate
// limits; nothing is read or written.
func (s *Redemptions) admit(actor Actor, op models.Operation, in RedeemInput) (*request, error) {
	key, err := lookupCode(in.Code)
	if err != nil {
		return nil, err
	}
	if err := validateRequestID(in.RequestID); err != nil {
		return nil, err
	}
	if err := s.admitCaller(actor, in.StoreID, in.OrderAmount, in.CustomerRef); err != nil {
		return nil, err
	}
	params := []string{string(op), key.code, strconv.FormatInt(in.StoreID, 10), strconv.FormatInt(in.OrderAmount, 10)}
	if in.CustomerRef != "" {
		// Only when given, so the fingerprints of requests without one stay
		// what they were.
		params = append(params, "customer="+in.CustomerRef)
	}
	return &request{actor: actor, op: op, in: in, code: key.code, key: key, fp: fingerprint(params...)}, nil
}

// newFlow is the ledger row req starts: not yet taken, no status.
func (s *Redemptions) newFlow(req *request) *models.RedemptionFlow {
	now := s.now()
	return &models.RedemptionFlow{MerchantID: req.actor.MerchantID, RedeemNo: newFlowNo("RD", now), Operation: req.op,
		RequestID: req.in.RequestID, Fingerprint: req.fp, StoreID: req.in.StoreID, OperatorID: req.actor.operatorID(),
		OrderAmount: req.in.OrderAmount, CreatedAt: now, UpdatedAt: now}
}

// errKnownRequest says a request id already has a flow: the caller answers
// with it.
var errKnownRequest = errors.New("request id already known")

// answerTake turns the error of a take into the request's answer. A repeat
// of a known request id, or a concurrent copy of a new one that committed
// first, is refused by the flow's unique index (or found by the rejection's
// read): its answer is the first request's flow, replayed, or
// IDEMPOTENCY_KEY_REUSED when the parameters differ. An unknown code under a
// fresh request id is COUPON_NOT_FOUND and counts as a failed lookup.
func (s *Redemptions) answerTake(db *gorm.DB, req *request, err error) taken {
	if !errors.Is(err, ErrCouponNotFound) && !errors.Is(err, gorm.ErrDuplicatedKey) && !errors.Is(err, errKnownRequest) {
		return taken{err: fmt.Errorf("reserve coupon: %w", err)}
	}
	prior, ferr := models.FlowByRequest(db, req.actor.MerchantID, req.op, req.in.RequestID)
	switch {
	case ferr != nil:
		return taken{err: ferr}
	case prior != nil:
		return replay(prior, req.fp)
	case errors.Is(err, ErrCouponNotFound):
		s.limits.failedLookup(req.actor, req.in.CustomerRef)
		return taken{err: req.key.notFound()}
	}
	return taken{err: fmt.Errorf("reserve coupon: %w", err)}
}

// replay answers a repeated request id with the first request's flow, or with
// IDEMPOTENCY_KEY_REUSED when the parameters differ.
func replay(prior *models.RedemptionFlow, fp string) taken {
	if prior.Fingerprint != fp {
		return taken{err: ErrIdempotencyKeyReused}
	}
	return taken{flow: prior}
}

// flowByRedeemNo returns the merchant's redemption with the number, or
// NOT_FOUND.
func flowByRedeemNo(db *gorm.DB, merchantID int64, redeemNo string) (*models.RedemptionFlow, error) {
	if redeemNo == "" || len(redeemNo) > 64 {
		return nil, invalidf("redeemNo is required")
	}
	flow, err := models.FlowByRedeemNo(db, merchantID, redeemNo)
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, notFoundf("redemption %s not found", redeemNo)
	}
	if err != nil {
		return nil, fmt.Errorf("find redemption %s: %w", redeemNo, err)
	}
	return flow, nil
}

// admitCaller checks what a redemption request of one code or several shares
// (the order amount, the customerRef, the caller's store and customer) and
// counts the request, once, against the rate limits.
func (s *Redemptions) admitCaller(actor Actor, storeID, orderAmount int64, customerRef string) error {
	if err := checkOrderAmount(orderAmount); err != nil {
		return err
	}
	if err := checkText("customerRef", customerRef, 64, false); err != nil {
		return err
	}
	if err := actor.requireStore(storeID); err != nil {
		return err
	}
	if err := actor.requireCustomer(customerRef); err != nil {
		return err
	}
	return s.limits.redeem(actor, storeID, customerRef)
}
