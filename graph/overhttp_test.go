package graph_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"coupond/graph"
	"coupond/internal/testdb"
)

// TestGraphQLOverHTTP holds the endpoint to the GraphQL-over-HTTP spec, the
// SHOULDs as well as the MUSTs that graphql-http's server audits check: the
// status, the media type of the answer and whether it has a data entry.
func TestGraphQLOverHTTP(t *testing.T) {
	a := newAPI(t, testdb.SQLite(t), graph.Options{Introspection: true, MaxBodyBytes: 4096})
	const (
		jsonType = "application/json; charset=utf-8"
		gqlType  = "application/graphql-response+json; charset=utf-8"
		gqlResp  = "application/graphql-response+json"
	)
	body := func(fields string) string { return "{" + fields + "}" }
	const typename = `"query": "{ __typename }"`
	// A null for a non-null variable fails variable coercion, after the
	// document validated.
	const coerce = `"query": "query T($name: String!) { __type(name: $name) { name } }", "variables": {"name": null}`
	const coerceType = `"query": "query T($name: String!) { __type(name: $name) { name } }", "variables": {"name": {"not": "a string"}}`
	// Automatic persisted queries: the rows below run in order on one
	// server, so the hash is unknown first and known after the query came
	// with it.
	sum := sha256.Sum256([]byte("{ __typename }"))
	apq := `"extensions": {"persistedQuery": {"version": 1, "sha256Hash": "` + hex.EncodeToString(sum[:]) + `"}}`
	wrongAPQ := `"extensions": {"persistedQuery": {"version": 1, "sha256Hash": "` + strings.Repeat("0", 64) + `"}}`
	get := func(params ...string) string {
		v := url.Values{}
		for i := 0; i+1 < len(params); i += 2 {
			v.Set(params[i], params[i+1])
		}
		return v.Encode()
	}
	tests := []struct {
		name        string
		method      string // default POST
		contentType string // default application/json; "-" for none
		accept      string
		body        string // POST body, or GET query string
		wantStatus  int
		wantType    string // the Content-Type of the answer
		wantData    bool   // whether the answer has a data entry
		wantCode    string // the first error's extensions.code, if any
		wantAllow   string
	}{
		// Automatic persisted queries.
		{name: "APQ: an unknown hash without its query", body: body(apq), wantStatus: 200, wantType: jsonType, wantCode: "PERSISTED_QUERY_NOT_FOUND"},
		{name: "APQ: the query with its hash", body: body(typename + ", " + apq), wantStatus: 200, wantType: jsonType, wantData: true},
		{name: "APQ: the known hash alone", body: body(apq), wantStatus: 200, wantType: jsonType, wantData: true},
		{name: "APQ: the known hash alone over GET", method: http.MethodGet, body: get("extensions", strings.TrimPrefix(apq, `"extensions": `)), wantStatus: 200, wantType: jsonType, wantData: true},
		{name: "APQ: a hash that is not the query's", body: body(typename + ", " + wrongAPQ), wantStatus: 200, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "APQ: no query and no hash", body: body(`"extensions": {}`), wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		// Media types of the answer.
		{name: "no Accept is application/json", body: body(typename), wantStatus: 200, wantType: jsonType, wantData: true},
		{name: "Accept application/json", accept: "application/json", body: body(typename), wantStatus: 200, wantType: jsonType, wantData: true},
		{name: "Accept */* is application/json", accept: "*/*", body: body(typename), wantStatus: 200, wantType: jsonType, wantData: true},
		{name: "Accept application/* is application/json", accept: "application/*", body: body(typename), wantStatus: 200, wantType: jsonType, wantData: true},
		{name: "Accept graphql-response+json", accept: gqlResp, body: body(typename), wantStatus: 200, wantType: gqlType, wantData: true},
		{name: "graphql-response+json preferred as the spec advises", accept: gqlResp + ", application/json;q=0.9", body: body(typename), wantStatus: 200, wantType: gqlType, wantData: true},
		{name: "both at one weight: graphql-response+json", accept: "application/json, " + gqlResp, body: body(typename), wantStatus: 200, wantType: gqlType, wantData: true},
		{name: "application/json weighed higher", accept: "application/json, " + gqlResp + ";q=0.5", body: body(typename), wantStatus: 200, wantType: jsonType, wantData: true},
		{name: "graphql-response+json over a wildcard", accept: "*/*, " + gqlResp, body: body(typename), wantStatus: 200, wantType: gqlType, wantData: true},
		{name: "application/json refused, wildcard left", accept: "application/json;q=0, */*", body: body(typename), wantStatus: 200, wantType: gqlType, wantData: true},
		{name: "unsupported Accept is 406", accept: "text/html", body: body(typename), wantStatus: 406, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "Accept weighing both zero is 406", accept: "application/json;q=0, " + gqlResp + ";q=0", body: body(typename), wantStatus: 406, wantType: jsonType},
		{name: "Accept in another charset is 406", accept: "application/json; charset=iso-8859-1", body: body(typename), wantStatus: 406, wantType: jsonType},
		{name: "Accept utf-8 charset", accept: "application/json; charset=UTF-8", body: body(typename), wantStatus: 200, wantType: jsonType, wantData: true},

		// Requests that are not well-formed are 400 to both media types.
		{name: "JSON parse failure", body: `{ "not a JSON`, wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "JSON parse failure as graphql-response+json", accept: gqlResp, body: `{ "not a JSON`, wantStatus: 400, wantType: gqlType, wantCode: "BAD_USER_INPUT"},
		{name: "empty body", body: "", wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "body that is a string", body: `"{ __typename }"`, wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "body null", body: `null`, wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "two JSON objects", body: body(typename) + body(typename), wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "missing query", body: body(`"qeury": "{ __typename }"`), wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "object query", body: body(`"query": {"obj": "ect"}`), wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "number query", accept: gqlResp, body: body(`"query": 0`), wantStatus: 400, wantType: gqlType, wantCode: "BAD_USER_INPUT"},
		{name: "boolean query", body: body(`"query": false`), wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "array query", body: body(`"query": ["array"]`), wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "null query", body: body(`"query": null`), wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "number operationName", body: body(typename + `, "operationName": 0`), wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "object operationName", body: body(typename + `, "operationName": {}`), wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "string variables", body: body(typename + `, "variables": "string"`), wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "number variables", body: body(typename + `, "variables": 0`), wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "array variables", body: body(typename + `, "variables": ["array"]`), wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "boolean extensions", body: body(typename + `, "extensions": false`), wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "array extensions", accept: gqlResp, body: body(typename + `, "extensions": ["array"]`), wantStatus: 400, wantType: gqlType, wantCode: "BAD_USER_INPUT"},

		// Well-formed parameters.
		{name: "string operationName", body: body(`"query": "query Q { __typename }", "operationName": "Q"`), wantStatus: 200, wantType: jsonType, wantData: true},
		{name: "null operationName, variables and extensions", accept: gqlResp,
			body: body(typename + `, "operationName": null, "variables": null, "extensions": null`), wantStatus: 200, wantType: gqlType, wantData: true},
		{name: "map variables", body: body(`"query": "query T($name: String!) { __type(name: $name) { name } }", "variables": {"name": "Coupon"}`), wantStatus: 200, wantType: jsonType, wantData: true},
		{name: "map extensions", body: body(typename + `, "extensions": {"some": "value"}`), wantStatus: 200, wantType: jsonType, wantData: true},
		{name: "utf-8 request", contentType: "application/json; charset=utf-8", body: body(`"query": "{ __type(name: \"Run🏃Swim🏊\") { name } }"`), wantStatus: 200, wantType: jsonType, wantData: true},

		// Errors before execution: 200 to application/json, 400 to
		// graphql-response+json, never a data entry.
		{name: "parse failure as application/json", accept: "application/json", body: body(`"query": "{"`), wantStatus: 200, wantType: jsonType, wantCode: "GRAPHQL_PARSE_FAILED"},
		{name: "parse failure with no Accept", body: body(`"query": "{"`), wantStatus: 200, wantType: jsonType, wantCode: "GRAPHQL_PARSE_FAILED"},
		{name: "parse failure as graphql-response+json", accept: gqlResp, body: body(`"query": "{"`), wantStatus: 400, wantType: gqlType, wantCode: "GRAPHQL_PARSE_FAILED"},
		{name: "validation failure as application/json", accept: "application/json", body: body(`"query": "{ nosuchfield }"`), wantStatus: 200, wantType: jsonType, wantCode: "GRAPHQL_VALIDATION_FAILED"},
		{name: "validation failure as graphql-response+json", accept: gqlResp, body: body(`"query": "{ nosuchfield }"`), wantStatus: 400, wantType: gqlType, wantCode: "GRAPHQL_VALIDATION_FAILED"},
		{name: "unknown operationName as graphql-response+json", accept: gqlResp, body: body(typename + `, "operationName": "Nope"`), wantStatus: 400, wantType: gqlType, wantCode: "GRAPHQL_VALIDATION_FAILED"},
		{name: "variable coercion failure as application/json", accept: "application/json", body: body(coerce), wantStatus: 200, wantType: jsonType, wantCode: "GRAPHQL_VALIDATION_FAILED"},
		{name: "variable coercion failure as graphql-response+json", accept: gqlResp, body: body(coerce), wantStatus: 400, wantType: gqlType, wantCode: "GRAPHQL_VALIDATION_FAILED"},
		{name: "variable of the wrong type as application/json", body: body(coerceType), wantStatus: 200, wantType: jsonType, wantCode: "GRAPHQL_VALIDATION_FAILED"},
		{name: "variable of the wrong type as graphql-response+json", accept: gqlResp, body: body(coerceType), wantStatus: 400, wantType: gqlType, wantCode: "GRAPHQL_VALIDATION_FAILED"},
		{name: "unused variable as graphql-response+json", accept: gqlResp, body: body(`"query": "query U($id: ID!) { __typename }", "variables": {"id": null}`),
			wantStatus: 400, wantType: gqlType, wantCode: "GRAPHQL_VALIDATION_FAILED"},
		{name: "operation limit as application/json", body: body(`"query": "mutation { a: __typename b: createStore(input: {code: \"A\", name: \"a\"}) { id } c: createStore(input: {code: \"B\", name: \"b\"}) { id } }"`),
			wantStatus: 200, wantType: jsonType, wantCode: "QUERY_TOO_COMPLEX"},
		{name: "operation limit as graphql-response+json", accept: gqlResp, body: body(`"query": "mutation { a: __typename b: createStore(input: {code: \"A\", name: \"a\"}) { id } c: createStore(input: {code: \"B\", name: \"b\"}) { id } }"`),
			wantStatus: 400, wantType: gqlType, wantCode: "QUERY_TOO_COMPLEX"},

		// An executed operation is 200 with its data entry, even when a field
		// fails (here: no token).
		{name: "field error as graphql-response+json", accept: gqlResp, body: body(`"query": "{ viewer { role } }"`), wantStatus: 200, wantType: gqlType, wantData: true, wantCode: "UNAUTHENTICATED"},

		// Request media types and methods.
		{name: "POST without Content-Type", contentType: "-", body: body(typename), wantStatus: 415, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "POST as text/plain", contentType: "text/plain", accept: gqlResp, body: body(typename), wantStatus: 415, wantType: gqlType, wantCode: "BAD_USER_INPUT"},
		{name: "POST in another charset", contentType: "application/json; charset=utf-16", body: body(typename), wantStatus: 415, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "POST body over the cap", body: body(typename + `, "extensions": {"pad": "` + strings.Repeat("x", 5000) + `"}`), wantStatus: 413, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "batch", body: "[" + body(typename) + "]", wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "PUT", method: http.MethodPut, body: body(typename), wantStatus: 405, wantType: jsonType, wantAllow: "OPTIONS, GET, POST"},
		{name: "GET query", method: http.MethodGet, body: get("query", "{ __typename }"), wantStatus: 200, wantType: jsonType, wantData: true},
		{name: "GET with variables", method: http.MethodGet, accept: gqlResp,
			body: get("query", "query T($name: String!) { __type(name: $name) { name } }", "variables", `{"name": "Coupon"}`), wantStatus: 200, wantType: gqlType, wantData: true},
		{name: "GET with variables that are not an object", method: http.MethodGet, body: get("query", "{ __typename }", "variables", `[1]`), wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "GET with variables that are not JSON", method: http.MethodGet, body: get("query", "{ __typename }", "variables", `{`), wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "GET without query", method: http.MethodGet, body: get("operationName", "Q"), wantStatus: 400, wantType: jsonType, wantCode: "BAD_USER_INPUT"},
		{name: "GET parse failure as graphql-response+json", method: http.MethodGet, accept: gqlResp, body: get("query", "{"), wantStatus: 400, wantType: gqlType, wantCode: "GRAPHQL_PARSE_FAILED"},
		{name: "GET mutation is 405", method: http.MethodGet, accept: gqlResp, body: get("query", "mutation { __typename }"), wantStatus: 405, wantType: gqlType, wantCode: "BAD_USER_INPUT", wantAllow: "POST"},
		{name: "GET mutation chosen by operationName is 405", method: http.MethodGet,
			body: get("query", "query Q { __typename } mutation M { __typename }", "operationName", "M"), wantStatus: 405, wantType: jsonType, wantAllow: "POST"},
		{name: "GET query chosen by operationName", method: http.MethodGet,
			body: get("query", "query Q { __typename } mutation M { __typename }", "operationName", "Q"), wantStatus: 200, wantType: jsonType, wantData: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := tt.method
			if method == "" {
				method = http.MethodPost
			}
			var r *http.Request
			if method == http.MethodGet {
				r = httptest.NewRequest(method, "/graphql?"+tt.body, nil)
			} else {
				r = httptest.NewRequest(method, "/graphql", strings.NewReader(tt.body))
				switch tt.contentType {
				case "":
					r.Header.Set("Content-Type", "application/json")
				case "-":
				default:
					r.Header.Set("Content-Type", tt.contentType)
				}
			}
			if tt.accept != "" {
				r.Header.Set("Accept", tt.accept)
			}
			w := httptest.NewRecorder()
			a.h.ServeHTTP(w, r)
			if w.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.wantStatus, w.Body.String())
			}
			if got := w.Header().Get("Content-Type"); got != tt.wantType {
				t.Fatalf("Content-Type %q, want %q", got, tt.wantType)
			}
			if got := w.Header().Get("Allow"); got != tt.wantAllow {
				t.Fatalf("Allow %q, want %q", got, tt.wantAllow)
			}
			var resp map[string]json.RawMessage
			if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
				t.Fatalf("body %q: %v", w.Body.String(), err)
			}
			if _, has := resp["data"]; has != tt.wantData {
				t.Fatalf("data entry present: %v, want %v: %s", has, tt.wantData, w.Body.String())
			}
			var errs []struct{ Extensions map[string]any }
			if raw, ok := resp["errors"]; ok {
				must(t, json.Unmarshal(raw, &errs))
			}
			switch {
			case tt.wantCode == "" && tt.wantData && len(errs) > 0:
				t.Fatalf("unexpected errors: %s", w.Body.String())
			case !tt.wantData && len(errs) == 0:
				t.Fatalf("an answer without data has no errors: %s", w.Body.String())
			case tt.wantCode != "" && errs[0].Extensions["code"] != tt.wantCode:
				t.Fatalf("code %v, want %s: %s", errs[0].Extensions["code"], tt.wantCode, w.Body.String())
			}
		})
	}
}
