package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"coupond/errcode"
)

// stalled opens a /graphql request that sends its headers and the first byte
// of a longer body, then nothing: the handler holds its in-flight slot,
// blocked reading the body, until the connection is closed.
func stalled(t *testing.T, addr, tok string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_, err = fmt.Fprintf(c, "POST /graphql HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
		"Authorization: Bearer %s\r\nContent-Length: 1000\r\n\r\n{", addr, tok)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type answer struct {
	status     int
	retryAfter string
	code       string // errors[0].extensions.code
	took       time.Duration
	err        error
}

func ask(addr, tok string) answer {
	start := time.Now()
	body, _ := json.Marshal(map[string]any{"query": "{ viewer { role } }"})
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	var out struct {
		Errors []struct {
			Extensions struct {
				Code string `json:"code"`
			} `json:"extensions"`
		} `json:"errors"`
		Data json.RawMessage `json:"data"`
	}
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), took: time.Since(start)}
	if err := json.Unmarshal(raw, &out); err != nil {
		a.err = fmt.Errorf("HTTP %d: %q: %w", resp.StatusCode, raw, err)
	} else if len(out.Errors) > 0 {
		a.code = out.Errors[0].Extensions.Code
	}
	return a
}

// metric reads one sample of /metrics, e.g. `coupond_graphql_inflight_requests`
// or `coupond_overloaded_refusals_total{reason="queue_full"}`; -1 when absent.
func metric(t *testing.T, addr, sample string) float64 {
	t.Helper()
	status, body, _ := get(t, "http://"+addr+"/metrics", "")
	if status != http.StatusOK {
		t.Fatalf("/metrics: %d", status)
	}
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			var f float64
			fmt.Sscan(v, &f)
			return f
		}
	}
	return -1
}

func waitMetric(t *testing.T, addr, sample string, want float64) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(10 * time.Millisecond) {
		if metric(t, addr, sample) == want {
			return
		}
	}
	t.Fatalf("%s stayed %v, want %v", sample, metric(t, addr, sample), want)
}

// With every in-flight slot held and the queue full, a GraphQL request is
// refused at once with 503, Retry-After and OVERLOADED; one that queues gets
// the next free slot; one that waits past --max-inflight-wait is refused; the
// ops endpoints and the console are never limited; after the load drains
// requests succeed again, and the refusals are counted.
func TestInflightLimit(t *testing.T) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			const wait = 1500 * time.Millisecond
			addr, out := startServe(t, databaseURLs(t)[name](t), "--max-inflight", "2", "--max-inflight-wait", wait.String())
			tok := token(t, out.String(), "ADMIN")
			if a := ask(addr, tok); a.err != nil || a.status != http.StatusOK || a.code != "" {
				t.Fatalf("before the load: %+v", a)
			}

			// Hold both slots.
			held := []net.Conn{stalled(t, addr, tok), stalled(t, addr, tok)}
			waitMetric(t, addr, "coupond_graphql_inflight_requests", 2)
			for _, path := range []string{"/healthz", "/readyz", "/"} {
				if status, _, _ := get(t, "http://"+addr+path, ""); status != http.StatusOK {
					t.Fatalf("%s while the limit is full: %d", path, status)
				}
			}

			// Two requests queue; a third finds the queue full.
			queued := make(chan answer, 2)
			for range 2 {
				go func() { queued <- ask(addr, tok) }()
			}
			waitMetric(t, addr, "coupond_graphql_waiting_requests", 2)
			full := ask(addr, tok)
			if full.err != nil || full.status != http.StatusServiceUnavailable || full.retryAfter != "1" || full.code != errcode.Overloaded {
				t.Fatalf("with the queue full: %+v, want 503, Retry-After 1, %s", full, errcode.Overloaded)
			}
			if full.took > wait/2 {
				t.Fatalf("with the queue full the refusal took %s, want at once", full.took)
			}

			// A slot frees: the queued requests are served one after the other.
			held[0].Close()
			for range 2 {
				if a := <-queued; a.err != nil || a.status != http.StatusOK || a.code != "" {
					t.Fatalf("queued request: %+v, want served", a)
				}
			}

			// Both slots held again: a request waits its time, then is refused.
			held = append(held, stalled(t, addr, tok))
			waitMetric(t, addr, "coupond_graphql_inflight_requests", 2)
			late := ask(addr, tok)
			if late.err != nil || late.status != http.StatusServiceUnavailable || late.retryAfter != "1" || late.code != errcode.Overloaded {
				t.Fatalf("after waiting: %+v, want 503, Retry-After 1, %s", late, errcode.Overloaded)
			}
			if late.took < wait-100*time.Millisecond {
				t.Fatalf("refused after %s, want after waiting %s", late.took, wait)
			}

			// The load drains.
			for _, c := range held {
				c.Close()
			}
			waitMetric(t, addr, "coupond_graphql_inflight_requests", 0)
			if a := ask(addr, tok); a.err != nil || a.status != http.StatusOK || a.code != "" {
				t.Fatalf("after the load drained: %+v", a)
			}
			if got := metric(t, addr, `coupond_overloaded_refusals_total{reason="queue_full"}`); got != 1 {
				t.Fatalf("queue_full refusals %v, want 1", got)
			}
			if got := metric(t, addr, `coupond_overloaded_refusals_total{reason="wait_timeout"}`); got != 1 {
				t.Fatalf("wait_timeout refusals %v, want 1", got)
			}
		})
	}
}
