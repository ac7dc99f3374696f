package graph

import (
	"net/http"
	"strings"
	"testing"
)

// TestParamsFromBodySaysWhatIsWrong reads POST bodies the way the transport
// does and checks the status and message of each malformed one: the body is
// unmarshalled in place, and only a refused one is read again to tell which
// way it is wrong.
func TestParamsFromBodySaysWhatIsWrong(t *testing.T) {
	tests := []struct {
		name       string
		give       string
		wantStatus int // 0: well-formed
		wantMsg    string
	}{
		{name: "one object", give: `{"query": "{ __typename }"}`},
		{name: "white space around it", give: " \n\t{\"query\": \"{ __typename }\"} \n"},
		{name: "two objects", give: `{"query": "{ a }"}{"query": "{ b }"}`, wantStatus: http.StatusBadRequest,
			wantMsg: "has data after its JSON object"},
		{name: "garbage after the object", give: `{"query": "{ a }"} x`, wantStatus: http.StatusBadRequest,
			wantMsg: "has data after its JSON object"},
		{name: "not JSON", give: `{ "not a JSON`, wantStatus: http.StatusBadRequest, wantMsg: "is not a JSON object"},
		{name: "null", give: `null`, wantStatus: http.StatusBadRequest, wantMsg: "is not a JSON object"},
		{name: "an array", give: `[{"query": "{ a }"}]`, wantStatus: http.StatusBadRequest, wantMsg: "is not a JSON object"},
		{name: "empty", give: " ", wantStatus: http.StatusBadRequest, wantMsg: "is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, bad := paramsFromBody(strings.NewReader(tt.give))
			switch {
			case tt.wantStatus == 0 && bad != nil:
				t.Fatalf("refused with %d: %s", bad.status, bad.message)
			case tt.wantStatus == 0 && p.Query != "{ __typename }":
				t.Fatalf("query %q", p.Query)
			case tt.wantStatus != 0 && bad == nil:
				t.Fatalf("accepted; want %d", tt.wantStatus)
			case tt.wantStatus != 0 && (bad.status != tt.wantStatus || !strings.Contains(bad.message, tt.wantMsg)):
				t.Fatalf("refused with %d %q; want %d and %q", bad.status, bad.message, tt.wantStatus, tt.wantMsg)
			}
		})
	}
}
