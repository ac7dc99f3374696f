package httpapi_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/httpapi"
	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// TestUploadOutlivesTheServersReadTimeout: an upload whose lines arrive
// slower than the server's ReadTimeout and WriteTimeout allow for a whole
// request is imported, because the upload moves its deadlines on as its
// batches arrive. Cut at the server's timeout, a million codes on a busy
// host failed with "read the upload: i/o timeout".
func TestUploadOutlivesTheServersReadTimeout(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		svc := services.New(db, services.Options{})
		m, err := svc.Merchants.Create(ctx, "acme", "Acme", "")
		must(t, err)
		now := time.Now().UTC()
		camp, err := svc.Campaigns.Create(ctx, services.SystemActor(m.ID), services.CreateCampaignInput{Name: "c",
			Type: models.CampaignCash, Value: 100, TotalQuantity: 100, ValidFrom: now.Add(-time.Hour), ValidTo: now.Add(24 * time.Hour),
			CodeSource: models.CodeImported})
		must(t, err)
		tok, _, err := svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: m.ID, Role: models.RoleAdmin})
		must(t, err)
		srv := httptest.NewUnstartedServer(httpapi.NewImportHandler(svc, slog.New(slog.DiscardHandler)))
		srv.Config.ReadHeaderTimeout = 10 * time.Second
		srv.Config.ReadTimeout = 200 * time.Millisecond
		srv.Config.WriteTimeout = 200 * time.Millisecond
		srv.Start()
		defer srv.Close()

		// 20 lines over a second: five times the server's timeouts.
		body, feed := io.Pipe()
		go func() {
			_, _ = io.WriteString(feed, "code\n")
			for i := range 20 {
				time.Sleep(50 * time.Millisecond)
				_, _ = fmt.Fprintf(feed, "slow-%03d\n", i)
			}
			_ = feed.Close()
		}()
		req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/import/coupons.csv?campaignId=%d&requestId=slow-1", srv.URL, camp.ID), body)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("upload: HTTP %d %s", resp.StatusCode, b)
		}
		var last progress
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			must(t, json.Unmarshal(sc.Bytes(), &last))
		}
		if !last.Done || last.Imported != 20 || last.Error != nil {
			t.Fatalf("last line %+v, want done with 20 imported", last)
		}
		var n int64
		must(t, db.Model(&models.Coupon{}).Where("campaign_id = ?", camp.ID).Count(&n).Error)
		if n != 20 {
			t.Fatalf("%d coupons imported, want 20", n)
		}
	})
}

// TestExportOutlivesTheServersWriteTimeout: an export is written whole on a
// server whose WriteTimeout has passed before its first byte, because the
// export moves its write deadline on as its rows go out. Cut at the
// server's timeout, an export of millions of rows resting beside the tills
// would end mid-file.
func TestExportOutlivesTheServersWriteTimeout(t *testing.T) {
	const n = 2000
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		svc := services.New(db, services.Options{})
		f := newExportFixture(t, ctx, db, svc, "slow", n)
		times := make([]time.Time, n)
		for i := range times {
			times[i] = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
		}
		f.flows(t, db, 0, times)
		srv := httptest.NewUnstartedServer(f.h)
		srv.Config.WriteTimeout = time.Nanosecond
		srv.Start()
		defer srv.Close()
		get := func(path string) []byte {
			t.Helper()
			req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
			req.Header.Set("Authorization", "Bearer "+f.finance)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: HTTP %d, %d bytes, %v", path, resp.StatusCode, len(b), err)
			}
			return b
		}
		for _, path := range []string{"/export/redemptions.csv", fmt.Sprintf("/export/coupons.csv?campaignId=%d", f.camp.ID)} {
			recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(string(get(path)), "\xef\xbb\xbf"))).ReadAll()
			must(t, err)
			if len(recs) != n+1 {
				t.Fatalf("%s: %d lines, want %d and the header", path, len(recs), n)
			}
		}
		if b := get("/export/redemptions.xlsx"); len(b) < 1000 || !strings.HasPrefix(string(b), "PK") {
			t.Fatalf("redemptions.xlsx: %d bytes, not a workbook", len(b))
		}
	})
}
