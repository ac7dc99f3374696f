package services

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

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
	RejectCampaignPaused   = "CAMPAIGN_PAUSED"
)

// MaxOrderAmount caps an order amount: ¥100,000,000 in fen, far above any
// store order and far below what could overflow a discount computation.
const MaxOrderAmount = 10_000_000_000

// diagnose names the first rule that keeps coupon c from being taken at
// storeID for orderAmount, or "" when none does; campaign must be read now,
// not from the cache, since its state changes. The rule itself is the SQL
// condition every taking statement carries (models.CouponEligible shows it);
// diagnose explains it reason by reason, after a failed take (which already
// decided) and for a quote (where it is the answer). TestEligibilityExplained
// holds the two together on both databases.
func diagnose(db *gorm.DB, campaign *models.Campaign, c *models.Coupon, storeID, orderAmount int64, now time.Time) (string, error) {
	switch {
	case c.Status == models.CouponExpired:
		return RejectExpired, nil
	case c.Status != models.CouponUnused:
		return RejectNotAvailable, nil
	case now.Before(c.ValidFrom):
		return RejectNotYetValid, nil
	case !now.Before(c.ValidTo), campaign.State == models.CampaignEnded:
		return RejectExpired, nil
	case campaign.State == models.CampaignPaused:
		return RejectCampaignPaused, nil
	case orderAmount < campaign.MinSpend:
		return RejectMinSpendNotMet, nil
	}
	if !campaign.AllStores {
		ok, err := models.CampaignHasStore(db, campaign.ID, storeID)
		if err != nil {
			return "", err
		}
		if !ok {
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
	// CustomerRef names the customer; required from APP tokens.
	CustomerRef string
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
	key, err := lookupCode(in.Code)
	if err != nil {
		return nil, err
	}
	if err := checkOrderAmount(in.OrderAmount); err != nil {
		return nil, err
	}
	if err := actor.requireStore(in.StoreID); err != nil {
		return nil, err
	}
	if err := actor.requireCustomer(in.CustomerRef); err != nil {
		return nil, err
	}
	if err := s.limits.lookupsAllowed(actor, in.CustomerRef); err != nil {
		return nil, err
	}
	if actor.Role == models.RoleApp {
		// A mini-program's quotes are its customers' requests: each is
		// charged to its customer, so none can flood the token.
		if err := s.limits.perCustomer.take(customerKey{actor.TokenID, in.CustomerRef}); err != nil {
			return nil, err
		}
	}
	db := s.db.WithContext(ctx)
	c, err := models.CouponByCode(db, actor.MerchantID, key.code)
	if errors.Is(err, gorm.ErrRecordNotFound) {
		s.limits.failedLookup(actor, in.CustomerRef)
		return nil, key.notFound()
	}
	if err != nil {
		return nil, fmt.Errorf("find coupon: %w", err)
	}
	campaign, err := s.campaigns.current(db, c.CampaignID)
	if err != nil {
		return nil, err
	}
	reason, err := diagnose(db, campaign, c, in.StoreID, in.OrderAmount, s.now())
	if err != nil {
		return nil, fmt.Errorf("quote coupon %d: %w", c.ID, err)
	}
	q := &Quote{Coupon: c, RejectReason: reason, PayAmount: in.OrderAmount}
	if reason == "" {
		q.DiscountAmount = campaign.Discount(in.OrderAmount)
		q.PayAmount -= q.DiscountAmount
	}
	return q, nil
}

// checkOrderAmount refuses an order amount outside 0..MaxOrderAmount.
func checkOrderAmount(amount int64) error {
	if amount < 0 || amount > MaxOrderAmount {
		return invalidf("orderAmount must be between 0 and %d fen", int64(MaxOrderAmount))
	}
	return nil
}
