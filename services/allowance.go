package services

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// Reject reasons of the limits at redemption.
const (
	// RejectCustomerMismatch: the coupon was issued to another customer than
	// the request's customerRef.
	RejectCustomerMismatch = "CUSTOMER_MISMATCH"
	// RejectCustomerLimitReached: the customer has used the campaign's
	// perCustomerLimit, or today's perCustomerDailyLimit.
	RejectCustomerLimitReached = "CUSTOMER_LIMIT_REACHED"
	// RejectStoreDailyLimitReached: the store has used today's
	// perStoreDailyLimit of the campaign.
	RejectStoreDailyLimitReached = "STORE_DAILY_LIMIT_REACHED"
)

// allowance is a limit a use counts against, and the reason a use over it
// is rejected with.
type allowance struct {
	models.Allowance
	reason string
}

// allowancesOf are the limits of campaign a use by customer ("" for none)
// at storeID on the merchant-local day counts against, in the order they are
// taken: the customer's, then the store's (a fixed order, so concurrent
// takes lock the counter rows in the same order and cannot deadlock).
func allowancesOf(campaign *models.Campaign, customer string, storeID int64, day string) []allowance {
	var out []allowance
	if customer != "" && campaign.PerCustomerLimit > 0 {
		out = append(out, allowance{models.Allowance{Scope: models.AllowanceCustomer, Subject: customer,
			Limit: campaign.PerCustomerLimit}, RejectCustomerLimitReached})
	}
	if customer != "" && campaign.PerCustomerDailyLimit > 0 {
		out = append(out, allowance{models.Allowance{Scope: models.AllowanceCustomerDay, Subject: customer, Day: day,
			Limit: campaign.PerCustomerDailyLimit}, RejectCustomerLimitReached})
	}
	if campaign.PerStoreDailyLimit > 0 {
		out = append(out, allowance{models.Allowance{Scope: models.AllowanceStoreDay, Subject: strconv.FormatInt(storeID, 10),
			Day: day, Limit: campaign.PerStoreDailyLimit}, RejectStoreDailyLimitReached})
	}
	return out
}

func counters(as []allowance) []models.Allowance {
	out := make([]models.Allowance, len(as))
	for i, a := range as {
		out[i] = a.Allowance
	}
	return out
}

// takeAllowances counts flow's use of campaign's coupon against its limits
// on tx, the transaction that takes the coupon, for customer on the
// merchant-local day; it returns the reason of the first limit reached ("":
// all counted, and flow remembers the day). On a reason the transaction must
// roll back.
func takeAllowances(tx *gorm.DB, campaign *models.Campaign, flow *models.RedemptionFlow, customer, day string) (string, error) {
	as := allowancesOf(campaign, customer, flow.StoreID, day)
	if len(as) == 0 {
		return "", nil
	}
	i, err := models.TakeAllowances(tx, flow.MerchantID, campaign.ID, counters(as))
	if err != nil || i >= 0 {
		if err != nil {
			return "", fmt.Errorf("count use against limits: %w", err)
		}
		return as[i].reason, nil
	}
	flow.AllowanceDay = day
	return "", nil
}

// returnAllowances gives the use of flow back to the limits it counted
// against, on tx, the transaction that releases or refunds it.
func (s *Redemptions) returnAllowances(tx *gorm.DB, flow *models.RedemptionFlow) error {
	if flow.AllowanceDay == "" {
		return nil
	}
	campaign, err := s.campaigns.ofCoupon(tx, flow.CouponID)
	if err != nil {
		return err
	}
	as := allowancesOf(campaign, deref(flow.CustomerRef), flow.StoreID, flow.AllowanceDay)
	if err := models.ReturnAllowances(tx, flow.MerchantID, campaign.ID, counters(as)); err != nil {
		return fmt.Errorf("give use of %s back to limits: %w", flow.RedeemNo, err)
	}
	return nil
}

// reachedAllowance is the reason of the first limit a use would pass now,
// or "": a read, for explanations and quotes.
func reachedAllowance(db *gorm.DB, campaign *models.Campaign, merchantID int64, customer string, storeID int64, day string) (string, error) {
	as := allowancesOf(campaign, customer, storeID, day)
	if len(as) == 0 {
		return "", nil
	}
	i, err := models.FirstReachedAllowance(db, merchantID, campaign.ID, counters(as))
	if err != nil || i < 0 {
		return "", err
	}
	return as[i].reason, nil
}

// limitReached rolls back a take whose use a limit refuses.
type limitReached struct{ reason string }

func (e *limitReached) Error() string { return "limit reached: " + e.reason }

// merchantDays tells the merchant-local day of an instant; a merchant's
// time zone is read once.
type merchantDays struct {
	db    *gorm.DB
	zones sync.Map // merchant id -> *time.Location
}

// local is now on the merchant's clock (in its time zone).
func (d *merchantDays) local(ctx context.Context, merchantID int64, now time.Time) (time.Time, error) {
	if loc, ok := d.zones.Load(merchantID); ok {
		return now.In(loc.(*time.Location)), nil
	}
	m, err := models.MerchantByID(d.db.WithContext(ctx), merchantID)
	if err != nil {
		return time.Time{}, fmt.Errorf("find merchant %d: %w", merchantID, err)
	}
	loc, err := time.LoadLocation(m.Timezone)
	if err != nil {
		return time.Time{}, fmt.Errorf("merchant %d time zone: %w", merchantID, err)
	}
	d.zones.Store(merchantID, loc)
	return now.In(loc), nil
}

// dayOf is the merchant-local date (YYYY-MM-DD) of local.
func dayOf(local time.Time) string { return local.Format(time.DateOnly) }

// customerOf is whom a use of coupon c by a request naming customer is
// counted for: the coupon's customer when it was issued to one.
func customerOf(couponRef *string, customer string) string {
	if couponRef != nil {
		return *couponRef
	}
	return customer
}

// deref is *p, or the zero value for nil.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
