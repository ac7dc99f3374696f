package services_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// A Tuesday-night campaign (22:00 to 02:00, Asia/Shanghai, a window that
// crosses midnight) at the boundaries, through the take path of every
// one-shot strategy on both databases, and the quote's usableNextAt.
func TestTimeRulesAtBoundaries(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		for _, oneCommit := range []bool{false, true} {
			t.Run(fmt.Sprintf("oneCommit=%t", oneCommit), func(t *testing.T) {
				sdb := db
				if oneCommit {
					sdb = freshDB(t, db)
				}
				w := newWorldWith(t, sdb, oneCommit)
				ctx := context.Background()
				shanghai, err := time.LoadLocation("Asia/Shanghai")
				must(t, err)
				// The world's clock starts on Tuesday 1 December 2026, 12:00 in Shanghai.
				if now := w.clock.Now().In(shanghai); now.Weekday() != time.Tuesday || now.Hour() != 12 {
					t.Fatalf("clock starts at %s", now)
				}
				night := w.newCampaign(services.CreateCampaignInput{Name: "Tuesday night", Type: models.CampaignCash,
					Value: 500, TotalQuantity: 100, Weekdays: []time.Weekday{time.Tuesday},
					DailyWindow: &services.DailyWindow{From: 22 * 60, To: 2 * 60}})
				codes := w.issue(night, 10)
				q, err := w.svc.Redemptions.Quote(ctx, w.clerkA, services.QuoteInput{Code: codes[0], StoreID: w.storeA.ID, OrderAmount: 5000})
				must(t, err)
				wantNext := time.Date(2026, 12, 1, 22, 0, 0, 0, shanghai)
				if q.UsableNextAt == nil || !q.UsableNextAt.Equal(wantNext) || q.RejectReason != services.RejectOutsideHours {
					t.Fatalf("quote at noon: %v next %v, want OUTSIDE_HOURS next %s", q.Reasons, q.UsableNextAt, wantNext)
				}
				next, err := w.svc.Redemptions.UsableNextAt(ctx, w.clerkA, ptr(w.coupon(codes[0])))
				must(t, err)
				if next == nil || !next.Equal(wantNext) {
					t.Fatalf("coupon usable next %v, want %s", next, wantNext)
				}
				at := func(day, hour, minute, sec int) {
					w.clock.Advance(time.Date(2026, 12, day, hour, minute, sec, 0, shanghai).Sub(w.clock.Now()))
				}
				steps := []struct {
					day, hour, minute, sec int
					want                   string
				}{
					{1, 21, 59, 59, services.RejectOutsideHours},
					{1, 22, 0, 0, ""},
					{1, 23, 59, 59, ""},
					{2, 0, 0, 0, ""},
					{2, 1, 59, 59, ""},
					{2, 2, 0, 0, services.RejectNotValidToday},
					{2, 22, 0, 0, services.RejectNotValidToday},
				}
				for i, st := range steps {
					at(st.day, st.hour, st.minute, st.sec)
					f, err := w.redeem(codes[i], fmt.Sprintf("t-%d", i), 5000)
					must(t, err)
					got := ""
					if f.Status == models.FlowRejected {
						got = *f.RejectReason
					} else if f.Status != models.FlowSucceeded {
						t.Fatalf("%+v", f)
					}
					if got != st.want {
						t.Fatalf("%s: %q, want %q", w.clock.Now().In(shanghai), got, st.want)
					}
				}
				// Wednesday 22:00: not a Tuesday; next Tuesday's window is next.
				q, err = w.svc.Redemptions.Quote(ctx, w.clerkA, services.QuoteInput{Code: codes[9], StoreID: w.storeA.ID, OrderAmount: 5000})
				must(t, err)
				wantNext = time.Date(2026, 12, 8, 22, 0, 0, 0, shanghai)
				if q.UsableNextAt == nil || !q.UsableNextAt.Equal(wantNext) {
					t.Fatalf("quote on Wednesday night: %v next %v, want %s", q.Reasons, q.UsableNextAt, wantNext)
				}
				w.noViolations(t)
			})
		}
	})
}

// validDaysAfterIssue ends each coupon's validity that many days after its
// issue, never past the campaign's end.
func TestValidDaysAfterIssue(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		now := w.clock.Now()
		camp := w.newCampaign(services.CreateCampaignInput{Name: "7 days", Type: models.CampaignCash, Value: 500,
			TotalQuantity: 10, ValidTo: now.Add(10 * 24 * time.Hour), ValidDaysAfterIssue: int64p(7)})
		first := w.issue(camp, 1)[0]
		if c := w.coupon(first); !c.ValidTo.Equal(now.Add(7 * 24 * time.Hour)) {
			t.Fatalf("valid to %s, want 7 days after issue", c.ValidTo)
		}
		w.clock.Advance(5 * 24 * time.Hour)
		late := w.issue(camp, 1)[0]
		if c := w.coupon(late); !c.ValidTo.Equal(camp.ValidTo) {
			t.Fatalf("valid to %s, want the campaign's end %s", c.ValidTo, camp.ValidTo)
		}
		w.clock.Advance(2*24*time.Hour + time.Second)
		f, err := w.redeem(first, "late", 5000)
		must(t, err)
		if f.Status != models.FlowRejected || *f.RejectReason != services.RejectExpired {
			t.Fatalf("7 days and a second after issue: %+v", f)
		}
	})
}

// Bad time rules are BAD_USER_INPUT naming the field; nothing is written.
func TestTimeRuleBounds(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		before := w.count(&models.Campaign{}, "1 = 1")
		for _, tt := range []struct {
			field string
			in    services.CreateCampaignInput
		}{
			{"dailyWindow", services.CreateCampaignInput{DailyWindow: &services.DailyWindow{From: 600, To: 600}}},
			{"validDaysAfterIssue", services.CreateCampaignInput{ValidDaysAfterIssue: int64p(0)}},
			{"weekdays", services.CreateCampaignInput{Weekdays: []time.Weekday{time.Monday, time.Monday}}},
		} {
			in := tt.in
			in.Name, in.Type, in.Value, in.TotalQuantity = "bad", models.CampaignCash, 100, 1
			in.ValidFrom, in.ValidTo = w.clock.Now(), w.clock.Now().AddDate(0, 1, 0)
			_, err := w.svc.Campaigns.Create(context.Background(), w.admin, in)
			var se *services.Error
			if !errors.As(err, &se) || se.Code != "BAD_USER_INPUT" || !strings.Contains(se.Message, tt.field) {
				t.Fatalf("%s: %v", tt.field, err)
			}
		}
		if _, err := services.ParseDailyWindow("25:00", "02:00"); err == nil {
			t.Fatal("25:00 parsed")
		}
		if w.count(&models.Campaign{}, "1 = 1") != before {
			t.Fatal("a refused campaign was written")
		}
	})
}
