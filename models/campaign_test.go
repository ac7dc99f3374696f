package models_test

import (
	"fmt"
	"testing"
	"time"

	"coupond/internal/testdb"
	"coupond/models"
)

// Campaign.Discount and its SQL form, which the one-statement redemption
// computes on PostgreSQL, agree on every campaign type, at caps, truncation,
// zero and the largest order amount.
func TestDiscountSQL(t *testing.T) {
	db := testdb.Postgres(t)
	campaigns := []models.Campaign{
		{Type: models.CampaignCash, Value: 1000},
		{Type: models.CampaignDiscount, Value: 15},
		{Type: models.CampaignDiscount, Value: 50, MaxDiscount: 800},
		{Type: models.CampaignDiscount, Value: 100, MaxDiscount: 0},
		{Type: models.CampaignExchange, Value: 1800},
	}
	amounts := []int64{0, 1, 99, 600, 999, 1000, 1001, 5000, 10_000_000_000}
	for _, c := range campaigns {
		for _, amount := range amounts {
			t.Run(fmt.Sprintf("%s-%d-%d/%d", c.Type, c.Value, c.MaxDiscount, amount), func(t *testing.T) {
				got, err := models.DiscountInSQL(db, c, amount)
				if err != nil {
					t.Fatal(err)
				}
				if want := c.Discount(amount); got != want {
					t.Fatalf("SQL gives %d, Go %d", got, want)
				}
			})
		}
	}
}

// MoveCoupon takes only the state machine's edges: any other pair of states
// is refused before the database is asked.
func TestMoveCouponRefusesIllegalEdges(t *testing.T) {
	db := testdb.SQLite(t)
	all := []models.CouponStatus{models.CouponUnused, models.CouponRedeeming, models.CouponRedeemed,
		models.CouponRefunded, models.CouponExpired, models.CouponVoided}
	legal := 0
	for _, from := range all {
		for _, to := range all {
			_, _, err := models.MoveCoupon(db, 1, "RD1", from, to, time.Now())
			if models.Legal(from, to) {
				legal++
				if err != nil {
					t.Errorf("%s -> %s: %v", from, to, err)
				}
			} else if err == nil {
				t.Errorf("%s -> %s is not an edge, yet MoveCoupon took it", from, to)
			}
		}
	}
	if legal != len(models.LegalEdges) {
		t.Fatalf("%d legal pairs, want the %d edges", legal, len(models.LegalEdges))
	}
}
