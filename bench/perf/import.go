package perf

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"coupond/bench/harness"
)

// ImportLimitSeconds is the bound on importing 1,000,000 codes.
const ImportLimitSeconds = 30

// ImportRun is one upload of imported codes through POST /import/coupons.csv.
type ImportRun struct {
	Codes      int     `json:"codes"`
	Duplicates int     `json:"duplicates"`
	Imported   int64   `json:"imported"`
	Rejected   int64   `json:"rejected"`
	Batches    int     `json:"batches"`
	Seconds    float64 `json:"seconds"`
	// FirstBatchSeconds is when the first progress line arrived.
	FirstBatchSeconds float64 `json:"first_batch_seconds"`
}

// ImportCampaign creates an IMPORTED campaign of total codes and returns its id.
func ImportCampaign(ctx context.Context, c *harness.Client, name string, total int) (string, error) {
	var out struct {
		CreateCampaign struct{ ID string } `json:"createCampaign"`
	}
	now := time.Now().UTC()
	err := c.Do(ctx, `mutation($in: CreateCampaignInput!) { createCampaign(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": name, "type": "CASH", "value": 1000, "codeSource": "IMPORTED",
			"validFrom": now.Add(-24 * time.Hour).Format(time.RFC3339), "validTo": now.Add(365 * 24 * time.Hour).Format(time.RFC3339),
			"totalQuantity": total}}, &out)
	return out.CreateCampaign.ID, err
}

// UploadImport streams a CSV of n codes, every (n/dups)th line a repeat of
// an earlier code, to baseURL's upload endpoint as admin token, reads the
// progress lines, and checks that exactly the repeats were rejected.
func UploadImport(ctx context.Context, baseURL, token, campaign, requestID string, n, dups int) (ImportRun, error) {
	run := ImportRun{Codes: n, Duplicates: dups}
	every := n + 1
	if dups > 0 {
		every = n / dups
	}
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 1<<16)
		// No header (it is optional): the file is exactly n lines, and the
		// upload's limit counts lines.
		for i := 1; i <= n; i++ {
			if i%every == 0 && i/every <= dups {
				fmt.Fprintf(w, "IMP%sX%09d\n", campaign, i-1) // the line before's code again
			} else {
				fmt.Fprintf(w, "IMP%sX%09d\n", campaign, i)
			}
		}
		_ = pw.CloseWithError(w.Flush())
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		fmt.Sprintf("%s/import/coupons.csv?campaignId=%s&requestId=%s", baseURL, campaign, requestID), pr)
	if err != nil {
		return run, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "text/csv")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return run, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return run, fmt.Errorf("upload: HTTP %d: %.300s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	done := false
	for sc.Scan() {
		var p struct {
			Imported, Rejected int64
			Done               bool
			Error              *struct{ Code, Message string }
		}
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			return run, err
		}
		if p.Error != nil {
			return run, fmt.Errorf("upload: %s: %s", p.Error.Code, p.Error.Message)
		}
		if run.Batches == 0 {
			run.FirstBatchSeconds = round(time.Since(start).Seconds())
		}
		if p.Done {
			done = true
		} else {
			run.Batches++
		}
		run.Imported, run.Rejected = p.Imported, p.Rejected
	}
	run.Seconds = round(time.Since(start).Seconds())
	if err := sc.Err(); err != nil {
		return run, err
	}
	if !done {
		return run, fmt.Errorf("upload: the stream ended without its done line")
	}
	if run.Rejected != int64(dups) || run.Imported != int64(n-dups) {
		return run, fmt.Errorf("upload: imported %d, rejected %d; want %d and %d", run.Imported, run.Rejected, n-dups, dups)
	}
	return run, nil
}

// importScenario creates an IMPORTED campaign and uploads n codes with 100
// repeats to the fixture's server.
func importScenario(ctx context.Context, cfg Config, fx *harness.Fixture, n int) (Scenario, error) {
	cfg.logf("import of %d codes through the CSV upload", n)
	id, err := ImportCampaign(ctx, fx.Admin, "import", n)
	if err != nil {
		return Scenario{}, err
	}
	sm := harness.StartSampler(fx.Server, 200*time.Millisecond)
	run, err := UploadImport(ctx, fx.Server.URL(), fx.Admin.Token, id, "bench-import", n, 100)
	s := Scenario{Name: fmt.Sprintf("import of %d codes (CSV upload, <= %d s)", n, ImportLimitSeconds), During: sm.Stop(),
		Extra: importExtra(run)}
	return s, err
}

// importExtra is the import row's figures as the report reads them.
func importExtra(run ImportRun) map[string]any {
	return map[string]any{"codes": run.Codes, "seconds": run.Seconds, "first_batch_seconds": run.FirstBatchSeconds,
		"rejected": run.Rejected, "imported": run.Imported, "within_limit": run.Seconds <= ImportLimitSeconds}
}
