package services_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// draws is a code generator for tests: each call is counted, and change, if
// set, may rewrite the fresh codes of call n (from 1) to force collisions.
type draws struct {
	mu     sync.Mutex
	n      int
	change func(n int, codes []string)
}

func (d *draws) fill(codes []string) {
	services.FillCouponCodes(codes)
	d.mu.Lock()
	d.n++
	n := d.n
	d.mu.Unlock()
	if d.change != nil {
		d.change(n, codes)
	}
}

func (d *draws) calls() int { d.mu.Lock(); defer d.mu.Unlock(); return d.n }

// issuedCoupons returns a campaign's coupons and checks what every issued
// coupon must be: canonical and valid code, unique, UNUSED at version 0 with
// the campaign's validity, and as many as the campaign counts.
func (w *world) issuedCoupons(campaignID int64) []models.Coupon {
	w.t.Helper()
	var camp models.Campaign
	must(w.t, w.db.Take(&camp, campaignID).Error)
	var rows []models.Coupon
	must(w.t, w.db.Where("campaign_id = ?", campaignID).Order("id").Find(&rows).Error)
	if int64(len(rows)) != camp.Issued+camp.Reissued {
		w.t.Fatalf("campaign %d has %d coupons but counts %d issued", campaignID, len(rows), camp.Issued)
	}
	seen := make(map[string]bool, len(rows))
	for _, c := range rows {
		if got, err := services.NormalizeCouponCode(c.Code); err != nil || got != c.Code {
			w.t.Fatalf("code %q is not a canonical valid code: %v", c.Code, err)
		}
		if seen[c.Code] {
			w.t.Fatalf("code %s issued twice", c.Code)
		}
		seen[c.Code] = true
		if c.MerchantID != camp.MerchantID || c.Status != models.CouponUnused || c.Version != 0 || c.RedeemNo != nil ||
			c.ReissuedFrom != nil || !c.ValidFrom.Equal(camp.ValidFrom) || !c.ValidTo.Equal(camp.ValidTo) ||
			!c.CreatedAt.Equal(w.clock.Now()) || !c.UpdatedAt.Equal(w.clock.Now()) {
			w.t.Fatalf("issued coupon %+v does not match campaign %+v", c, camp)
		}
	}
	return rows
}

func TestIssueCouponsInChunks(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		tests := []struct {
			name         string
			chunk, count int64
		}{
			{"one", 0, 1},
			{"one chunk", 10, 10},
			{"chunks and a remainder", 7, 50},
			{"more than returned inline", 400, services.MaxCodesReturned + 1},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				d := &draws{}
				services.SetIssuance(w.svc.Campaigns, tt.chunk, d.fill)
				camp := w.newCampaign(services.CreateCampaignInput{Name: tt.name, Type: models.CampaignCash, Value: 100,
					TotalQuantity: tt.count})
				res, err := w.svc.Campaigns.IssueCoupons(context.Background(), w.admin,
					services.IssueInput{CampaignID: camp.ID, Count: tt.count})
				must(t, err)
				rows := w.issuedCoupons(camp.ID)
				if res.Issued != tt.count || int64(len(rows)) != tt.count {
					t.Fatalf("issued %d, %d rows, want %d", res.Issued, len(rows), tt.count)
				}
				if want := min(tt.count, services.MaxCodesReturned); int64(len(res.Codes)) != want {
					t.Fatalf("%d codes returned, want %d", len(res.Codes), want)
				}
				for i, code := range res.Codes {
					if rows[i].Code != code || rows[i].CustomerRef != nil {
						t.Fatalf("returned code %d is %s, coupon %d is %+v", i, code, i, rows[i])
					}
				}
				chunk := tt.chunk
				if chunk == 0 {
					chunk = tt.count
				}
				if want := int((tt.count + chunk - 1) / chunk); d.calls() != want {
					t.Fatalf("%d draws of codes, want one per chunk (%d)", d.calls(), want)
				}
			})
		}
	})
}

// A chunk of the size PostgreSQL copies by default, and a bit more, so the
// real chunk boundary is crossed.
func TestIssueCouponsPastOneChunk(t *testing.T) {
	services.SkipUnderRace(t)
	if testing.Short() {
		t.Skip("issues 50,001 coupons")
	}
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		const n = 50_001
		camp := w.newCampaign(services.CreateCampaignInput{Name: "big", Type: models.CampaignCash, Value: 100, TotalQuantity: n})
		res, err := w.svc.Campaigns.IssueCoupons(context.Background(), w.admin, services.IssueInput{CampaignID: camp.ID, Count: n})
		must(t, err)
		if rows := w.issuedCoupons(camp.ID); res.Issued != n || len(rows) != n {
			t.Fatalf("issued %d, %d rows, want %d", res.Issued, len(rows), n)
		}
	})
}

func TestIssueCouponsCustomersAcrossChunks(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		services.SetIssuance(w.svc.Campaigns, 4, nil)
		camp := w.newCampaign(services.CreateCampaignInput{Name: "each three", Type: models.CampaignCash, Value: 100,
			TotalQuantity: 100, PerCustomerLimit: 3})
		refs := []string{"u1", "u2", "u3", "u4", "u5"}
		res, err := w.svc.Campaigns.IssueCoupons(context.Background(), w.admin,
			services.IssueInput{CampaignID: camp.ID, Count: 3, CustomerRefs: refs})
		must(t, err)
		rows := w.issuedCoupons(camp.ID)
		if res.Issued != 15 || len(rows) != 15 {
			t.Fatalf("issued %d, %d rows, want 15", res.Issued, len(rows))
		}
		for i, c := range rows {
			if c.CustomerRef == nil || *c.CustomerRef != refs[i/3] {
				t.Fatalf("coupon %d belongs to %v, want %s", i, c.CustomerRef, refs[i/3])
			}
		}
	})
}

// A fresh code that the merchant already has, or that appears twice in one
// chunk, fails the chunk's insert on the unique index; the chunk is redone
// with new codes and the issuance still delivers exactly what was asked.
func TestIssueCouponsCodeCollision(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		existing := w.issue(w.campaign, 1)[0]
		tests := []struct {
			name    string
			collide func(codes []string)
		}{
			{"with an existing code", func(codes []string) { codes[len(codes)/2] = existing }},
			{"within the chunk", func(codes []string) { codes[len(codes)-1] = codes[0] }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				d := &draws{change: func(n int, codes []string) {
					if n == 2 { // the second chunk's first draw
						tt.collide(codes)
					}
				}}
				services.SetIssuance(w.svc.Campaigns, 6, d.fill)
				defer services.SetIssuance(w.svc.Campaigns, 0, nil)
				camp := w.newCampaign(services.CreateCampaignInput{Name: tt.name, Type: models.CampaignCash, Value: 100,
					TotalQuantity: 15})
				res, err := w.svc.Campaigns.IssueCoupons(context.Background(), w.admin,
					services.IssueInput{CampaignID: camp.ID, Count: 15})
				must(t, err)
				if rows := w.issuedCoupons(camp.ID); res.Issued != 15 || len(rows) != 15 {
					t.Fatalf("issued %d, %d rows, want 15", res.Issued, len(rows))
				}
				if d.calls() != 4 {
					t.Fatalf("%d draws, want 4: three chunks and one redo", d.calls())
				}
				if n := w.count(&models.Coupon{}, "code = ?", existing); n != 1 {
					t.Fatalf("%d coupons with code %s", n, existing)
				}
			})
		}
	})
}

// When a chunk keeps colliding the issuance fails as a whole: no coupon of
// earlier chunks, no budget taken, no audit event.
func TestIssueCouponsAllOrNothing(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		existing := w.issue(w.campaign, 1)[0]
		d := &draws{change: func(n int, codes []string) {
			if n >= 3 { // the third chunk and every redo of it
				codes[0] = existing
			}
		}}
		services.SetIssuance(w.svc.Campaigns, 5, d.fill)
		camp := w.newCampaign(services.CreateCampaignInput{Name: "doomed", Type: models.CampaignCash, Value: 100,
			TotalQuantity: 20})
		if _, err := w.svc.Campaigns.IssueCoupons(ctx, w.admin, services.IssueInput{CampaignID: camp.ID, Count: 20}); err == nil {
			t.Fatal("issuance succeeded although its third chunk always collides")
		}
		if d.calls() != 2+5 {
			t.Fatalf("%d draws, want 7: two chunks and five tries of the third", d.calls())
		}
		if n := w.count(&models.Coupon{}, "campaign_id = ?", camp.ID); n != 0 {
			t.Fatalf("%d coupons left by a failed issuance", n)
		}
		if n := w.count(&models.AuditEvent{}, "target = ?", fmt.Sprintf("campaign:%d", camp.ID)); n != 1 {
			t.Fatalf("%d audit events for the campaign, want only its creation", n)
		}
		got, err := w.svc.Campaigns.Get(ctx, w.admin, camp.ID)
		must(t, err)
		if got.Issued != 0 {
			t.Fatalf("a failed issuance left the issued counter at %d", got.Issued)
		}

		services.SetIssuance(w.svc.Campaigns, 5, nil)
		_, err = w.svc.Campaigns.IssueCoupons(ctx, w.admin, services.IssueInput{CampaignID: camp.ID, Count: 20})
		must(t, err)
		if rows := w.issuedCoupons(camp.ID); len(rows) != 20 {
			t.Fatalf("%d coupons after the retried issuance, want 20", len(rows))
		}
	})
}

func TestIssueCouponsBudget(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		services.SetIssuance(w.svc.Campaigns, 3, nil)
		camp := w.newCampaign(services.CreateCampaignInput{Name: "ten", Type: models.CampaignCash, Value: 100, TotalQuantity: 10})
		_, err := w.svc.Campaigns.IssueCoupons(ctx, w.admin, services.IssueInput{CampaignID: camp.ID, Count: 7})
		must(t, err)
		_, err = w.svc.Campaigns.IssueCoupons(ctx, w.admin, services.IssueInput{CampaignID: camp.ID, Count: 4})
		wantCode(t, err, "QUOTA_EXCEEDED")
		_, err = w.svc.Campaigns.IssueCoupons(ctx, w.admin, services.IssueInput{CampaignID: camp.ID, Count: 3})
		must(t, err)
		if rows := w.issuedCoupons(camp.ID); len(rows) != 10 {
			t.Fatalf("%d coupons, want 10", len(rows))
		}
	})
}
