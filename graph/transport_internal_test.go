package graph

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
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

// FuzzScanBody: whatever body scanBody reads, it reads exactly as
// decodeBody (encoding/json) does; what it leaves, decodeBody decides.
func FuzzScanBody(f *testing.F) {
	for _, s := range []string{
		`{"query":"{ viewer { role } }"}`,
		`{"query":"mutation($in: RedeemCouponInput!) { redeemCoupon(input: $in) { redeemNo } }","variables":{"in":{"code":"K7M2","storeId":"12","requestId":"r-1","orderAmount":5000}}}`,
		`{"query":"q","operationName":null,"variables":null,"extensions":null}`,
		`{"query":"a\nb \u00e9 \ud83d\ude00","variables":{"a":[1,-2.5e+3,true,false,null,{"b":"c\"d"}],"x":{}}}`,
		`{"variables":{"a":1},"extensions":{"persistedQuery":{"version":1,"sha256Hash":"abc"}}}`,
		`{"query":"q","query":"r","variables":{"a":1,"a":2}}`,
		` {"query" : "q" , "operationName" : "Op" } `, `{"query":null}`, `{"Query":"q"}`, `{"query":"\xff"}`,
		`{"query":"q","variables":{"n":01}}`, `{"query":"q","variables":{"n":1.}}`, `{"query":"q"} x`, `{}`, `[]`,
		`{"query":"q","variables":{"s":"\ud800"}}`, `{"query":"q","id":"x"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		got, ok := scanBody([]byte(body))
		if !ok {
			return
		}
		want, bad := decodeBody([]byte(body))
		if bad != nil {
			t.Fatalf("scanBody read %q, which decodeBody refuses: %s", body, bad.message)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("scanBody read %q as %#v, decodeBody as %#v", body, got, want)
		}
	})
}

// TestScanBodyReadsTheUsualBodies: the bodies clients send are read in one
// pass, and as encoding/json reads them; the rest are left to decodeBody.
func TestScanBodyReadsTheUsualBodies(t *testing.T) {
	tests := []struct {
		name     string
		give     string
		wantRead bool
		want     *graphql.RawParams
	}{
		{name: "query alone", give: `{"query":"{ viewer { role } }"}`, wantRead: true,
			want: &graphql.RawParams{Query: "{ viewer { role } }"}},
		{name: "redemption", give: `{"query":"mutation($in: RedeemCouponInput!) { redeemCoupon(input: $in) { redeemNo } }",` +
			`"operationName":"Redeem","variables":{"in":{"code":"K7M2","storeId":"12","orderAmount":5000,"tags":["a",1.5e2,null,true]}}}`,
			wantRead: true, want: &graphql.RawParams{Query: "mutation($in: RedeemCouponInput!) { redeemCoupon(input: $in) { redeemNo } }",
				OperationName: "Redeem", Variables: map[string]any{"in": map[string]any{"code": "K7M2", "storeId": "12",
					"orderAmount": json.Number("5000"), "tags": []any{"a", json.Number("1.5e2"), nil, true}}}}},
		{name: "escapes in the query", give: "{\"query\":\"query {\\n  viewer { role }\\n} # \\u00e9\"}", wantRead: true,
			want: &graphql.RawParams{Query: "query {\n  viewer { role }\n} # \u00e9"}},
		{name: "nulls", give: `{"query":"q","operationName":null,"variables":null,"extensions":null}`, wantRead: true,
			want: &graphql.RawParams{Query: "q"}},
		{name: "persisted query without its text", give: `{"variables":{},"extensions":{"persistedQuery":{"version":1,"sha256Hash":"ab"}}}`,
			wantRead: true, want: &graphql.RawParams{Variables: map[string]any{},
				Extensions: map[string]any{"persistedQuery": map[string]any{"version": json.Number("1"), "sha256Hash": "ab"}}}},
		{name: "repeated key, the last wins", give: `{"query":"a","query":"b"}`, wantRead: true, want: &graphql.RawParams{Query: "b"}},
		{name: "no query", give: `{"variables":{}}`},
		{name: "null query", give: `{"query":null}`},
		{name: "key of another case", give: `{"Query":"q"}`},
		{name: "unknown key", give: `{"query":"q","id":"1"}`},
		{name: "query of another type", give: `{"query":1}`},
		{name: "variables not an object", give: `{"query":"q","variables":[]}`},
		{name: "data after the object", give: `{"query":"q"}{}`},
		{name: "leading zero", give: `{"query":"q","variables":{"n":01}}`},
		{name: "invalid UTF-8 in the query, read by encoding/json", give: "{\"query\":\"\xff\"}", wantRead: true,
			want: &graphql.RawParams{Query: "\ufffd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, read := scanBody([]byte(tt.give))
			if read != tt.wantRead {
				t.Fatalf("scanBody(%s) read it: %v, want %v", tt.give, read, tt.wantRead)
			}
			if !read {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("scanBody(%s) = %#v, want %#v", tt.give, got, tt.want)
			}
			if want, bad := decodeBody([]byte(tt.give)); bad != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("decodeBody(%s) = %#v, %v; scanBody read %#v", tt.give, want, bad, got)
			}
		})
	}
}
