package services_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/models"
	"coupond/services"
)

// clock is a controllable clock for tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// faultyFulfiller wraps a real adapter and fails on demand.
type faultyFulfiller struct {
	services.Fulfiller
	mu      sync.Mutex
	fulfil  error
	fulfils int
}

func (f *faultyFulfiller) failWith(err error) { f.mu.Lock(); f.fulfil = err; f.mu.Unlock() }

func (f *faultyFulfiller) Fulfil(ctx context.Context, req services.FulfilRequest) (string, error) {
	f.mu.Lock()
	f.fulfils++
	err := f.fulfil
	f.mu.Unlock()
	if err != nil {
		return "", err
	}
	return f.Fulfiller.Fulfil(ctx, req)
}

// world is one merchant with two stores, a campaign valid at both, and actors.
type world struct {
	t        *testing.T
	db       *gorm.DB
	svc      *services.Services
	clock    *clock
	ful      *faultyFulfiller
	merchant *models.Merchant
	storeA   *models.Store
	storeB   *models.Store
	campaign *models.Campaign
	admin    services.Actor
	clerkA   services.Actor
	finance  services.Actor
}

func newWorld(t *testing.T, db *gorm.DB) *world { return newWorldWith(t, db, false) }

// newWorldWith builds a world; with oneCommit the services use the builtin
// adapter itself, whose one-shot redemptions commit order and confirmation in
// the reserve transaction, instead of the wrapper that runs the general
// two-transaction protocol. opts adjust the services' options.
func newWorldWith(t *testing.T, db *gorm.DB, oneCommit bool, opts ...func(*services.Options)) *world {
	t.Helper()
	ctx := context.Background()
	w := &world{t: t, db: db, clock: newClock()}
	builtin := services.NewBuiltinFulfiller(db, w.clock.Now)
	w.ful = &faultyFulfiller{Fulfiller: builtin}
	var f services.Fulfiller = w.ful
	if oneCommit {
		f = builtin
	}
	o := services.Options{Now: w.clock.Now, Fulfiller: f}
	for _, opt := range opts {
		opt(&o)
	}
	w.svc = services.New(db, o)
	var err error
	w.merchant, err = w.svc.Merchants.Create(ctx, "acme", "Acme Noodles", "Asia/Shanghai")
	must(t, err)
	w.admin = services.SystemActor(w.merchant.ID)
	w.storeA, err = w.svc.Stores.Create(ctx, w.admin, services.CreateStoreInput{Code: "SH01", Name: "Shanghai 1"})
	must(t, err)
	w.storeB, err = w.svc.Stores.Create(ctx, w.admin, services.CreateStoreInput{Code: "BJ01", Name: "Beijing 1"})
	must(t, err)
	w.campaign = w.newCampaign(services.CreateCampaignInput{Name: "Ten off", Type: models.CampaignCash, Value: 1000,
		MinSpend: 3000, TotalQuantity: 10_000})
	w.clerkA = w.actor(models.RoleClerk, "SH01")
	w.finance = w.actor(models.RoleFinance)
	return w
}

func (w *world) newCampaign(in services.CreateCampaignInput) *models.Campaign {
	w.t.Helper()
	if in.ValidFrom.IsZero() {
		in.ValidFrom = w.clock.Now().Add(-time.Hour)
	}
	if in.ValidTo.IsZero() {
		in.ValidTo = w.clock.Now().Add(30 * 24 * time.Hour)
	}
	c, err := w.svc.Campaigns.Create(context.Background(), w.admin, in)
	must(w.t, err)
	return c
}

// actor mints a real token and authenticates it.
func (w *world) actor(role models.Role, stores ...string) services.Actor {
	w.t.Helper()
	plain, _, err := w.svc.Tokens.Create(context.Background(), services.CreateTokenInput{MerchantID: w.merchant.ID, Role: role, StoreCodes: stores})
	must(w.t, err)
	a, err := w.svc.Tokens.Authenticate(context.Background(), plain)
	must(w.t, err)
	return a
}

func (w *world) issue(campaign *models.Campaign, n int64) []string {
	w.t.Helper()
	res, err := w.svc.Campaigns.IssueCoupons(context.Background(), w.admin, services.IssueInput{CampaignID: campaign.ID, Count: n})
	must(w.t, err)
	return res.Codes
}

func (w *world) coupon(code string) models.Coupon {
	w.t.Helper()
	c, err := w.svc.Coupons.ByCode(context.Background(), w.admin, code)
	must(w.t, err)
	return *c
}

func (w *world) count(model any, where string, args ...any) int64 {
	w.t.Helper()
	var n int64
	must(w.t, w.db.Model(model).Where(where, args...).Count(&n).Error)
	return n
}

func (w *world) redeem(code, requestID string, amount int64) (*models.RedemptionFlow, error) {
	return w.svc.Redemptions.Redeem(context.Background(), w.clerkA,
		services.RedeemInput{Code: code, StoreID: w.storeA.ID, RequestID: requestID, OrderAmount: amount})
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	var se *services.Error
	if !errors.As(err, &se) || se.Code != code {
		t.Fatalf("want error %s, got %v", code, err)
	}
}
