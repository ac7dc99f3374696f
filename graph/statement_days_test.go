package graph_test

import (
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/graph"
	"coupond/internal/testdb"
	"coupond/models"
)

// Finance closes a day over the API; a correction that lands in the closed
// day afterwards shows as an adjustment on the day it is found, and the
// liability counts the unused coupons.
func TestCloseStatementDayOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		a := newAPI(t, db, graph.Options{})
		storeID, codes := a.setup(3)
		clerk := a.clerk("SH01")
		a.mustDo(t, clerk, redeemCoupon, redeemVars(codes[0], storeID, "today-1", 5000), nil)

		cst := time.FixedZone("CST", 8*3600)
		today := time.Now().In(cst).Format("2006-01-02")
		yesterday := time.Now().In(cst).AddDate(0, 0, -1).Format("2006-01-02")
		const closeDay = `mutation($d: String!) { closeStatementDay(input: {date: $d}) { closedDays stores { day closed } } }`
		if got := a.do(t, clerk, closeDay, map[string]any{"d": yesterday}, nil); len(got) != 1 || got[0] != "FORBIDDEN" {
			t.Fatalf("clerk closing a day: %v", got)
		}
		if got := a.do(t, a.finance, closeDay, map[string]any{"d": today}, nil); len(got) != 1 || got[0] != "BAD_USER_INPUT" {
			t.Fatalf("closing today: %v", got)
		}
		var closed struct {
			CloseStatementDay struct {
				ClosedDays []string
				Stores     []struct{ Closed bool }
			}
		}
		a.mustDo(t, a.finance, closeDay, map[string]any{"d": yesterday}, &closed)
		if len(closed.CloseStatementDay.ClosedDays) != 1 || closed.CloseStatementDay.ClosedDays[0] != yesterday ||
			len(closed.CloseStatementDay.Stores) != 0 {
			t.Fatalf("closed %+v", closed.CloseStatementDay)
		}

		// A correction moves today's redemption into the closed day; the job
		// books it as an adjustment on today.
		must(t, db.Exec("UPDATE redemption_flows SET finished_at = ? WHERE request_id = 'today-1'",
			time.Now().In(cst).AddDate(0, 0, -1).UTC()).Error)
		a.mustDo(t, a.admin, `mutation { runJob(input: {job: "daily-statement"}) { status } }`, nil, nil)
		var st struct {
			Statements struct {
				ClosedDays []string
				Stores     []struct {
					Day            string
					Stored, Closed bool
					RedeemedCount  int64
				}
				Lapsed      []struct{ Day string }
				Adjustments []struct {
					Day, ClosedDay, Figure string
					Store                  *struct{ Code string }
					Campaign               struct{ Name string }
					Count, Amount          int64
				}
			}
		}
		a.mustDo(t, a.finance, `query($f: String!, $t: String!) { statements(from: $f, to: $t) { closedDays
			stores { day stored closed redeemedCount } lapsed { day campaign { name } expiredCount expiredValue voidedCount }
			adjustments { day closedDay figure store { code } campaign { name } count amount } } }`,
			map[string]any{"f": yesterday, "t": today}, &st)
		s := st.Statements
		if len(s.Stores) != 0 || len(s.Lapsed) != 0 || len(s.ClosedDays) != 1 || len(s.Adjustments) != 1 {
			t.Fatalf("statement %+v", s)
		}
		adj := s.Adjustments[0]
		if adj.Day != today || adj.ClosedDay != yesterday || adj.Figure != "REDEEMED" || adj.Store == nil ||
			adj.Store.Code != "SH01" || adj.Campaign.Name != "Ten off" || adj.Count != 1 || adj.Amount != 1000 {
			t.Fatalf("adjustment %+v", adj)
		}

		const liability = `{ liability { unusedCount faceValue discountCouponsAt uncappedDiscountCount } }`
		if got := a.do(t, clerk, liability, nil, nil); len(got) != 1 || got[0] != "FORBIDDEN" {
			t.Fatalf("clerk reading the liability: %v", got)
		}
		var l struct {
			Liability struct {
				UnusedCount, FaceValue, UncappedDiscountCount int64
				DiscountCouponsAt                             string
			}
		}
		a.mustDo(t, a.finance, liability, nil, &l)
		if l.Liability.UnusedCount != 2 || l.Liability.FaceValue != 2000 || l.Liability.DiscountCouponsAt != "CAP" {
			t.Fatalf("liability %+v", l.Liability)
		}
		var events int64
		must(t, db.Model(&models.AuditEvent{}).Where("action = 'statement.close'").Count(&events).Error)
		if events != 1 {
			t.Fatalf("%d statement.close events, want 1", events)
		}
	})
}
