package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"coupond/errcode"
)

// The media types of GraphQL over HTTP
// (https://graphql.github.io/graphql-over-http/draft/).
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// negotiate picks the media type of the answer from an Accept header. A
// missing header, */* and application/* mean application/json, the legacy
// type every client reads; application/graphql-response+json is chosen when
// the client names it with at least the weight of application/json. It
// returns false, with application/json, when the header accepts neither type
// (the caller answers 406).
func negotiate(accept string) (string, bool) {
	if strings.TrimSpace(accept) == "" {
		return mediaJSON, true
	}
	// Each type takes its weight from the most specific range that names it
	// (RFC 9110, 12.5.1): 3 for the type itself, 2 for application/*, 1 for */*.
	type weight struct {
		q           float64
		specificity int
	}
	var js, gr weight
	take := func(w *weight, q float64, specificity int) {
		if specificity > w.specificity || (specificity == w.specificity && q > w.q) {
			*w = weight{q, specificity}
		}
	}
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
			continue // coupond answers in UTF-8 only
		}
		q := 1.0
		if s, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(s, 64); err != nil || q < 0 || q > 1 {
				continue
			}
		}
		switch mt {
		case "*/*":
			take(&js, q, 1)
			take(&gr, q, 1)
		case "application/*":
			take(&js, q, 2)
			take(&gr, q, 2)
		case mediaJSON:
			take(&js, q, 3)
		case mediaGraphQLResponse:
			take(&gr, q, 3)
		}
	}
	switch {
	case js.q == 0 && gr.q == 0:
		return mediaJSON, false
	case gr.q > js.q, gr.q == js.q && gr.specificity == 3:
		return mediaGraphQLResponse, true
	default:
		return mediaJSON, true
	}
}

// overHTTP is coupond's gqlgen transport for GET and POST, following GraphQL
// over HTTP: a request that is not well-formed (no string query, variables or
// extensions that are not maps, a body that is not one JSON object) is 400; a
// request that fails before execution (parse, validation, variable coercion,
// coupond's operation limits) answers its errors without a data entry, with
// 200 to application/json and 400 to application/graphql-response+json; a GET
// of anything but a query is 405. guardRequest has refused, before the token
// was checked, what needs no parsing.
type overHTTP struct{}

var _ graphql.Transport = overHTTP{}

func (overHTTP) Supports(r *http.Request) bool {
	return r.Header.Get("Upgrade") == "" && (r.Method == http.MethodGet || r.Method == http.MethodPost)
}

func (overHTTP) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	media, _ := negotiate(r.Header.Get("Accept"))
	start := graphql.Now()
	var params *graphql.RawParams
	var bad *badRequest
	if r.Method == http.MethodGet {
		params, bad = paramsFromURL(r.URL.RawQuery)
	} else {
		params, bad = paramsFromBody(r.Body)
	}
	if bad != nil {
		writeRequestErrors(w, media, bad.status, exec.DispatchError(ctx, gqlerror.List{bad.err()}))
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	oc, errs := exec.CreateOperationContext(ctx, params)
	if r.Method == http.MethodGet && oc != nil && oc.Operation != nil && oc.Operation.Operation != ast.Query {
		w.Header().Set("Allow", http.MethodPost)
		bad := &badRequest{http.StatusMethodNotAllowed, "GET requests only allow query operations; send a " + string(oc.Operation.Operation) + " with POST"}
		writeRequestErrors(w, media, bad.status, exec.DispatchError(ctx, gqlerror.List{bad.err()}))
		return
	}
	if errs != nil {
		status := http.StatusOK
		if media == mediaGraphQLResponse {
			status = http.StatusBadRequest
		}
		writeRequestErrors(w, media, status, exec.DispatchError(graphql.WithOperationContext(ctx, oc), errs))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, oc)
	resp := responses(ctx)
	if resp == nil {
		resp = &graphql.Response{Data: json.RawMessage("null")}
	}
	writeBody(w, media, http.StatusOK, resp)
}

// badRequest is a request that is not well-formed, with the status that
// refuses it.
type badRequest struct {
	status  int
	message string
}

func (b *badRequest) err() *gqlerror.Error {
	return &gqlerror.Error{Message: b.message, Extensions: map[string]any{"code": errcode.BadUserInput}}
}

func malformed(format string, args ...any) *badRequest {
	return &badRequest{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// paramsFromBody reads the parameters of a POST: one JSON object with a string
// query and optional operationName, variables and extensions, each of which
// may be null.
func paramsFromBody(body io.Reader) (*graphql.RawParams, *badRequest) {
	b, err := io.ReadAll(body)
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, &badRequest{http.StatusRequestEntityTooLarge, "request body too large"}
		}
		return nil, malformed("the request body could not be read")
	}
	if p, ok := scanBody(b); ok {
		return p, nil
	}
	return decodeBody(b)
}

// decodeBody reads the parameters of a POST body with encoding/json and
// says what is wrong with a body it refuses; scanBody reads the usual body
// the same way in one pass.
func decodeBody(b []byte) (*graphql.RawParams, *badRequest) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, malformed(`the request body is empty; send a JSON object such as {"query": "{ viewer { role } }"}`)
	}
	// Unmarshal reads b in place; a Decoder would copy it into a buffer of
	// its own first. Only a body Unmarshal refuses takes the Decoder, to tell
	// which way it is malformed.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil || fields == nil {
		dec := json.NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(&fields); err != nil || fields == nil {
			return nil, malformed("the request body is not a JSON object")
		}
		return nil, malformed("the request body has data after its JSON object")
	}
	p := &graphql.RawParams{}
	if raw, ok := fields["operationName"]; ok && !isNull(raw) {
		if p.OperationName, ok = jsonString(raw); !ok {
			return nil, malformed("operationName must be a string or null")
		}
	}
	for _, m := range []struct {
		name string
		into *map[string]any
	}{{"variables", &p.Variables}, {"extensions", &p.Extensions}} {
		if raw, ok := fields[m.name]; ok {
			if *m.into, ok = jsonMap(raw); !ok {
				return nil, malformed("%s must be a JSON object or null", m.name)
			}
		}
	}
	raw, ok := fields["query"]
	if !ok {
		if persisted(p) {
			return p, nil
		}
		return nil, malformed("the request has no query")
	}
	if p.Query, ok = jsonString(raw); !ok {
		return nil, malformed("query must be a string")
	}
	return p, nil
}

// persisted reports whether a request names an automatic persisted query
// (extensions.persistedQuery with its sha256Hash), which may leave the query
// out once the server has seen it.
func persisted(p *graphql.RawParams) bool {
	pq, ok := p.Extensions["persistedQuery"].(map[string]any)
	if !ok {
		return false
	}
	_, ok = pq["sha256Hash"].(string)
	return ok
}

// paramsFromURL reads the parameters of a GET from its query string, where
// variables and extensions are JSON objects.
func paramsFromURL(rawQuery string) (*graphql.RawParams, *badRequest) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, malformed("the query string could not be parsed")
	}
	p := &graphql.RawParams{Query: q.Get("query"), OperationName: q.Get("operationName")}
	for _, m := range []struct {
		name string
		into *map[string]any
	}{{"variables", &p.Variables}, {"extensions", &p.Extensions}} {
		if s := q.Get(m.name); s != "" {
			var ok bool
			if *m.into, ok = jsonMap(json.RawMessage(s)); !ok {
				return nil, malformed("%s must be a JSON object or null", m.name)
			}
		}
	}
	if !q.Has("query") && !persisted(p) {
		return nil, malformed("the request has no query")
	}
	return p, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// jsonString decodes raw if it is a JSON string.
func jsonString(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// jsonMap decodes raw if it is a JSON object or null, keeping numbers as
// json.Number so that gqlgen coerces large integers exactly.
func jsonMap(raw json.RawMessage) (map[string]any, bool) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return nil, true
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || dec.Decode(&struct{}{}) != io.EOF {
		return nil, false
	}
	return m, true
}

// writeRequestErrors answers the errors of a request that did not execute:
// no data entry at all, as GraphQL over HTTP asks, not "data": null.
func writeRequestErrors(w http.ResponseWriter, media string, status int, resp *graphql.Response) {
	writeBody(w, media, status, struct {
		Errors     gqlerror.List  `json:"errors"`
		Extensions map[string]any `json:"extensions,omitempty"`
	}{resp.Errors, resp.Extensions})
}

// refuse answers a request refused before GraphQL runs with one error of code.
func refuse(w http.ResponseWriter, media string, status int, code, message string) {
	writeRequestErrors(w, media, status, &graphql.Response{Errors: gqlerror.List{{Message: message, Extensions: map[string]any{"code": code}}}})
}

func writeBody(w http.ResponseWriter, media string, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only a resolver's broken json.Marshaler gets here; gqlgen's recover
		// answers it as INTERNAL.
		panic(fmt.Errorf("marshal response: %w", err))
	}
	w.Header().Set("Content-Type", media+"; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
