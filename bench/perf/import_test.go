package perf

import (
	"context"
	"os"
	"strconv"
	"testing"

	"coupond/bench/harness"
)

// TestUploadImport smokes the import scenario against a running coupond
// (BENCH_IMPORT_URL, with the ADMIN token BENCH_IMPORT_TOKEN) with
// BENCH_IMPORT_N codes (20,000 by default; the benchmark uploads 1,000,000).
// Without a server it is skipped.
func TestUploadImport(t *testing.T) {
	url, tok := os.Getenv("BENCH_IMPORT_URL"), os.Getenv("BENCH_IMPORT_TOKEN")
	if url == "" || tok == "" {
		t.Skip("BENCH_IMPORT_URL and BENCH_IMPORT_TOKEN name no server")
	}
	n := 20_000
	if s := os.Getenv("BENCH_IMPORT_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	ctx := context.Background()
	id, err := ImportCampaign(ctx, &harness.Client{URL: url, Token: tok}, "import", n)
	if err != nil {
		t.Fatal(err)
	}
	run, err := UploadImport(ctx, url, tok, id, "smoke-"+id, n, 100)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d codes: %d imported, %d rejected, %d batches in %.2f s (first batch %.2f s)", n, run.Imported, run.Rejected,
		run.Batches, run.Seconds, run.FirstBatchSeconds)
}
