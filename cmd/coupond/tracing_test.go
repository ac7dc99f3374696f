package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// receiver is an in-process OTLP/HTTP trace collector.
type receiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	scope map[*tracepb.Span]string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				rc.spans = append(rc.spans, s)
				rc.scope[s] = ss.Scope.GetName()
			}
		}
	}
	rc.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func attr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			if v := kv.Value.GetStringValue(); v != "" {
				return v
			}
			return strconv.FormatInt(kv.Value.GetIntValue(), 10)
		}
	}
	return ""
}

// TestTracing: with --otlp-endpoint and every request sampled, a redemption
// reaches an OTLP/HTTP collector as the GraphQL operation's span, the root
// field's and the service call's, and one span per SQL statement, all of one
// trace, with the request id and the merchant as attributes; its log line
// carries the trace id. With a ratio of 0 nothing is sent.
func TestTracing(t *testing.T) {
	for _, tt := range []struct {
		name  string
		ratio string
		want  bool
	}{{"sampled", "1", true}, {"not sampled", "0", false}} {
		t.Run(tt.name, func(t *testing.T) {
			rc := &receiver{scope: map[*tracepb.Span]string{}}
			col := httptest.NewServer(rc)
			defer col.Close()
			addr := freeAddr(t)
			ctx, cancel := context.WithCancel(context.Background())
			out, logs := &syncBuffer{}, &syncBuffer{}
			done := make(chan error, 1)
			go func() {
				done <- run(ctx, []string{"serve", "--demo", "--addr", addr, "--database-url", t.TempDir() + "/coupond.db", "--jobs=false",
					"--otlp-endpoint", col.URL, "--otlp-sample-ratio", tt.ratio}, out, logs)
			}()
			for start := time.Now(); !strings.Contains(out.String(), "listening on"); time.Sleep(20 * time.Millisecond) {
				if time.Since(start) > 30*time.Second {
					t.Fatalf("serve did not start: %s", logs.String())
				}
			}
			admin, clerk := token(t, out.String(), "ADMIN"), token(t, out.String(), "CLERK")
			code := gql(t, addr, admin, `{ coupons(first: 1, filter: {status: UNUSED}) { edges { node { code } } } }`, nil)["coupons"].(map[string]any)["edges"].([]any)[0].(map[string]any)["node"].(map[string]any)["code"]
			store := gql(t, addr, clerk, `{ viewer { storeIds } }`, nil)["viewer"].(map[string]any)["storeIds"].([]any)[0]
			body, _ := json.Marshal(map[string]any{"query": `mutation($in: RedeemCouponInput!) { redeemCoupon(input: $in) { status } }`,
				"variables": map[string]any{"in": map[string]any{"code": code, "storeId": store, "requestId": "trace-1", "orderAmount": 10000}}})
			req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+clerk)
			req.Header.Set("X-Request-Id", "trace-test-1")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(b), "SUCCEEDED") {
				t.Fatalf("redeem: %s", b)
			}
			http.DefaultClient.CloseIdleConnections()
			cancel() // shutdown flushes the spans
			if err := <-done; err != nil {
				t.Fatalf("serve: %v", err)
			}

			rc.mu.Lock()
			defer rc.mu.Unlock()
			if !tt.want {
				if len(rc.spans) != 0 {
					t.Fatalf("%d spans sent with a sample ratio of 0, first %s %x", len(rc.spans), rc.spans[0].Name, rc.spans[0].Flags)
				}
				return
			}
			var op *tracepb.Span
			for _, s := range rc.spans {
				if s.Name == "graphql mutation redeemCoupon" {
					op = s
				}
			}
			if op == nil {
				t.Fatalf("no operation span among %d", len(rc.spans))
			}
			if attr(op, "coupond.request_id") != "trace-test-1" || attr(op, "coupond.merchant_id") == "" || attr(op, "coupond.merchant_id") == "0" {
				t.Fatalf("operation span attributes: %v", op.Attributes)
			}
			names, sql := map[string]bool{}, 0
			for _, s := range rc.spans {
				if !bytes.Equal(s.TraceId, op.TraceId) {
					continue
				}
				names[s.Name] = true
				if rc.scope[s] == "gorm.io/plugin/opentelemetry" {
					sql++
				}
			}
			if !names["Mutation.redeemCoupon"] || !names["Redemptions.Redeem"] || sql == 0 {
				t.Fatalf("spans of the redemption's trace: %v, %d SQL", names, sql)
			}
			traceID := hex.EncodeToString(op.TraceId)
			var logged bool
			for _, line := range strings.Split(logs.String(), "\n") {
				if strings.Contains(line, `"request_id":"trace-test-1"`) && strings.Contains(line, `"trace_id":"`+traceID+`"`) {
					logged = true
				}
			}
			if !logged {
				t.Fatalf("no log line with the request id and trace id %s:\n%s", traceID, logs.String())
			}
		})
	}
}
