package httpapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/csv"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/httpapi"
	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// exportFixture is a merchant with a store, a campaign, coupons, a ledger
// and findings written straight to the tables, so their times can be set.
type exportFixture struct {
	svc      *services.Services
	h        http.Handler
	merchant *models.Merchant
	store    *models.Store
	camp     *models.Campaign
	finance  string
	till     int64
	coupons  []models.Coupon
}

func newExportFixture(t *testing.T, ctx context.Context, db *gorm.DB, svc *services.Services, code string, coupons int) *exportFixture {
	t.Helper()
	m, err := svc.Merchants.Create(ctx, code, code, "Asia/Shanghai")
	must(t, err)
	admin := services.SystemActor(m.ID)
	st, err := svc.Stores.Create(ctx, admin, services.CreateStoreInput{Code: "S-" + code, Name: "Store " + code})
	must(t, err)
	now := time.Now().UTC()
	camp, err := svc.Campaigns.Create(ctx, admin, services.CreateCampaignInput{Name: "camp " + code, Type: models.CampaignCash,
		Value: 500, TotalQuantity: int64(coupons), ValidFrom: now.Add(-time.Hour), ValidTo: now.Add(24 * time.Hour)})
	must(t, err)
	_, err = svc.Campaigns.IssueCoupons(ctx, admin, services.IssueInput{CampaignID: camp.ID, Count: int64(coupons)})
	must(t, err)
	f := &exportFixture{svc: svc, h: httpapi.NewExportHandler(svc, slog.New(slog.DiscardHandler)), merchant: m, store: st, camp: camp}
	must(t, db.Where("merchant_id = ?", m.ID).Order("id").Find(&f.coupons).Error)
	f.finance, _, err = svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: m.ID, Role: models.RoleFinance})
	must(t, err)
	_, _, err = svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: m.ID, Role: models.RoleClerk,
		StoreCodes: []string{st.Code}, Name: "till " + code})
	must(t, err)
	must(t, db.Model(&models.APIToken{}).Where("merchant_id = ? AND name = ?", m.ID, "till "+code).Pluck("id", &f.till).Error)
	return f
}

// flows writes one redemption flow per time, each on a coupon of its own
// (from the nth coupon on): SUCCEEDED at the time, every other one by the
// till, every third REJECTED.
func (f *exportFixture) flows(t *testing.T, db *gorm.DB, first int, times []time.Time) {
	t.Helper()
	rows := make([]models.RedemptionFlow, len(times))
	for i, at := range times {
		c := f.coupons[first+i]
		fl := models.RedemptionFlow{MerchantID: f.merchant.ID, RedeemNo: fmt.Sprintf("R-%s-%d", f.merchant.Code, first+i),
			Operation: models.OpRedeem, RequestID: fmt.Sprintf("req-%d", first+i), Fingerprint: "fp", CouponID: c.ID,
			StoreID: f.store.ID, Status: models.FlowSucceeded, OrderAmount: 1000 + int64(i), DiscountAmount: 500,
			CreatedAt: at.UTC(), UpdatedAt: at.UTC()}
		finished := at.UTC()
		fl.FinishedAt = &finished
		if i%2 == 0 {
			fl.OperatorID = &f.till
		}
		if i%3 == 0 {
			reason := "MIN_SPEND"
			fl.Status, fl.RejectReason, fl.DiscountAmount = models.FlowRejected, &reason, 0
		}
		rows[i] = fl
	}
	must(t, db.CreateInBatches(rows, 500).Error)
}

// findings writes one finding per time.
func (f *exportFixture) findings(t *testing.T, db *gorm.DB, times []time.Time) {
	t.Helper()
	fs := make([]models.Finding, len(times))
	for i, at := range times {
		no := fmt.Sprintf("F-%s-%d", f.merchant.Code, i)
		fs[i] = models.Finding{MerchantID: f.merchant.ID, Kind: models.FindingRedemptionWithoutOrder, RedeemNo: &no,
			Details: "finding " + no, DedupeKey: no, Status: models.FindingOpen, CreatedAt: at.UTC()}
	}
	_, err := models.InsertFindings(db, fs)
	must(t, err)
}

func (f *exportFixture) get(t *testing.T, url string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, url, nil)
	r.Header.Set("Authorization", "Bearer "+f.finance)
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d %s", url, w.Code, w.Body.String())
	}
	return w
}

// records parses a CSV export without its header.
func records(t *testing.T, w *httptest.ResponseRecorder) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(w.Body.String(), "\xef\xbb\xbf"))).ReadAll()
	must(t, err)
	if len(recs) == 0 {
		t.Fatal("no header")
	}
	return recs[1:]
}

// TestExportRangesAgree asks every export for the same local days once as
// dates and once as RFC 3339 times, and checks they give the same rows: the
// rows of those days in the merchant's zone, and none of the instants just
// outside them.
func TestExportRangesAgree(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		svc := services.New(db, services.Options{})
		f := newExportFixture(t, ctx, db, svc, "acme", 8)
		sh, err := time.LoadLocation("Asia/Shanghai")
		must(t, err)
		// 2026-03-02 and 03-03 in Shanghai are [03-01T16:00Z, 03-03T16:00Z).
		start := time.Date(2026, 3, 2, 0, 0, 0, 0, sh)
		end := time.Date(2026, 3, 4, 0, 0, 0, 0, sh)
		times := []time.Time{start.Add(-time.Second), start, start.Add(20 * time.Hour), end.Add(-time.Second), end, end.Add(time.Hour)}
		inside := []bool{false, true, true, true, false, false}
		f.flows(t, db, 0, times)
		f.findings(t, db, times)
		// Issue times of the codes, one per time, the rest long before.
		for i, at := range times {
			must(t, db.Model(&models.Coupon{}).Where("id = ?", f.coupons[i].ID).Update("created_at", at.UTC()).Error)
		}
		must(t, db.Model(&models.Coupon{}).Where("id IN ?", []int64{f.coupons[6].ID, f.coupons[7].ID}).
			Update("created_at", start.AddDate(0, -1, 0).UTC()).Error)

		dates := "from=2026-03-02&to=2026-03-03"
		rfc := "from=" + url.QueryEscape(start.Format(time.RFC3339)) + "&to=" + url.QueryEscape(end.Format(time.RFC3339))
		rfcUTC := "from=" + start.UTC().Format(time.RFC3339) + "&to=" + end.UTC().Format(time.RFC3339)
		camp := "campaignId=" + strconv.FormatInt(f.camp.ID, 10) + "&"
		tests := []struct {
			name, path string
			key        int      // column holding the row's key
			want       []string // keys expected, in order
		}{
			{"redemptions", "/export/redemptions.csv?", 0, []string{"R-acme-3", "R-acme-2", "R-acme-1"}},
			{"findings", "/export/findings.csv?", 3, []string{"F-acme-3", "F-acme-2", "F-acme-1"}},
			{"coupons", "/export/coupons.csv?" + camp, 0, []string{f.coupons[1].Code, f.coupons[2].Code, f.coupons[3].Code}},
			// Redemptions 2 (SUCCEEDED, 03-02) and 3 (REJECTED, 03-03 23:59:59) and 1 (03-02 00:00, SUCCEEDED):
			// SUCCEEDED on 03-02 only, so one store line and one campaign line.
			{"statements", "/export/statements.csv?", 0, []string{"2026-03-02", "2026-03-02"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				byDate := records(t, f.get(t, tt.path+dates))
				for _, q := range []string{rfc, rfcUTC} {
					byTime := records(t, f.get(t, tt.path+q))
					if fmt.Sprint(byDate) != fmt.Sprint(byTime) {
						t.Fatalf("dates gave\n%v\ntimes %s gave\n%v", byDate, q, byTime)
					}
				}
				var got []string
				for _, r := range byDate {
					got = append(got, r[tt.key])
				}
				if fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Fatalf("rows %v, want %v (inside: %v)", got, tt.want, inside)
				}
			})
		}
		t.Run("statements count the day's redemptions", func(t *testing.T) {
			rows := records(t, f.get(t, "/export/statements.csv?"+dates))
			// Store line, then campaign line: two SUCCEEDED redemptions of 5.00.
			for _, r := range rows {
				if r[4] != "2" || r[5] != "10.00" {
					t.Fatalf("statement row %v, want 2 redeemed for 10.00", r)
				}
			}
		})
		t.Run("statements refuse a time that is not a local midnight", func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/export/statements.csv?from="+start.Add(time.Hour).Format(time.RFC3339)+"&to=2026-03-03", nil)
			r.Header.Set("Authorization", "Bearer "+f.finance)
			w := httptest.NewRecorder()
			f.h.ServeHTTP(w, r)
			if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "BAD_USER_INPUT") {
				t.Fatalf("HTTP %d %s", w.Code, w.Body.String())
			}
		})
	})
}

// TestExportLargeLedger exports 5,000 redemptions, 2,000 findings and 5,000
// codes next to another merchant's, and checks that the ledger export has
// the rows the GraphQL ledger pages through (services.Coupons.Redemptions,
// which its resolver calls), that no export shows the other merchant's rows,
// and that each export runs a handful of queries whatever its size: a lookup
// per row or per page would run hundreds.
func TestExportLargeLedger(t *testing.T) {
	const n = 5000
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		svc := services.New(db, services.Options{})
		a := newExportFixture(t, ctx, db, svc, "alpha", n)
		b := newExportFixture(t, ctx, db, svc, "beta", 10)
		base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		times := make([]time.Time, n)
		for i := range times {
			times[i] = base.Add(time.Duration(i) * time.Minute)
		}
		a.flows(t, db, 0, times)
		a.findings(t, db, times[:2000])
		b.flows(t, db, 0, times[:10])
		b.findings(t, db, times[:10])

		// The ledger as GraphQL pages it, reduced to a count and a checksum
		// of the columns the export shows.
		finance, err := svc.Tokens.Authenticate(ctx, a.finance)
		must(t, err)
		sum := sha256.New()
		var pages, count int
		for after := ""; ; pages++ {
			page, err := svc.Coupons.Redemptions(ctx, finance, services.RedemptionFilter{}, services.PageArgs{First: services.MaxPageSize, After: after})
			must(t, err)
			for _, fl := range page.Items {
				fmt.Fprintf(sum, "%s|%s|%s|%d|%d\n", fl.RedeemNo, fl.RequestID, fl.Status, fl.OrderAmount, fl.DiscountAmount)
				count++
			}
			if !page.HasNextPage {
				break
			}
			after = services.EncodeCursor(page.Items[len(page.Items)-1].ID)
		}
		wantSum := fmt.Sprintf("%x", sum.Sum(nil))
		if count != n {
			t.Fatalf("ledger has %d rows, want %d", count, n)
		}

		var queries atomic.Int64
		countQuery := func(*gorm.DB) { queries.Add(1) }
		must(t, db.Callback().Query().Register("test:count_queries", countQuery))
		must(t, db.Callback().Row().Register("test:count_rows", countQuery))
		must(t, db.Callback().Raw().Register("test:count_raw", countQuery))
		t.Cleanup(func() {
			_ = db.Callback().Query().Remove("test:count_queries")
			_ = db.Callback().Row().Remove("test:count_rows")
			_ = db.Callback().Raw().Remove("test:count_raw")
		})
		// Authentication, the merchant, the export's own checks and one
		// batch: the same few queries for 10 rows or 10,000.
		const maxQueries = 6
		export := func(t *testing.T, url string) [][]string {
			t.Helper()
			queries.Store(0)
			rows := records(t, a.get(t, url))
			q := queries.Load()
			t.Logf("%s: %d rows, %d queries", url, len(rows), q)
			if q > maxQueries {
				t.Errorf("%s ran %d queries for %d rows, want at most %d", url, q, len(rows), maxQueries)
			}
			return rows
		}

		t.Run("ledger", func(t *testing.T) {
			rows := export(t, "/export/redemptions.csv")
			sum := sha256.New()
			operators := 0
			for _, r := range rows {
				if strings.Contains(r[0], "beta") || r[6] != a.store.Code {
					t.Fatalf("row %v is not alpha's", r)
				}
				if r[13] == "till alpha" {
					operators++
				}
				status := models.FlowStatus(r[3])
				order := strings.Replace(r[8], ".", "", 1)
				discount := strings.Replace(r[9], ".", "", 1)
				o, _ := strconv.ParseInt(order, 10, 64)
				d, _ := strconv.ParseInt(discount, 10, 64)
				fmt.Fprintf(sum, "%s|%s|%s|%d|%d\n", r[0], r[1], status, o, d)
			}
			if len(rows) != n || fmt.Sprintf("%x", sum.Sum(nil)) != wantSum {
				t.Fatalf("export has %d rows, checksum %x; the ledger %d rows, checksum %s", len(rows), sum.Sum(nil), count, wantSum)
			}
			if operators != n/2 {
				t.Fatalf("%d rows name the till, want %d", operators, n/2)
			}
			if rows[0][7] != a.coupons[n-1].Code || rows[n-1][7] != a.coupons[0].Code {
				t.Fatalf("coupon codes of newest and oldest rows: %s, %s", rows[0][7], rows[n-1][7])
			}
		})
		t.Run("ledger as xlsx", func(t *testing.T) {
			queries.Store(0)
			a.get(t, "/export/redemptions.xlsx")
			if q := queries.Load(); q > maxQueries {
				t.Errorf("xlsx ran %d queries, want at most %d", q, maxQueries)
			}
		})
		t.Run("findings", func(t *testing.T) {
			rows := export(t, "/export/findings.csv")
			if len(rows) != 2000 {
				t.Fatalf("%d findings, want 2000", len(rows))
			}
			for _, r := range rows {
				if !strings.HasPrefix(r[3], "F-alpha-") {
					t.Fatalf("row %v is not alpha's", r)
				}
			}
		})
		t.Run("codes", func(t *testing.T) {
			rows := export(t, "/export/coupons.csv?campaignId="+strconv.FormatInt(a.camp.ID, 10))
			if len(rows) != n || rows[0][0] != a.coupons[0].Code || rows[n-1][0] != a.coupons[n-1].Code {
				t.Fatalf("%d codes, want %d in issue order", len(rows), n)
			}
			beta := map[string]bool{}
			for _, c := range b.coupons {
				beta[c.Code] = true
			}
			for _, r := range rows {
				if beta[r[0]] {
					t.Fatalf("code %s is beta's", r[0])
				}
			}
		})
		t.Run("another merchant's campaign is not found", func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/export/coupons.csv?campaignId="+strconv.FormatInt(b.camp.ID, 10), nil)
			r.Header.Set("Authorization", "Bearer "+a.finance)
			w := httptest.NewRecorder()
			a.h.ServeHTTP(w, r)
			if w.Code != http.StatusNotFound {
				t.Fatalf("HTTP %d %s", w.Code, w.Body.String())
			}
		})
		t.Run("statements", func(t *testing.T) {
			// A statement is a grouped aggregate over stored and live days, so
			// it runs a few more queries than the others, but the same few
			// for five days as for two months: none per line or per name.
			queries.Store(0)
			rows := records(t, a.get(t, "/export/statements.csv?from=2026-03-01&to=2026-03-05"))
			few := queries.Load()
			queries.Store(0)
			long := records(t, a.get(t, "/export/statements.csv?from=2026-02-01&to=2026-03-31"))
			if many := queries.Load(); few > 12 || many != few || len(long) != len(rows) {
				t.Errorf("statements ran %d queries for %d rows and %d for %d rows, want the same at most 12",
					few, len(rows), many, len(long))
			}
			var redeemed int64
			for _, r := range rows {
				if r[1] != a.store.Code {
					t.Fatalf("row %v is not alpha's", r)
				}
				if r[3] == "(all)" {
					v, _ := strconv.ParseInt(r[4], 10, 64)
					redeemed += v
				}
			}
			// Every third flow is REJECTED; the rest succeeded.
			if want := int64(n - (n+2)/3); redeemed != want {
				t.Fatalf("statements count %d redemptions, want %d", redeemed, want)
			}
		})
	})
}
