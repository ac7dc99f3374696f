package services_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// Campaign changes are optimistic-locking updates: of two changes made from
// the same version exactly one wins, the other is CONFLICT with the current
// version and writes nothing.
func TestCampaignUpdateOptimisticLocking(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		camp := w.campaign
		const n = 10
		var (
			wg      sync.WaitGroup
			won     []*models.Campaign
			lost    []error
			mu      sync.Mutex
			release = make(chan struct{})
		)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-release
				name := fmt.Sprintf("renamed %d", i)
				c, err := w.svc.Campaigns.Update(ctx, w.admin, services.UpdateCampaignInput{ID: camp.ID, Version: camp.Version, Name: &name})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					lost = append(lost, err)
				} else {
					won = append(won, c)
				}
			}()
		}
		close(release)
		wg.Wait()
		if len(won) != 1 || len(lost) != n-1 {
			t.Fatalf("%d updates won and %d lost, want 1 and %d", len(won), len(lost), n-1)
		}
		for _, err := range lost {
			wantCode(t, err, "CONFLICT")
			if v, ok := services.CurrentVersionOf(err); !ok || v != camp.Version+1 {
				t.Fatalf("conflict says current version %d (%t), want %d", v, ok, camp.Version+1)
			}
		}
		got, err := w.svc.Campaigns.Get(ctx, w.admin, camp.ID)
		must(t, err)
		if got.Version != camp.Version+1 || got.Name != won[0].Name {
			t.Fatalf("campaign %q v%d, want the winner's %q v%d", got.Name, got.Version, won[0].Name, camp.Version+1)
		}
		if n := w.count(&models.AuditEvent{}, "action = 'campaign.update'"); n != 1 {
			t.Fatalf("%d update audit records, want 1", n)
		}

		// Below what was issued, before the start, another merchant's, a clerk:
		// refused, nothing written.
		w.issue(camp, 5)
		tests := []struct {
			name  string
			actor services.Actor
			in    services.UpdateCampaignInput
			code  string
		}{
			{"quantity below issued", w.admin, services.UpdateCampaignInput{ID: camp.ID, Version: got.Version, TotalQuantity: ptr(int64(4))}, "BAD_USER_INPUT"},
			{"end before start", w.admin, services.UpdateCampaignInput{ID: camp.ID, Version: got.Version, ValidTo: ptr(camp.ValidFrom.Add(-time.Hour))}, "BAD_USER_INPUT"},
			{"stale version", w.admin, services.UpdateCampaignInput{ID: camp.ID, Version: camp.Version, RefundWindowMinutes: ptr(int64(5))}, "CONFLICT"},
			{"unknown campaign", w.admin, services.UpdateCampaignInput{ID: camp.ID + 1000, Version: 0, Name: ptr("x")}, "NOT_FOUND"},
			{"clerk", w.clerkA, services.UpdateCampaignInput{ID: camp.ID, Version: got.Version, Name: ptr("x")}, "FORBIDDEN"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := w.svc.Campaigns.Update(ctx, tt.actor, tt.in)
				wantCode(t, err, tt.code)
				now, err := w.svc.Campaigns.Get(ctx, w.admin, camp.ID)
				must(t, err)
				if now.Version != got.Version || now.TotalQuantity != got.TotalQuantity {
					t.Fatalf("a refused update wrote: v%d total %d", now.Version, now.TotalQuantity)
				}
			})
		}
		other := otherMerchantAdmin(t, w)
		_, err = w.svc.Campaigns.Pause(ctx, other, camp.ID, got.Version)
		wantCode(t, err, "NOT_FOUND")
	})
}

// A paused campaign's coupons are rejected with CAMPAIGN_PAUSED and left
// untouched, it issues nothing, and after resuming its coupons work again.
func TestPausedCampaign(t *testing.T) {
	for _, oneCommit := range []bool{false, true} {
		t.Run(fmt.Sprintf("one-commit=%t", oneCommit), func(t *testing.T) {
			testdb.Each(t, func(t *testing.T, db *gorm.DB) {
				w := newWorldWith(t, db, oneCommit)
				ctx := context.Background()
				code := w.issue(w.campaign, 1)[0]
				camp, err := w.svc.Campaigns.Pause(ctx, w.admin, w.campaign.ID, w.campaign.Version)
				must(t, err)
				if camp.State != models.CampaignPaused {
					t.Fatalf("state %s", camp.State)
				}
				f, err := w.redeem(code, "while-paused", 5000)
				must(t, err)
				if f.Status != models.FlowRejected || *f.RejectReason != services.RejectCampaignPaused {
					t.Fatalf("redeem while paused: %s %v", f.Status, f.RejectReason)
				}
				if c := w.coupon(code); c.Status != models.CouponUnused || c.Version != 0 {
					t.Fatalf("paused coupon moved: %s v%d", c.Status, c.Version)
				}
				q, err := w.svc.Redemptions.Quote(ctx, w.clerkA, services.QuoteInput{Code: code, StoreID: w.storeA.ID, OrderAmount: 5000})
				must(t, err)
				if q.RejectReason != services.RejectCampaignPaused {
					t.Fatalf("quote while paused: %q", q.RejectReason)
				}
				_, err = w.svc.Campaigns.IssueCoupons(ctx, w.admin, services.IssueInput{CampaignID: camp.ID, Count: 1})
				wantCode(t, err, "INVALID_STATE")
				_, err = w.svc.Campaigns.Pause(ctx, w.admin, camp.ID, camp.Version)
				wantCode(t, err, "INVALID_STATE")

				camp, err = w.svc.Campaigns.Resume(ctx, w.admin, camp.ID, camp.Version)
				must(t, err)
				f, err = w.redeem(code, "after-resume", 5000)
				must(t, err)
				if f.Status != models.FlowSucceeded {
					t.Fatalf("redeem after resume: %s %v", f.Status, f.RejectReason)
				}
				w.consistent()
			})
		})
	}
}

// Ending a campaign cuts its end to now; its unused coupons expire on the
// next expiry run, with a transition and an audit record, and are then
// rejected as expired. Redeemed coupons stay as they are.
func TestEndCampaignAndExpiry(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		codes := w.issue(w.campaign, 3)
		_, err := w.redeem(codes[0], "before-end", 5000)
		must(t, err)
		camp, err := w.svc.Campaigns.End(ctx, w.admin, w.campaign.ID, w.campaign.Version)
		must(t, err)
		if camp.State != models.CampaignEnded || !camp.ValidTo.Equal(w.clock.Now()) {
			t.Fatalf("ended campaign %s until %s, want ENDED until %s", camp.State, camp.ValidTo, w.clock.Now())
		}
		f, err := w.redeem(codes[1], "after-end", 5000)
		must(t, err)
		if f.Status != models.FlowRejected || *f.RejectReason != services.RejectExpired {
			t.Fatalf("redeem after end: %s %v", f.Status, f.RejectReason)
		}
		run, err := w.svc.JobRuns.Trigger(ctx, w.admin, services.JobExpiry)
		must(t, err)
		if c := counts(t, run); c["expired"] != 2 {
			t.Fatalf("expiry run %v, want 2 expired", c)
		}
		for i, want := range []models.CouponStatus{models.CouponRedeemed, models.CouponExpired, models.CouponExpired} {
			if c := w.coupon(codes[i]); c.Status != want {
				t.Fatalf("coupon %d %s, want %s", i, c.Status, want)
			}
		}
		if n := w.count(&models.CouponTransition{}, "to_status = 'EXPIRED' AND actor = 'system'"); n != 2 {
			t.Fatalf("%d expiry transitions, want 2", n)
		}
		if n := w.count(&models.AuditEvent{}, "action = 'coupon.expire'"); n != 1 {
			t.Fatalf("%d expiry audit records, want 1 for the batch", n)
		}
		run, err = w.svc.JobRuns.Trigger(ctx, w.admin, services.JobExpiry)
		must(t, err)
		if c := counts(t, run); c["expired"] != 0 {
			t.Fatalf("second expiry run %v, want nothing left", c)
		}
		_, err = w.svc.Campaigns.Resume(ctx, w.admin, camp.ID, camp.Version)
		wantCode(t, err, "INVALID_STATE")
		w.consistent()
	})
}

// Expiry races redemptions of the same coupons: each coupon ends REDEEMED
// or EXPIRED, never both, with a ledger and a history that agree.
func TestExpiryRacesRedemptions(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorldWith(t, db, true)
		ctx := context.Background()
		camp := w.newCampaign(services.CreateCampaignInput{Name: "short", Type: models.CampaignCash, Value: 100,
			TotalQuantity: 1000, ValidTo: w.clock.Now().Add(time.Minute)})
		n := 200
		if models.DialectOfDB(db) == models.SQLite {
			n = 50
		}
		codes := w.issue(camp, int64(n))
		// The coupons' validity ends at a moment the redemptions, stamped a
		// second earlier, still fall inside: redemptions and the expiry run
		// both have a right to every coupon, and only the database decides.
		must(t, db.Exec("UPDATE coupons SET valid_to = ? WHERE campaign_id = ?", w.clock.Now().Add(time.Second), camp.ID).Error)
		expirer := services.New(db, services.Options{Now: func() time.Time { return w.clock.Now().Add(2 * time.Second) }})
		release := make(chan struct{})
		var wg sync.WaitGroup
		results := make([]*models.RedemptionFlow, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-release
				results[i], errs[i] = w.redeem(codes[i], fmt.Sprintf("race-%d", i), 5000)
			}()
		}
		var expireErr error
		var expired int
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			for range 20 {
				res, err := expirer.Expiry.Run(ctx)
				if err != nil {
					expireErr = err
					return
				}
				expired += res.Expired
			}
		}()
		close(release)
		wg.Wait()
		must(t, expireErr)
		redeemed := 0
		for i := range n {
			must(t, errs[i])
			c := w.coupon(codes[i])
			switch results[i].Status {
			case models.FlowSucceeded:
				redeemed++
				if c.Status != models.CouponRedeemed {
					t.Fatalf("coupon %d redeemed but %s", i, c.Status)
				}
			case models.FlowRejected:
				if c.Status != models.CouponExpired {
					t.Fatalf("coupon %d rejected (%s) but %s", i, *results[i].RejectReason, c.Status)
				}
			default:
				t.Fatalf("redemption %d %s", i, results[i].Status)
			}
		}
		if redeemed+expired != n {
			t.Fatalf("%d redeemed + %d expired, want %d", redeemed, expired, n)
		}
		if got := w.count(&models.Coupon{}, "campaign_id = ? AND status = 'EXPIRED'", camp.ID); got != int64(expired) {
			t.Fatalf("%d coupons EXPIRED, the runs counted %d", got, expired)
		}
		w.consistent()
	})
}

func ptr[T any](v T) *T { return &v }

// otherMerchantAdmin is an administrator of a second merchant on w's
// database.
func otherMerchantAdmin(t *testing.T, w *world) services.Actor {
	t.Helper()
	ctx := context.Background()
	m, err := w.svc.Merchants.Create(ctx, "other", "Other Chain", "Asia/Shanghai")
	if err != nil && !errors.Is(err, services.ErrConflict) {
		must(t, err)
	}
	if m == nil {
		m, err = w.svc.Merchants.ByCode(ctx, "other")
		must(t, err)
	}
	tok, _, err := w.svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: m.ID, Role: models.RoleAdmin})
	must(t, err)
	a, err := w.svc.Tokens.Authenticate(ctx, tok)
	must(t, err)
	return a
}
