package services_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// BenchmarkIssueCoupons issues COUPOND_BENCH_ISSUE codes (for example
// 1000000) into one fresh campaign per iteration, through IssueCoupons, on
// SQLite and on the PostgreSQL named by TEST_DATABASE_URL. It is skipped
// without COUPOND_BENCH_ISSUE, so `go test -bench .` stays quick:
//
//	COUPOND_BENCH_ISSUE=1000000 go test -run '^$' -bench IssueCoupons/postgres -benchtime 1x ./services
func BenchmarkIssueCoupons(b *testing.B) {
	n, _ := strconv.ParseInt(os.Getenv("COUPOND_BENCH_ISSUE"), 10, 64)
	if n <= 0 {
		b.Skip("set COUPOND_BENCH_ISSUE to the number of codes to issue")
	}
	for _, d := range []struct {
		name string
		open func(testing.TB) *gorm.DB
	}{{"sqlite", testdb.SQLite}, {"postgres", testdb.Postgres}} {
		b.Run(d.name, func(b *testing.B) {
			db := d.open(b)
			ctx := context.Background()
			svc := services.New(db, services.Options{})
			m, err := svc.Merchants.Create(ctx, "bench", "Bench", "Asia/Shanghai")
			must(b, err)
			admin := services.SystemActor(m.ID)
			now := time.Now()
			for b.Loop() {
				b.StopTimer()
				camp, err := svc.Campaigns.Create(ctx, admin, services.CreateCampaignInput{Name: "bench", Type: models.CampaignCash,
					Value: 100, ValidFrom: now, ValidTo: now.Add(24 * time.Hour), TotalQuantity: n})
				must(b, err)
				b.StartTimer()
				res, err := svc.Campaigns.IssueCoupons(ctx, admin, services.IssueInput{CampaignID: camp.ID, Count: n})
				must(b, err)
				if res.Issued != n {
					b.Fatalf("issued %d, want %d", res.Issued, n)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "codes/s")
		})
	}
}
