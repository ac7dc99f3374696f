package perf

import (
	"strings"
	"testing"
)

// The import row reads the counts the scenario stores, whatever integer type
// they have: the upload's counts are int64, and a report that read them as 0
// called a correct import a miss (1,000,000 codes, "0 rejected").
func TestReportImportRow(t *testing.T) {
	run := ImportRun{Codes: 1_000_000, Duplicates: 100, Imported: 999_900, Rejected: 100, Seconds: 26.4}
	r := &Result{Scenarios: []Scenario{{Name: "import of 1000000 codes (CSV upload, <= 30 s)",
		Extra: importExtra(run)}}}
	md := r.Markdown("test")
	var row string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| import 1000000 codes") {
			row = l
		}
	}
	if !strings.Contains(row, "26.4 s, 100 rejected") || !strings.HasSuffix(row, "| pass |") {
		t.Fatalf("import row %q, want 100 rejected and pass", row)
	}
}

func TestNum(t *testing.T) {
	for _, v := range []any{int(7), int32(7), int64(7), uint64(7), float32(7), float64(7)} {
		if num(v) != 7 {
			t.Fatalf("num(%T) = %v, want 7", v, num(v))
		}
	}
}
