package services_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// Admin calls with a request id follow the redemption's contract: a repeat
// returns the first result and changes nothing, other parameters under the
// id are IDEMPOTENCY_KEY_REUSED, and concurrent repeats run once.
func TestIdempotentAdminCalls(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()

		st1, err := w.svc.Stores.Create(ctx, w.admin, services.CreateStoreInput{Code: "GZ01", Name: "Guangzhou", RequestID: "store-1"})
		must(t, err)
		st2, err := w.svc.Stores.Create(ctx, w.admin, services.CreateStoreInput{Code: "GZ01", Name: "Guangzhou", RequestID: "store-1"})
		must(t, err)
		if st1.ID != st2.ID || st2.Code != "GZ01" {
			t.Fatalf("repeat created %+v, first %+v", st2, st1)
		}
		_, err = w.svc.Stores.Create(ctx, w.admin, services.CreateStoreInput{Code: "GZ02", Name: "Guangzhou 2", RequestID: "store-1"})
		wantCode(t, err, "IDEMPOTENCY_KEY_REUSED")
		if n := w.count(&models.Store{}, "code LIKE 'GZ%'"); n != 1 {
			t.Fatalf("%d stores, want 1", n)
		}

		in := services.CreateCampaignInput{Name: "Once", Type: models.CampaignCash, Value: 300, TotalQuantity: 100,
			ValidFrom: w.clock.Now(), ValidTo: w.clock.Now().AddDate(0, 1, 0), RequestID: "camp-1"}
		c1, err := w.svc.Campaigns.Create(ctx, w.admin, in)
		must(t, err)
		c2, err := w.svc.Campaigns.Create(ctx, w.admin, in)
		must(t, err)
		if c1.ID != c2.ID {
			t.Fatalf("repeat made campaign %d, first %d", c2.ID, c1.ID)
		}
		in.Value = 400
		_, err = w.svc.Campaigns.Create(ctx, w.admin, in)
		wantCode(t, err, "IDEMPOTENCY_KEY_REUSED")

		// 20 copies of one issuance at once: one issues, all answer the same codes.
		const copies = 20
		var wg sync.WaitGroup
		results := make([]*services.IssueResult, copies)
		errs := make([]error, copies)
		release := make(chan struct{})
		for i := range copies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-release
				results[i], errs[i] = w.svc.Campaigns.IssueCoupons(ctx, w.admin,
					services.IssueInput{CampaignID: c1.ID, Count: 30, RequestID: "issue-1"})
			}()
		}
		close(release)
		wg.Wait()
		for i := range copies {
			must(t, errs[i])
			if results[i].Issued != 30 || !slices.Equal(results[i].Codes, results[0].Codes) || len(results[i].Codes) != 30 {
				t.Fatalf("copy %d answered %d issued, %d codes; want copy 0's 30", i, results[i].Issued, len(results[i].Codes))
			}
		}
		camp, err := w.svc.Campaigns.Get(ctx, w.admin, c1.ID)
		must(t, err)
		if camp.Issued != 30 || w.count(&models.Coupon{}, "campaign_id = ?", c1.ID) != 30 {
			t.Fatalf("campaign issued %d, %d coupons; want 30 once", camp.Issued, w.count(&models.Coupon{}, "campaign_id = ?", c1.ID))
		}
		if n := w.count(&models.AuditEvent{}, "action = 'campaign.issue'"); n != 1 {
			t.Fatalf("%d issue audit records, want 1", n)
		}
		_, err = w.svc.Campaigns.IssueCoupons(ctx, w.admin, services.IssueInput{CampaignID: c1.ID, Count: 31, RequestID: "issue-1"})
		wantCode(t, err, "IDEMPOTENCY_KEY_REUSED")

		// Request ids are the merchant's own: another merchant's same id runs.
		other := otherMerchantAdmin(t, w)
		st3, err := w.svc.Stores.Create(ctx, other, services.CreateStoreInput{Code: "GZ01", Name: "Guangzhou", RequestID: "store-1"})
		must(t, err)
		if st3.ID == st1.ID || st3.MerchantID != other.MerchantID {
			t.Fatalf("another merchant's request got %+v", st3)
		}
	})
}
