package errcode

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readmeCodes returns the codes README.md lists in "Use the API": every
// back-quoted upper-case word of the paragraph that starts "Errors carry a
// stable code", up to the blank line or the sentence about money.
func readmeCodes(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "## Use the API")
	if i < 0 {
		t.Fatal(`README.md has no section "Use the API"`)
	}
	s = s[i:]
	start := strings.Index(s, "Errors carry a stable code")
	end := strings.Index(s, "Money is in fen")
	if start < 0 || end < start {
		t.Fatal(`README.md's "Use the API" no longer lists the codes as this test expects`)
	}
	var codes []string
	for _, m := range regexp.MustCompile("`([A-Z][A-Z_]*[A-Z])`").FindAllStringSubmatch(s[start:end], -1) {
		codes = append(codes, m[1])
	}
	return codes
}

func TestREADMEListsTheTable(t *testing.T) {
	listed := readmeCodes(t)
	for _, c := range listed {
		if _, ok := Lookup(c); !ok {
			t.Errorf("README.md lists %s, which is not in the table", c)
		}
	}
	for _, s := range All() {
		if !slices.Contains(listed, s.Code) {
			t.Errorf("%s is in the table but not in README.md's list of codes", s.Code)
		}
	}
	if len(listed) != len(All()) {
		t.Errorf("README.md lists %d codes (%v), the table has %d", len(listed), listed, len(All()))
	}
}

// Every code of the table is answered with the status the table declares, and
// a retryable one says when to retry.
func TestWriteAnswersTheDeclaredStatus(t *testing.T) {
	for _, s := range All() {
		t.Run(s.Code, func(t *testing.T) {
			w := httptest.NewRecorder()
			Write(w, s.Code, "message", 2500*time.Millisecond)
			if w.Code != s.Status {
				t.Fatalf("status %d, want %d", w.Code, s.Status)
			}
			var body struct {
				Errors []struct {
					Message    string
					Extensions map[string]any
				}
			}
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if len(body.Errors) != 1 || body.Errors[0].Extensions["code"] != s.Code || body.Errors[0].Message != "message" {
				t.Fatalf("body %s", w.Body.String())
			}
			ra := w.Header().Get("Retry-After")
			switch {
			case s.Retryable && (ra != "3" || body.Errors[0].Extensions["retryAfter"] != 3.0):
				t.Fatalf("retryable: Retry-After %q, extensions %v; want 3 seconds", ra, body.Errors[0].Extensions)
			case !s.Retryable && ra != "":
				t.Fatalf("not retryable but Retry-After %q", ra)
			}
		})
	}
}

func TestTable(t *testing.T) {
	tests := []struct {
		give      string
		wantOK    bool
		status    int
		retryable bool
		audit     Audit
	}{
		{give: RateLimited, wantOK: true, status: 429, retryable: true, audit: AuditRateLimit},
		{give: Forbidden, wantOK: true, status: 403, audit: AuditRefusal},
		{give: RefundWindowClosed, wantOK: true, status: 403, audit: AuditRefusal},
		{give: Unauthenticated, wantOK: true, status: 401},
		{give: Overloaded, wantOK: true, status: 503, retryable: true},
		{give: Unavailable, wantOK: true, status: 503, retryable: true},
		{give: "NO_SUCH_CODE", status: 500},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			s, ok := Lookup(tt.give)
			if ok != tt.wantOK || Status(tt.give) != tt.status || s.Retryable != tt.retryable || AuditOf(tt.give) != tt.audit {
				t.Fatalf("Lookup %+v %v, Status %d, AuditOf %d; want %v %d retryable %v audit %d",
					s, ok, Status(tt.give), AuditOf(tt.give), tt.wantOK, tt.status, tt.retryable, tt.audit)
			}
		})
	}
	for _, s := range All() {
		if s.Code != strings.ToUpper(s.Code) || strconv.Quote(s.Code) != `"`+s.Code+`"` || s.Status < 200 || s.Status > 599 {
			t.Errorf("malformed row %+v", s)
		}
	}
}
