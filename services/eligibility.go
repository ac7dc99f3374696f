package services

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	// RejectNotValidToday: the campaign's weekdays do not include today.
	RejectNotValidToday = "NOT_VALID_TODAY"
	// RejectOutsideHours: now is outside the campaign's daily window.
	RejectOutsideHours = "OUTSIDE_HOURS"
	// RejectNotStackable: a multi-code order already has a coupon of a
	// campaign that is not stackable; at most one such coupon goes on an
	// order (see multicode.go).
	RejectNotStackable = "NOT_STACKABLE"
	// RejectCustomerMismatch, RejectCustomerLimitReached and
	// RejectStoreDailyLimitReached are in allowance.go.
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
func diagnose(db *gorm.DB, campaign *models.Campaign, c *models.Coupon, storeID, orderAmount int64, customer string, now time.Time) (string, error) {
	reasons, err := diagnoseAll(db, campaign, c, storeID, orderAmount, customer, now)
	if err != nil || len(reasons) == 0 {
		return "", err
	}
	return reasons[0], nil
}

// diagnoseAll names every rule that keeps coupon c from being taken, each
// once, in the order diagnose ranks them (status, validity, campaign state,
// weekday and time of day, minimum spend, store, customer, then the limits
// at redemption), so its first is diagnose's answer; none when the coupon
// could be taken. customer is the request's ("" for none); now must be in
// the merchant's time zone, whose clock the time rules and daily limits
// read. A quote shows them all, so the clerk learns at once everything that
// stands in the way.
func diagnoseAll(db *gorm.DB, campaign *models.Campaign, c *models.Coupon, storeID, orderAmount int64, customer string, now time.Time) ([]string, error) {
	var reasons []string
	add := func(r string) {
		if !slices.Contains(reasons, r) {
			reasons = append(reasons, r)
		}
	}
	switch {
	case c.Status == models.CouponExpired:
		add(RejectExpired)
	case c.Status != models.CouponUnused:
		add(RejectNotAvailable)
	}
	switch {
	case now.Before(c.ValidFrom):
		add(RejectNotYetValid)
	case !now.Before(c.ValidTo):
		add(RejectExpired)
	}
	if campaign.State == models.CampaignEnded {
		add(RejectExpired)
	}
	if campaign.State == models.CampaignPaused {
		add(RejectCampaignPaused)
	}
	if dayOK, inHours := campaign.TimeRule(models.ClockOf(now)); !dayOK || !inHours {
		if !dayOK {
			add(RejectNotValidToday)
		}
		if !inHours {
			add(RejectOutsideHours)
		}
	}
	if orderAmount < campaign.MinSpend {
		add(RejectMinSpendNotMet)
	}
	if !campaign.AllStores {
		ok, err := models.CampaignHasStore(db, campaign.ID, storeID)
		if err != nil {
			return nil, err
		}
		if !ok {
			add(RejectStoreNotEligible)
		}
	}
	if c.CustomerRef != nil && customer != "" && *c.CustomerRef != customer {
		add(RejectCustomerMismatch)
	}
	if !slices.Contains(reasons, RejectCustomerMismatch) {
		reached, err := reachedAllowance(db, campaign, c.MerchantID, customerOf(c.CustomerRef, customer), storeID, dayOf(now))
		if err != nil {
			return nil, err
		}
		if reached != "" {
			add(reached)
		}
	}
	return reasons, nil
}

// timeReasons are the reject reasons that only the passing of time can
// lift: when they are all a coupon fails on, a quote says when it is usable
// next.
var timeReasons = []string{RejectNotYetValid, RejectNotValidToday, RejectOutsideHours}

// usableNextAt is when coupon c of campaign could be taken next, as far as
// time rules go, given that reasons are all the rules it fails at now (on
// the merchant's clock); nil when a rule other than time fails, or none
// does, or no minute in the next eight days from when its validity starts
// passes the weekday and time-of-day rules before its validity ends.
func usableNextAt(campaign *models.Campaign, c *models.Coupon, reasons []string, now time.Time) *time.Time {
	if len(reasons) == 0 {
		return nil
	}
	for _, r := range reasons {
		if !slices.Contains(timeReasons, r) {
			return nil
		}
	}
	t := now
	if t.Before(c.ValidFrom) {
		t = c.ValidFrom.In(now.Location())
	}
	// The rules change only at a minute's start: try this instant, then
	// every minute after it for a week and a day.
	for i := 0; i <= 8*24*60; i++ {
		if i == 1 {
			t = t.Truncate(time.Minute)
		}
		if i > 0 {
			t = t.Add(time.Minute)
		}
		if !t.Before(c.ValidTo) {
			return nil
		}
		if dayOK, inHours := campaign.TimeRule(models.ClockOf(t)); dayOK && inHours {
			next := t.UTC()
			return &next
		}
	}
	return nil
}

// QuoteInput asks what a coupon would do for an order at a store.
type QuoteInput struct {
	Code        string
	StoreID     int64
	OrderAmount int64
	// CustomerRef, optional (required from APP tokens), is the customer who
	// would redeem.
	CustomerRef string
}

// Quote is what a redemption would give now: the coupon, every reason it
// would be rejected (none when it would not), and the discount.
type Quote struct {
	Coupon *models.Coupon
	// RejectReason is the first of Reasons, the one a redemption now would
	// record; "" when eligible.
	RejectReason string
	// Reasons are all the rules the coupon fails now, RejectReason first.
	Reasons []string
	// UsableNextAt is when the coupon can be used next, set when only time
	// rules fail.
	UsableNextAt   *time.Time
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
	if err := s.quoteAllowed(actor, in.StoreID, in.OrderAmount, in.CustomerRef); err != nil {
		return nil, err
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
	now, err := s.days.local(ctx, actor.MerchantID, s.now())
	if err != nil {
		return nil, err
	}
	reasons, err := diagnoseAll(db, campaign, c, in.StoreID, in.OrderAmount, in.CustomerRef, now)
	if err != nil {
		return nil, fmt.Errorf("quote coupon %d: %w", c.ID, err)
	}
	q := &Quote{Coupon: c, Reasons: reasons, PayAmount: in.OrderAmount, UsableNextAt: usableNextAt(campaign, c, reasons, now)}
	if len(reasons) == 0 {
		q.DiscountAmount = campaign.Discount(in.OrderAmount)
		q.PayAmount -= q.DiscountAmount
	} else {
		q.RejectReason = reasons[0]
	}
	return q, nil
}

// quoteAllowed validates the order of a quote (one code or several) and
// authorizes actor to ask it: at a store it operates, naming the customer
// when it is an APP token, within the failed-lookup limits.
func (s *Redemptions) quoteAllowed(actor Actor, storeID, orderAmount int64, customerRef string) error {
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
	if err := s.limits.lookupsAllowed(actor, customerRef); err != nil {
		return err
	}
	if actor.Role == models.RoleApp {
		// A mini-program's quotes are its customers' requests: each is
		// charged to its customer, so none can flood the token.
		return s.limits.perCustomer.take(customerKey{actor.TokenID, customerRef})
	}
	return nil
}

// checkOrderAmount refuses an order amount outside 0..MaxOrderAmount.
func checkOrderAmount(amount int64) error {
	if amount < 0 || amount > MaxOrderAmount {
		return invalidf("orderAmount must be between 0 and %d fen", int64(MaxOrderAmount))
	}
	return nil
}

// UsableNextAt is when coupon c can be used next as far as time goes (its
// validity, its campaign's weekdays and daily window on the merchant's
// clock): nil when it is not UNUSED, when time keeps nothing from it now,
// or when no minute of the next eight days inside its validity would do.
// For the coupon page; only a redemption decides.
func (s *Redemptions) UsableNextAt(ctx context.Context, actor Actor, c *models.Coupon) (*time.Time, error) {
	if c.Status != models.CouponUnused || c.MerchantID != actor.MerchantID {
		return nil, nil
	}
	db := s.db.WithContext(ctx)
	campaign, err := s.campaigns.cached(db, c.CampaignID)
	if err != nil {
		return nil, err
	}
	now, err := s.days.local(ctx, actor.MerchantID, s.now())
	if err != nil {
		return nil, err
	}
	var reasons []string
	if now.Before(c.ValidFrom) {
		reasons = append(reasons, RejectNotYetValid)
	}
	if dayOK, inHours := campaign.TimeRule(models.ClockOf(now)); !dayOK || !inHours {
		reasons = append(reasons, RejectOutsideHours)
	}
	return usableNextAt(campaign, c, reasons, now), nil
}
