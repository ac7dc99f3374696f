package services_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

func (w *world) importCampaign(total int64) *models.Campaign {
	w.t.Helper()
	return w.newCampaign(services.CreateCampaignInput{Name: "Imported", Type: models.CampaignCash, Value: 500,
		TotalQuantity: total, CodeSource: models.CodeImported})
}

// An import of 100,000 codes (ten calls of 10,000) with 100 duplicates, half
// within a call and half against codes imported before, reports exactly
// those 100 lines and imports the rest, within the campaign's budget.
func TestImportReportsExactlyTheDuplicates(t *testing.T) {
	services.SkipUnderRace(t)
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		camp := w.importCampaign(200_000)
		const calls, per = 10, 10_000
		var imported, rejected int64
		for call := range calls {
			codes := make([]string, per)
			for i := range codes {
				codes[i] = fmt.Sprintf("imp-%02d-%06d", call, i)
			}
			// 5 repeats of a code earlier in the call, 5 of a code of the
			// previous call (in lower case with spaces: normalised to it).
			for k := range 5 {
				codes[100+k] = codes[k]
				if call > 0 {
					codes[200+k] = fmt.Sprintf("imp %02d %06d", call-1, 300+k)
				} else {
					codes[200+k] = codes[10+k]
				}
			}
			res, err := w.svc.Campaigns.ImportCoupons(ctx, w.admin, services.ImportInput{CampaignID: camp.ID, Codes: codes,
				RequestID: fmt.Sprintf("imp-%d", call)})
			must(t, err)
			for _, r := range res.Rejected {
				switch {
				case r.Line >= 101 && r.Line <= 105 && r.Reason == services.ImportDuplicate:
				case r.Line >= 201 && r.Line <= 205 && call > 0 && r.Reason == services.ImportExists:
				case r.Line >= 201 && r.Line <= 205 && call == 0 && r.Reason == services.ImportDuplicate:
				default:
					t.Fatalf("call %d: unexpected rejection %+v", call, r)
				}
			}
			imported += res.Imported
			rejected += int64(len(res.Rejected))
		}
		if rejected != 100 || imported != calls*per-100 {
			t.Fatalf("imported %d, rejected %d; want %d and 100", imported, rejected, calls*per-100)
		}
		if got := w.count(&models.Coupon{}, "campaign_id = ?", camp.ID); got != imported {
			t.Fatalf("%d coupons, want %d", got, imported)
		}
		now, err := w.svc.Campaigns.Get(ctx, w.admin, camp.ID)
		must(t, err)
		if now.Issued != imported {
			t.Fatalf("campaign issued %d, want %d: imported codes count against the budget", now.Issued, imported)
		}
		// Coupons, counters and ledger agree: imports keep every invariant.
		vs, err := w.svc.Reconciliation.Check(ctx)
		must(t, err)
		if len(vs) != 0 {
			t.Fatalf("reconciliation after imports: %v", vs)
		}
		// A repeat of a call replays its report and writes nothing.
		codes := make([]string, per)
		for i := range codes {
			codes[i] = fmt.Sprintf("imp-%02d-%06d", 0, i)
		}
		for k := range 5 {
			codes[100+k], codes[200+k] = codes[k], codes[10+k]
		}
		res, err := w.svc.Campaigns.ImportCoupons(ctx, w.admin, services.ImportInput{CampaignID: camp.ID, Codes: codes, RequestID: "imp-0"})
		must(t, err)
		if res.Imported != per-10 || len(res.Rejected) != 10 {
			t.Fatalf("replay: %d imported, %d rejected", res.Imported, len(res.Rejected))
		}
		if got := w.count(&models.Coupon{}, "campaign_id = ?", camp.ID); got != imported {
			t.Fatalf("a replay wrote: %d coupons, want %d", got, imported)
		}
	})
}

func TestImportBadInput(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		camp := w.importCampaign(100)
		tests := []struct {
			name    string
			give    services.ImportInput
			wantMsg string
		}{
			{"too short", services.ImportInput{Codes: []string{"ABCDEF", "ABCDE"}}, "codes[1]"},
			{"too long", services.ImportInput{Codes: []string{"A234567890123456789012345678901234"}}, "codes[0]"},
			{"alphabet", services.ImportInput{Codes: []string{"ABC_DEF1"}}, "codes[0]"},
			{"not ascii", services.ImportInput{Codes: []string{"ABCDEF", "ABCDÉF"}}, "codes[1]"},
			{"none", services.ImportInput{Codes: []string{}}, "codes"},
			{"too many", services.ImportInput{Codes: make([]string, 10_001)}, "codes"},
			{"refs not one per code", services.ImportInput{Codes: []string{"ABCDEF"}, CustomerRefs: []string{"a", "b"}}, "customerRefs"},
			{"bad ref", services.ImportInput{Codes: []string{"ABCDEF", "ABCDEG"}, CustomerRefs: []string{"a", "b\x01"}}, "customerRefs[1]"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tt.give.CampaignID = camp.ID
				_, err := w.svc.Campaigns.ImportCoupons(ctx, w.admin, tt.give)
				wantCode(t, err, "BAD_USER_INPUT")
				if se := err.(*services.Error); !contains(se.Message, tt.wantMsg) {
					t.Fatalf("message %q does not name %s", se.Message, tt.wantMsg)
				}
			})
		}
		// A generated campaign takes no imports, an imported one no issuance.
		_, err := w.svc.Campaigns.ImportCoupons(ctx, w.admin, services.ImportInput{CampaignID: w.campaign.ID, Codes: []string{"ABCDEF"}})
		wantCode(t, err, "BAD_USER_INPUT")
		_, err = w.svc.Campaigns.IssueCoupons(ctx, w.admin, services.IssueInput{CampaignID: camp.ID, Count: 1})
		wantCode(t, err, "BAD_USER_INPUT")
		// Over the budget: QUOTA_EXCEEDED, nothing written.
		many := make([]string, 101)
		for i := range many {
			many[i] = fmt.Sprintf("Q%07d", i)
		}
		_, err = w.svc.Campaigns.ImportCoupons(ctx, w.admin, services.ImportInput{CampaignID: camp.ID, Codes: many})
		wantCode(t, err, "QUOTA_EXCEEDED")
		// Clerks may not import.
		_, err = w.svc.Campaigns.ImportCoupons(ctx, w.clerkA, services.ImportInput{CampaignID: camp.ID, Codes: []string{"ABCDEF"}})
		wantCode(t, err, "FORBIDDEN")
		if got := w.count(&models.Coupon{}, "campaign_id = ?", camp.ID); got != 0 {
			t.Fatalf("%d coupons written by refused imports", got)
		}
	})
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// Imported codes are redeemed like generated ones, looked up as written
// (case, spaces and dashes aside), and an unknown one counts as a failed
// lookup; a generated code that fails its check is still "mistyped".
func TestRedeemImportedCodes(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		camp := w.importCampaign(100)
		// HELLO-WORLD-0I has letters a generated code reads as aliases;
		// the 13-symbol one is a well-formed generated-looking code.
		gen := services.NewCouponCode()
		res, err := w.svc.Campaigns.ImportCoupons(ctx, w.admin, services.ImportInput{CampaignID: camp.ID,
			Codes: []string{"hello-world-0i", "VIP 2026 ABC", gen, "ABCDEFGHJKMN0"}, CustomerRefs: []string{"u1", "", "", ""}})
		must(t, err)
		if res.Imported != 4 || len(res.Rejected) != 0 {
			t.Fatalf("import: %+v", res)
		}
		for i, typed := range []string{"HELLOWORLD0I", "vip-2026-abc", gen, "abcd efgh jkmn 0"} {
			f, err := w.svc.Redemptions.Redeem(ctx, w.clerkA, services.RedeemInput{Code: typed, StoreID: w.storeA.ID,
				RequestID: fmt.Sprintf("imp-r-%d", i), OrderAmount: 1000})
			must(t, err)
			if f.Status != models.FlowSucceeded {
				t.Fatalf("redeem %s: %s %v", typed, f.Status, f.RejectReason)
			}
		}
		c := w.coupon("HELLO WORLD 0I")
		if c.Status != models.CouponRedeemed || c.CustomerRef == nil || *c.CustomerRef != "u1" {
			t.Fatalf("coupon: %+v", c)
		}
		_, err = w.redeem("NOSUCHCODE", "imp-r-x", 1000)
		wantCode(t, err, "COUPON_NOT_FOUND")
		wrong := gen[:12] + string("0123456789ABCDEFGHJKMNPQRSTVWXYZ"[(indexOf("0123456789ABCDEFGHJKMNPQRSTVWXYZ", gen[12:])+1)%32])
		_, err = w.redeem(wrong, "imp-r-y", 1000)
		wantCode(t, err, "BAD_USER_INPUT")
		_, err = w.redeem("AB!", "imp-r-z", 1000)
		wantCode(t, err, "BAD_USER_INPUT")
	})
}

// Concurrent copies of one import run once; concurrent imports of the same
// codes under different request ids import each code once.
func TestImportConcurrent(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		camp := w.importCampaign(10_000)
		codes := make([]string, 500)
		for i := range codes {
			codes[i] = fmt.Sprintf("CONC%05d", i)
		}
		const n = 8
		results := make([]*services.ImportResult, 2*n)
		errs := make([]error, 2*n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 2 * n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				req := "same"
				if i >= n {
					req = fmt.Sprintf("other-%d", i)
				}
				results[i], errs[i] = w.svc.Campaigns.ImportCoupons(ctx, w.admin, services.ImportInput{CampaignID: camp.ID,
					Codes: codes, RequestID: req})
			}()
		}
		close(start)
		wg.Wait()
		var total int64
		for i := range 2 * n {
			must(t, errs[i])
			if i == 0 || i >= n {
				total += results[i].Imported
			} else if results[i].Imported != results[0].Imported {
				t.Fatalf("copy %d of one request: %d imported, first %d", i, results[i].Imported, results[0].Imported)
			}
			if results[i].Imported+int64(len(results[i].Rejected)) != 500 {
				t.Fatalf("import %d: %d imported + %d rejected", i, results[i].Imported, len(results[i].Rejected))
			}
		}
		if total != 500 || w.count(&models.Coupon{}, "campaign_id = ?", camp.ID) != 500 {
			t.Fatalf("imported %d in all, want 500", total)
		}
		now, err := w.svc.Campaigns.Get(ctx, w.admin, camp.ID)
		must(t, err)
		if now.Issued != 500 {
			t.Fatalf("issued %d, want 500", now.Issued)
		}
	})
}

// Imported codes have no check symbol to refuse a guess before the lookup,
// so every unknown code of their shape is a failed lookup: a token guessing
// them is cut off by the failed-lookup limit like one guessing generated codes.
func TestImportedCodeGuessesAreLimited(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		w.svc = services.New(db, services.Options{Now: w.clock.Now, Fulfiller: w.ful, Limits: services.Limits{
			FailedLookupsPerToken: services.RateLimit{PerSecond: 0.1, Burst: 3},
		}})
		ctx := context.Background()
		camp := w.importCampaign(10)
		_, err := w.svc.Campaigns.ImportCoupons(ctx, w.admin, services.ImportInput{CampaignID: camp.ID, Codes: []string{"REAL-CODE-77"}})
		must(t, err)
		for i, guess := range []string{"GUESS0001", "GUESS0002", "GUESS0003"} {
			_, err := w.redeem(guess, fmt.Sprintf("g-%d", i), 1000)
			wantCode(t, err, "COUPON_NOT_FOUND")
		}
		// Out of failed lookups: even the right code is refused until the bucket refills.
		_, err = w.redeem("REAL-CODE-77", "g-real", 1000)
		wantCode(t, err, "RATE_LIMITED")
		_, err = w.svc.Redemptions.Quote(ctx, w.clerkA, services.QuoteInput{Code: "GUESS0004", StoreID: w.storeA.ID, OrderAmount: 1000})
		wantCode(t, err, "RATE_LIMITED")
		w.clock.Advance(10 * time.Second)
		f, err := w.redeem("real code 77", "g-real-2", 1000)
		must(t, err)
		if f.Status != models.FlowSucceeded {
			t.Fatalf("redeem after the wait: %s", f.Status)
		}
	})
}
