package httpapi_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/errcode"
	"coupond/httpapi"
	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestExports runs the exports through the real handler, with real tokens, on
// each database: who may download what, and the codes and statuses of
// refusals.
func TestExports(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		svc := services.New(db, services.Options{})
		m, err := svc.Merchants.Create(ctx, "acme", "Acme", "")
		must(t, err)
		admin := services.SystemActor(m.ID)
		_, err = svc.Stores.Create(ctx, admin, services.CreateStoreInput{Code: "S1", Name: "One"})
		must(t, err)
		now := time.Now().UTC()
		camp, err := svc.Campaigns.Create(ctx, admin, services.CreateCampaignInput{Name: "c", Type: models.CampaignCash,
			Value: 100, TotalQuantity: 10, ValidFrom: now.Add(-time.Hour), ValidTo: now.Add(24 * time.Hour)})
		must(t, err)
		issued, err := svc.Campaigns.IssueCoupons(ctx, admin, services.IssueInput{CampaignID: camp.ID, Count: 3})
		must(t, err)
		token := func(role models.Role, stores ...string) string {
			tok, _, err := svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: m.ID, Role: role, StoreCodes: stores})
			must(t, err)
			return tok
		}
		finance, clerk, app := token(models.RoleFinance), token(models.RoleClerk, "S1"), token(models.RoleApp)
		h := httpapi.NewExportHandler(svc, slog.New(slog.DiscardHandler))
		get := func(token, url string) *httptest.ResponseRecorder {
			r := httptest.NewRequest(http.MethodGet, url, nil)
			if token != "" {
				r.Header.Set("Authorization", "Bearer "+token)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			return w
		}
		coupons := "/export/coupons.csv?campaignId=" + strconv.FormatInt(camp.ID, 10)
		today := now.Format("2006-01-02")

		t.Run("finance downloads the codes", func(t *testing.T) {
			w := get(finance, coupons)
			if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/csv") {
				t.Fatalf("HTTP %d %s", w.Code, w.Body.String())
			}
			for _, c := range issued.Codes {
				if !strings.Contains(w.Body.String(), c) {
					t.Fatalf("code %s missing from %s", c, w.Body.String())
				}
			}
		})
		t.Run("the ledger names the operator", func(t *testing.T) {
			plain, _, err := svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: m.ID, Role: models.RoleClerk,
				StoreCodes: []string{"S1"}, Name: "till 7"})
			must(t, err)
			till, err := svc.Tokens.Authenticate(ctx, plain)
			must(t, err)
			red, err := svc.Redemptions.Redeem(ctx, till, services.RedeemInput{Code: issued.Codes[0], StoreID: till.StoreIDs[0],
				RequestID: "export-op-1", OrderAmount: 500})
			must(t, err)
			sys, err := svc.Redemptions.Redeem(ctx, admin, services.RedeemInput{Code: issued.Codes[1], StoreID: till.StoreIDs[0],
				RequestID: "export-op-2", OrderAmount: 500})
			must(t, err)
			// The operator keeps its column (14th); the use and the
			// customer were added after it.
			for _, tt := range []struct{ lang, header string }{{"", "operator,use_no,customer_ref"}, {"zh", "操作员,第几次使用,客户"}} {
				w := get(finance, "/export/redemptions.csv?lang="+tt.lang)
				lines := strings.Split(strings.TrimSpace(strings.TrimPrefix(w.Body.String(), "\xef\xbb\xbf")), "\n")
				if w.Code != http.StatusOK || len(lines) != 3 || !strings.HasSuffix(strings.TrimSpace(lines[0]), ","+tt.header) ||
					strings.Count(lines[0], ",") != 15 {
					t.Fatalf("HTTP %d %s", w.Code, w.Body.String())
				}
				rows := map[string]string{}
				for _, l := range lines[1:] {
					cells := strings.Split(strings.TrimSpace(l), ",")
					rows[cells[0]] = cells[13]
					if cells[14] != "1" || cells[15] != "" {
						t.Fatalf("use and customer of %s: %q, %q; want 1 and none", cells[0], cells[14], cells[15])
					}
				}
				if rows[red.RedeemNo] != "till 7" || rows[sys.RedeemNo] != "" {
					t.Fatalf("operators %v, want till 7 for %s and none for %s", rows, red.RedeemNo, sys.RedeemNo)
				}
			}
		})
		t.Run("the ledger shows each use of a card and its customer; the codes show uses total and left", func(t *testing.T) {
			three := int64(3)
			card, err := svc.Campaigns.Create(ctx, admin, services.CreateCampaignInput{Name: "card", Type: models.CampaignCash,
				Value: 100, TotalQuantity: 10, ValidFrom: now.Add(-time.Hour), ValidTo: now.Add(24 * time.Hour), UsesPerCoupon: &three})
			must(t, err)
			cards, err := svc.Campaigns.IssueCoupons(ctx, admin, services.IssueInput{CampaignID: card.ID, Count: 1})
			must(t, err)
			s1, err := svc.Stores.ByCode(ctx, m.ID, "S1")
			must(t, err)
			uses := map[string]string{}
			for i := range 2 {
				red, err := svc.Redemptions.Redeem(ctx, admin, services.RedeemInput{Code: cards.Codes[0], StoreID: s1.ID,
					RequestID: fmt.Sprintf("export-use-%d", i), OrderAmount: 500, CustomerRef: "member-9"})
				must(t, err)
				uses[red.RedeemNo] = fmt.Sprint(i + 1)
			}
			w := get(finance, "/export/redemptions.csv")
			recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(w.Body.String(), "\xef\xbb\xbf"))).ReadAll()
			must(t, err)
			seen := 0
			for _, r := range recs[1:] {
				if want, ok := uses[r[0]]; ok {
					seen++
					if r[14] != want || r[15] != "member-9" {
						t.Fatalf("ledger row %v: use %q customer %q, want %s and member-9", r, r[14], r[15], want)
					}
				}
			}
			if seen != 2 {
				t.Fatalf("%d of the card's uses in the ledger, want 2", seen)
			}
			w = get(finance, "/export/coupons.csv?campaignId="+strconv.FormatInt(card.ID, 10))
			recs, err = csv.NewReader(strings.NewReader(strings.TrimPrefix(w.Body.String(), "\xef\xbb\xbf"))).ReadAll()
			must(t, err)
			if want := "code,formatted,status,customer,issued at,uses total,uses left"; strings.Join(recs[0], ",") != want {
				t.Fatalf("codes header %q, want %q", strings.Join(recs[0], ","), want)
			}
			if len(recs) != 2 || recs[1][0] != cards.Codes[0] || recs[1][5] != "3" || recs[1][6] != "1" {
				t.Fatalf("codes %v, want the card with 3 uses, 1 left", recs)
			}
		})
		t.Run("statements as xlsx", func(t *testing.T) {
			w := get(finance, "/export/statements.xlsx?from="+today+"&to="+today)
			if w.Code != http.StatusOK || !strings.Contains(w.Header().Get("Content-Type"), "spreadsheetml") {
				t.Fatalf("HTTP %d %s", w.Code, w.Header().Get("Content-Type"))
			}
		})
		t.Run("statements keep their columns and add the closing's at the end", func(t *testing.T) {
			w := get(finance, "/export/statements.csv?from="+today+"&to="+today)
			lines := strings.Split(strings.TrimSpace(strings.TrimPrefix(w.Body.String(), "\xef\xbb\xbf")), "\n")
			want := "day,store code,store,campaign,redeemed,redeemed amount (yuan),refunded,refunded amount (yuan),net,net amount (yuan)," +
				"closed,expired,expired value (yuan),voided,adjusts closed day"
			if w.Code != http.StatusOK || strings.TrimSpace(lines[0]) != want {
				t.Fatalf("HTTP %d header %q", w.Code, lines[0])
			}
			for _, l := range lines[1:] {
				if cells := strings.Split(strings.TrimSpace(l), ","); len(cells) != 15 || cells[10] != "no" {
					t.Fatalf("row %q", l)
				}
			}
		})
		refusals := []struct {
			name, token, url, code string
		}{
			{"clerk may not export coupons", clerk, coupons, errcode.Forbidden},
			{"a mini-program may not export coupons", app, coupons, errcode.Forbidden},
			{"a mini-program may not export the ledger", app, "/export/redemptions.csv", errcode.Forbidden},
			{"a mini-program may not export statements", app, "/export/statements.csv?from=" + today + "&to=" + today, errcode.Forbidden},
			{"a mini-program may not export findings", app, "/export/findings.csv", errcode.Forbidden},
			{"no token", "", "/export/statements.csv?from=" + today + "&to=" + today, errcode.Unauthenticated},
			{"unknown token", "cpd_nope", coupons, errcode.Unauthenticated},
			{"campaign id missing", finance, "/export/coupons.csv", errcode.BadUserInput},
			{"store id not an id", finance, "/export/redemptions.csv?storeId=x", errcode.BadUserInput},
			{"time not a time", finance, "/export/findings.csv?from=yesterday", errcode.BadUserInput},
			{"unknown campaign", finance, "/export/coupons.csv?campaignId=999999", errcode.NotFound},
		}
		for _, tt := range refusals {
			t.Run(tt.name, func(t *testing.T) {
				w := get(tt.token, tt.url)
				var body struct {
					Errors []struct{ Extensions map[string]any }
				}
				must(t, json.Unmarshal(w.Body.Bytes(), &body))
				if w.Code != errcode.Status(tt.code) || len(body.Errors) != 1 || body.Errors[0].Extensions["code"] != tt.code {
					t.Fatalf("HTTP %d %s, want %d %s", w.Code, w.Body.String(), errcode.Status(tt.code), tt.code)
				}
			})
		}
		t.Run("database down", func(t *testing.T) {
			sqlDB, err := db.DB()
			must(t, err)
			must(t, sqlDB.Close())
			w := get(finance, coupons)
			if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" ||
				!strings.Contains(w.Body.String(), `"`+errcode.Unavailable+`"`) {
				t.Fatalf("HTTP %d Retry-After %q %s", w.Code, w.Header().Get("Retry-After"), w.Body.String())
			}
		})
	})
}
