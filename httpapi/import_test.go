package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
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

type progress struct {
	Batch, FirstLine, LastLine, Offset, Lines, Imported, Rejected int64
	RejectedLines                                                 []services.ImportRejection
	Done                                                          bool
	Error                                                         *struct{ Code, Message string }
}

// The CSV upload streams a file of 25,000 lines through batches of 10,000,
// reports each rejected line by its line number, and resumes by request id
// without importing anything twice.
func TestImportUpload(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		svc := services.New(db, services.Options{})
		m, err := svc.Merchants.Create(ctx, "acme", "Acme", "")
		must(t, err)
		admin := services.SystemActor(m.ID)
		now := time.Now().UTC()
		camp, err := svc.Campaigns.Create(ctx, admin, services.CreateCampaignInput{Name: "c", Type: models.CampaignCash,
			Value: 100, TotalQuantity: 100_000, ValidFrom: now.Add(-time.Hour), ValidTo: now.Add(24 * time.Hour),
			CodeSource: models.CodeImported})
		must(t, err)
		token := func(role models.Role, stores ...string) string {
			tok, _, err := svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: m.ID, Role: role})
			must(t, err)
			return tok
		}
		adminTok, financeTok, appTok := token(models.RoleAdmin), token(models.RoleFinance), token(models.RoleApp)
		srv := httptest.NewServer(httpapi.NewImportHandler(svc, slog.New(slog.DiscardHandler)))
		defer srv.Close()

		var b strings.Builder
		b.WriteString("code,customer\n")
		want := map[int64]services.ImportRejectReason{}
		for i := 2; i <= 25_001; i++ { // line i of the file
			switch {
			case i%1000 == 7: // 25 repeats of line 2's code, across batches
				b.WriteString("csv-000002\n")
				want[int64(i)] = services.ImportDuplicate
				if i == 10_007 || i == 20_007 {
					// the first in its batch: imported by an earlier batch
					want[int64(i)] = services.ImportExists
				}
			case i%5000 == 9: // 5 bad codes
				b.WriteString("bad!\n")
				want[int64(i)] = services.ImportInvalid
			case i == 3:
				fmt.Fprintf(&b, "csv-%06d,member-1\n", i)
			default:
				fmt.Fprintf(&b, "csv-%06d\n", i)
			}
		}
		file := b.String()
		post := func(tok, query, body string) (*http.Response, []progress) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/import/coupons.csv?"+query, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", "text/csv")
			resp, err := http.DefaultClient.Do(req)
			must(t, err)
			defer resp.Body.Close()
			var out []progress
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 8<<20)
			for sc.Scan() {
				var p progress
				if resp.StatusCode == http.StatusOK {
					must(t, json.Unmarshal(sc.Bytes(), &p))
				}
				out = append(out, p)
			}
			return resp, out
		}
		q := fmt.Sprintf("campaignId=%d&requestId=up-1", camp.ID)
		resp, ps := post(adminTok, q, file)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" || len(ps) != 4 {
			t.Fatalf("upload: %d %s, %d progress lines", resp.StatusCode, resp.Header.Get("Content-Type"), len(ps))
		}
		got := map[int64]services.ImportRejectReason{}
		for i, p := range ps[:3] {
			if p.Batch != int64(i+1) || p.Error != nil {
				t.Fatalf("batch %d: %+v", i+1, p)
			}
			for _, r := range p.RejectedLines {
				got[r.Line] = r.Reason
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("rejected lines %v, want %v", got, want)
		}
		last := ps[3]
		if !last.Done || last.Lines != 25_000 || last.Rejected != int64(len(want)) || last.Imported != 25_000-int64(len(want)) {
			t.Fatalf("last line: %+v (want %d rejected)", last, len(want))
		}
		var n int64
		must(t, db.Model(&models.Coupon{}).Where("campaign_id = ?", camp.ID).Count(&n).Error)
		if n != last.Imported {
			t.Fatalf("%d coupons, want %d", n, last.Imported)
		}
		var bound int64
		must(t, db.Model(&models.Coupon{}).Where("code = 'CSV000003' AND customer_ref = 'member-1'").Count(&bound).Error)
		if bound != 1 {
			t.Fatal("the customer column was not imported")
		}

		// The whole file again: every batch replayed, nothing written.
		_, again := post(adminTok, q, file)
		if len(again) != 4 || again[3].Imported != last.Imported || again[3].Rejected != last.Rejected {
			t.Fatalf("repeat: %+v", again[len(again)-1])
		}
		// The rest of the file from where batch 1 ended.
		_, rest := post(adminTok, fmt.Sprintf("%s&batch=2&line=%d", q, ps[0].LastLine+1), file[ps[0].Offset:])
		if len(rest) != 3 || rest[0].Batch != 2 || rest[2].Imported != last.Imported-ps[0].Imported {
			t.Fatalf("resume: %+v", rest)
		}
		must(t, db.Model(&models.Coupon{}).Where("campaign_id = ?", camp.ID).Count(&n).Error)
		if n != last.Imported {
			t.Fatalf("resuming wrote: %d coupons, want %d", n, last.Imported)
		}

		// Refusals answer before anything is read.
		for _, tt := range []struct {
			tok, query string
			status     int
		}{
			{financeTok, q, http.StatusForbidden},
			{appTok, q, http.StatusForbidden},
			{"cpd_nope", q, http.StatusUnauthorized},
			{adminTok, fmt.Sprintf("campaignId=%d", camp.ID), http.StatusBadRequest},
			{adminTok, "requestId=x", http.StatusBadRequest},
		} {
			if resp, _ := post(tt.tok, tt.query, "ABCDEFG\n"); resp.StatusCode != tt.status {
				t.Fatalf("%s as %.8s: %d, want %d", tt.query, tt.tok, resp.StatusCode, tt.status)
			}
		}
	})
}

// The upload is held to importCoupons' standard at the scale: a file
// of 100,000 lines, 10 batches, with 100 planted repeats (50 of a code on an
// earlier line of the file, in the same batch or an earlier one, and 50 of
// codes the merchant had before the upload) reports exactly those 100 lines,
// each with its reason, and writes everything else once.
func TestImportUploadReportsExactlyTheDuplicates(t *testing.T) {
	if raceEnabled {
		t.Skip("run without the race detector by scripts/test.sh")
	}
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		svc := services.New(db, services.Options{})
		m, err := svc.Merchants.Create(ctx, "acme", "Acme", "")
		must(t, err)
		admin := services.SystemActor(m.ID)
		now := time.Now().UTC()
		camp, err := svc.Campaigns.Create(ctx, admin, services.CreateCampaignInput{Name: "c", Type: models.CampaignCash,
			Value: 100, TotalQuantity: 200_000, ValidFrom: now.Add(-time.Hour), ValidTo: now.Add(24 * time.Hour),
			CodeSource: models.CodeImported})
		must(t, err)
		// 50 codes the merchant already has.
		existing := make([]string, 50)
		for i := range existing {
			existing[i] = fmt.Sprintf("OLD%06d", i)
		}
		_, err = svc.Campaigns.ImportCoupons(ctx, admin, services.ImportInput{CampaignID: camp.ID, Codes: existing})
		must(t, err)
		tok, _, err := svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: m.ID, Role: models.RoleAdmin})
		must(t, err)
		srv := httptest.NewServer(httpapi.NewImportHandler(svc, slog.New(slog.DiscardHandler)))
		defer srv.Close()

		const n = 100_000
		var b strings.Builder
		want := map[int64]services.ImportRejectReason{}
		for i := int64(1); i <= n; i++ { // line i of the file; batch k holds lines 10,000(k-1)+1 to 10,000k
			switch {
			case i%2000 == 1000 && i > 2000:
				// A repeat of the code on line i-1499: 40 whose original
				// is in the same batch, 9 in the batch before.
				fmt.Fprintf(&b, "up-%06d\n", i-1499)
				want[i] = services.ImportDuplicate
				if (i-1499-1)/10_000 != (i-1)/10_000 {
					want[i] = services.ImportExists
				}
			case i == n-1:
				// A repeat of line 5, written differently, in the last batch.
				b.WriteString(" Up 000005\n")
				want[i] = services.ImportExists
			case i%2000 == 1500:
				// A code the merchant had before the upload (lower case).
				fmt.Fprintf(&b, "old%06d\n", (i-1500)/2000)
				want[i] = services.ImportExists
			default:
				fmt.Fprintf(&b, "up-%06d\n", i)
			}
		}
		if len(want) != 100 {
			t.Fatalf("the file plants %d repeats, want 100", len(want))
		}
		req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/import/coupons.csv?campaignId=%d&requestId=big-1", srv.URL, camp.ID),
			strings.NewReader(b.String()))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("upload: HTTP %d", resp.StatusCode)
		}
		got := map[int64]services.ImportRejectReason{}
		var last progress
		batches := 0
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			var p progress
			must(t, json.Unmarshal(sc.Bytes(), &p))
			if p.Error != nil {
				t.Fatalf("upload: %s: %s", p.Error.Code, p.Error.Message)
			}
			for _, r := range p.RejectedLines {
				got[r.Line] = r.Reason
			}
			if !p.Done {
				batches++
			}
			last = p
		}
		must(t, sc.Err())
		var diff []string
		for l, r := range want {
			if got[l] != r {
				diff = append(diff, fmt.Sprintf("line %d: got %q, want %q", l, got[l], r))
			}
		}
		for l, r := range got {
			if _, ok := want[l]; !ok {
				diff = append(diff, fmt.Sprintf("line %d: got %q, want imported", l, r))
			}
		}
		if len(diff) > 0 {
			t.Fatalf("%d lines differ: %v", len(diff), diff)
		}
		if !last.Done || batches != 10 || last.Lines != n || last.Rejected != 100 || last.Imported != n-100 {
			t.Fatalf("last line %+v after %d batches; want %d imported, 100 rejected in 10 batches", last, batches, n-100)
		}
		var count int64
		must(t, db.Model(&models.Coupon{}).Where("campaign_id = ?", camp.ID).Count(&count).Error)
		if count != 50+n-100 {
			t.Fatalf("%d coupons, want %d", count, 50+n-100)
		}
	})
}
