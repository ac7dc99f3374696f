package services

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// Coupons answers questions about coupons, their transitions and the ledger.
// Every query is scoped to the actor's merchant; clerks see the ledger of their
// own stores.
type Coupons struct {
	db *gorm.DB
	// read serves the lists, the ledger export and the hourly overview: a
	// read replica when there are any, else db.
	read  *gorm.DB
	now   func() time.Time
	audit *Audit
	// tills paces the ledger export beside the redemptions.
	tills *tills
}

func readers() []models.Role {
	return []models.Role{models.RoleAdmin, models.RoleFinance, models.RoleClerk}
}

// ByCode returns the coupon with a code, normalised as NormalizeCouponCode
// does. Another merchant's code is COUPON_NOT_FOUND, exactly like an unknown one.
func (c *Coupons) ByCode(ctx context.Context, actor Actor, raw string) (*models.Coupon, error) {
	if err := actor.require(readers()...); err != nil {
		return nil, err
	}
	key, err := lookupCode(raw)
	if err != nil {
		return nil, err
	}
	cp, err := models.CouponByCode(c.db.WithContext(ctx), actor.MerchantID, key.code)
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, key.notFound()
	}
	if err != nil {
		return nil, fmt.Errorf("find coupon: %w", err)
	}
	return cp, nil
}

// ByIDs returns the actor's coupons among ids, for batch loaders. A
// mini-program (APP) reaches coupons only through what it may read (its
// redemptions, quotes and one customer's wallet), so it may load them.
func (c *Coupons) ByIDs(ctx context.Context, actor Actor, ids []int64) ([]models.Coupon, error) {
	if err := actor.require(append(readers(), models.RoleApp)...); err != nil {
		return nil, err
	}
	return models.CouponsByIDs(c.db.WithContext(ctx), actor.MerchantID, ids)
}

// CouponFilter narrows List; zero fields do not filter.
type CouponFilter = models.CouponFilter

// List returns the actor's coupons, newest first. A mini-program (APP)
// reads one customer's wallet: without f.CustomerRef it is FORBIDDEN.
func (c *Coupons) List(ctx context.Context, actor Actor, f CouponFilter, p PageArgs) (Page[models.Coupon], error) {
	if actor.Role == models.RoleApp && actor.MerchantID != 0 {
		if f.CustomerRef == "" {
			return Page[models.Coupon]{}, &Error{Code: errForbidden.Code, Kind: ErrForbidden,
				Message: "an APP token reads one customer's coupons: give filter.customerRef"}
		}
		if err := actor.requireCustomer(f.CustomerRef); err != nil {
			return Page[models.Coupon]{}, err
		}
	} else if err := actor.require(readers()...); err != nil {
		return Page[models.Coupon]{}, err
	}
	return paginate[models.Coupon](models.MerchantCoupons(c.read.WithContext(ctx), actor.MerchantID, f), "coupons", p)
}

// Transitions returns the transitions of the given coupons in the order they
// happened, for the coupon timeline.
func (c *Coupons) Transitions(ctx context.Context, actor Actor, couponIDs []int64) ([]models.CouponTransition, error) {
	if err := actor.require(readers()...); err != nil {
		return nil, err
	}
	return models.TransitionsOf(c.db.WithContext(ctx), actor.MerchantID, couponIDs)
}

// RedemptionFilter narrows Redemptions; zero fields do not filter.
type RedemptionFilter struct {
	StoreID  int64
	CouponID int64
	Status   models.FlowStatus
	From, To *time.Time
}

// flowFilter is f for the actor: a clerk sees its stores only.
func (f RedemptionFilter) flowFilter(actor Actor) models.FlowFilter {
	mf := models.FlowFilter{StoreID: f.StoreID, CouponID: f.CouponID, Status: f.Status}
	if actor.Role == models.RoleClerk {
		mf.StoreIDs = actor.StoreIDs
		if mf.StoreIDs == nil {
			mf.StoreIDs = []int64{}
		}
	}
	if f.From != nil {
		mf.From = *f.From
	}
	if f.To != nil {
		mf.To = *f.To
	}
	return mf
}

// Redemptions returns ledger rows, newest first. A clerk sees its stores only.
func (c *Coupons) Redemptions(ctx context.Context, actor Actor, f RedemptionFilter, p PageArgs) (Page[models.RedemptionFlow], error) {
	if err := actor.require(readers()...); err != nil {
		return Page[models.RedemptionFlow]{}, err
	}
	q := models.MerchantFlows(c.read.WithContext(ctx), actor.MerchantID, f.flowFilter(actor))
	return paginate[models.RedemptionFlow](q, "redemption_flows", p)
}

// RedemptionsOfCoupons returns every redemption flow of the given coupons,
// oldest first, for batch loaders.
func (c *Coupons) RedemptionsOfCoupons(ctx context.Context, actor Actor, couponIDs []int64) ([]models.RedemptionFlow, error) {
	if err := actor.require(readers()...); err != nil {
		return nil, err
	}
	return models.FlowsOfCoupons(c.db.WithContext(ctx), actor.MerchantID, couponIDs)
}

// Redemption returns one ledger row by redemption number; NOT_FOUND for an
// unknown number or one of a store the clerk does not belong to.
func (c *Coupons) Redemption(ctx context.Context, actor Actor, redeemNo string) (*models.RedemptionFlow, error) {
	if err := actor.require(readers()...); err != nil {
		return nil, err
	}
	flow, err := flowByRedeemNo(c.db.WithContext(ctx), actor.MerchantID, redeemNo)
	if err != nil {
		return nil, err
	}
	if actor.Role == models.RoleClerk && actor.requireStore(flow.StoreID) != nil {
		return nil, notFoundf("redemption %s not found", redeemNo)
	}
	return flow, nil
}

// RefundsOfCoupons returns the refunds of the given coupons, oldest first.
func (c *Coupons) RefundsOfCoupons(ctx context.Context, actor Actor, couponIDs []int64) ([]models.RefundFlow, error) {
	if err := actor.require(readers()...); err != nil {
		return nil, err
	}
	return models.RefundsOfCoupons(c.db.WithContext(ctx), actor.MerchantID, couponIDs)
}

// HoldStats reports, across all merchants, how many coupons are REDEEMING and
// how long the oldest has been held, for metrics.
func (c *Coupons) HoldStats(ctx context.Context, now time.Time) (count int64, oldest time.Duration, err error) {
	n, first, err := models.HoldStats(c.db.WithContext(ctx))
	if err != nil || first == nil {
		return n, 0, err
	}
	return n, now.Sub(*first), nil
}

// HourCount is the succeeded redemptions of one UTC hour.
type HourCount struct {
	Hour           time.Time
	Redeemed       int64
	DiscountAmount int64
}

// MaxHourlyRange caps RedemptionsByHour.
const MaxHourlyRange = 31 * 24 * time.Hour

// RedemptionsByHour counts the actor's succeeded redemptions per UTC hour in
// [from, to), by when they succeeded, with one grouped query; hours without
// any are left out. A clerk sees its stores; storeID 0 means every store.
func (c *Coupons) RedemptionsByHour(ctx context.Context, actor Actor, from, to time.Time, storeID int64) ([]HourCount, error) {
	if err := actor.require(readers()...); err != nil {
		return nil, err
	}
	if !from.Before(to) || to.Sub(from) > MaxHourlyRange {
		return nil, invalidf("from must be before to, at most 31 days apart")
	}
	var only []int64
	if actor.Role == models.RoleClerk {
		only = append([]int64{}, actor.StoreIDs...)
	}
	rows, err := models.SucceededByHour(c.read.WithContext(ctx), actor.MerchantID, from, to, only, storeID)
	if err != nil {
		return nil, fmt.Errorf("redemptions by hour: %w", err)
	}
	out := make([]HourCount, 0, len(rows))
	for _, r := range rows {
		// The SQLite driver may already have turned the bucket into RFC 3339.
		h, err := time.Parse(time.DateTime, r.Hour)
		if err != nil {
			h, err = time.Parse(time.RFC3339, r.Hour)
		}
		if err != nil {
			return nil, fmt.Errorf("redemptions by hour: bucket %q: %w", r.Hour, err)
		}
		out = append(out, HourCount{Hour: h.UTC(), Redeemed: r.Redeemed, DiscountAmount: r.Discount})
	}
	return out, nil
}
