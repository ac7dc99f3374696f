package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// syncBuffer is a bytes.Buffer safe to read while the server writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startServe runs `coupond serve --demo` in process and returns its address
// and printed output once it listens.
func startServe(t *testing.T, dbURL string, extra ...string) (string, *syncBuffer) {
	t.Helper()
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	args := append([]string{"serve", "--demo", "--addr", addr, "--database-url", dbURL}, extra...)
	go func() { done <- run(ctx, args, out, io.Discard) }()
	t.Cleanup(func() {
		// Connections the client dialled but never used would hold shutdown
		// for the five seconds net/http waits on new connections.
		http.DefaultClient.CloseIdleConnections()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	for start := time.Now(); time.Since(start) < 30*time.Second; time.Sleep(20 * time.Millisecond) {
		if strings.Contains(out.String(), "listening on") {
			return addr, out
		}
		select {
		case err := <-done:
			t.Fatalf("serve exited: %v\n%s", err, out.String())
		default:
		}
	}
	t.Fatalf("serve did not start:\n%s", out.String())
	return "", nil
}

func token(t *testing.T, out, role string) string {
	t.Helper()
	m := regexp.MustCompile(role + ` token:\s+(cpd_\w+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %s token in %q", role, out)
	}
	return m[1]
}

func gql(t *testing.T, addr, tok, query string, vars map[string]any) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out["errors"] != nil {
		t.Fatalf("errors: %v", out["errors"])
	}
	return out["data"].(map[string]any)
}

func databaseURLs(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return t.TempDir() + "/coupond.db" },
		"postgres": func(t *testing.T) string { u, _ := testdb.PostgresURL(t); return u },
	}
}

func get(t *testing.T, url, tok string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// The README's run command: serve --demo gives a populated API, console,
// exports, metrics and health endpoints, on SQLite and on PostgreSQL; a second
// start on the same database keeps the data and mints new tokens.
func TestServeDemo(t *testing.T) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			dbURL := databaseURLs(t)[name](t)
			addr, out := startServe(t, dbURL, "--playground")
			admin, clerk, finance := token(t, out.String(), "ADMIN"), token(t, out.String(), "CLERK"), token(t, out.String(), "FINANCE")
			data := gql(t, addr, admin, `{ viewer { role merchant { code } } coupons(first: 1, filter: {status: UNUSED}) { edges { node { code } } }
				campaigns { edges { node { issued } } } redemptions(first: 100) { edges { node { status } } } }`, nil)
			if got := data["viewer"].(map[string]any)["merchant"].(map[string]any)["code"]; got != "demo" {
				t.Fatalf("merchant %v", got)
			}
			issued := 0.0
			for _, e := range data["campaigns"].(map[string]any)["edges"].([]any) {
				issued += e.(map[string]any)["node"].(map[string]any)["issued"].(float64)
			}
			if issued != 1000 {
				t.Fatalf("issued %v, want 1000", issued)
			}
			if n := len(data["redemptions"].(map[string]any)["edges"].([]any)); n < 20 {
				t.Fatalf("%d demo redemptions", n)
			}
			code := data["coupons"].(map[string]any)["edges"].([]any)[0].(map[string]any)["node"].(map[string]any)["code"].(string)
			stores := gql(t, addr, clerk, `{ viewer { storeIds } }`, nil)["viewer"].(map[string]any)["storeIds"].([]any)
			red := gql(t, addr, clerk, `mutation($in: RedeemCouponInput!) { redeemCoupon(input: $in) { status } }`,
				map[string]any{"in": map[string]any{"code": code, "storeId": stores[0], "requestId": "cmd-test-1", "orderAmount": 10000}})
			if st := red["redeemCoupon"].(map[string]any)["status"]; st != "SUCCEEDED" {
				t.Fatalf("redeem %v", st)
			}
			run := gql(t, addr, admin, `mutation { runJob(input: {job: "reconciliation"}) { status counts { name value } } }`, nil)
			if st := run["runJob"].(map[string]any)["status"]; st != "SUCCEEDED" {
				t.Fatalf("reconciliation run %v", run)
			}
			open := gql(t, addr, finance, `{ findings(filter: {status: OPEN}) { edges { node { kind details } } } }`, nil)
			if n := len(open["findings"].(map[string]any)["edges"].([]any)); n != 0 {
				t.Fatalf("demo data has %d findings: %v", n, open)
			}
			today := time.Now().In(time.FixedZone("CST", 8*3600)).Format("2006-01-02")
			for _, tt := range []struct {
				path, tok, want string
				status          int
			}{
				{"/healthz", "", "ok", 200},
				{"/readyz", "", "ready", 200},
				{"/metrics", "", "coupond_redemptions_total", 200},
				{"/metrics", "", "coupond_redemptions_coalesced_total 0", 200},
				{"/metrics", "", "coupond_graphql_inflight_limit 512", 200},
				{"/metrics", "", "coupond_webhook_events ", 200},
				{"/metrics", "", `coupond_webhook_deliveries{status="FAILED"} 0`, 200},
				{"/", "", "<html", 200},
				{"/coupons/some-deep-link", "", "<html", 200},
				{"/playground/", "", "graphiql", 200},
				{"/export/statements.csv?from=" + today + "&to=" + today + "&lang=zh", finance, "核销笔数", 200},
				{"/export/statements.xlsx?from=" + today + "&to=" + today, finance, "PK", 200},
				{"/export/findings.csv", finance, "kind", 200},
				{"/export/coupons.csv?campaignId=1", admin, "formatted", 200},
				{"/export/redemptions.csv?status=SUCCEEDED&lang=zh", finance, "核销单号", 200},
				{"/export/redemptions.xlsx", clerk, "PK", 200},
				{"/export/coupons.csv?campaignId=1", clerk, "FORBIDDEN", 403},
				{"/export/statements.csv?from=" + today + "&to=" + today, "", "UNAUTHENTICATED", 401},
				{"/export/statements.csv?from=yesterday&to=" + today, finance, "BAD_USER_INPUT", 400},
			} {
				status, body, _ := get(t, "http://"+addr+tt.path, tt.tok)
				if status != tt.status || !strings.Contains(body, tt.want) {
					t.Fatalf("GET %s: %d %.200q, want %d with %q", tt.path, status, body, tt.status, tt.want)
				}
			}
			// The scrape's own connection, at least, is open while it is answered.
			_, metrics, _ := get(t, "http://"+addr+"/metrics", "")
			if v := metricValue(metrics, "coupond_http_open_connections"); v < 1 {
				t.Fatalf("coupond_http_open_connections = %v during a request, want at least 1", v)
			}
			if !strings.Contains(metrics, "coupond_findings_open_oldest_seconds ") || metricValue(metrics, "coupond_findings_open") < 0 {
				t.Fatalf("open findings gauges missing or failing:\n%s", metrics)
			}
			// The demo's redemptions wrote events; delivered deliveries are
			// the attempts counter's, not a status of the gauge.
			if metricValue(metrics, "coupond_webhook_events") < 40 || strings.Contains(metrics, `status="DELIVERED"`) {
				t.Fatalf("webhook gauges wrong:\n%s", metrics)
			}
			_, body, _ := get(t, "http://"+addr+"/export/coupons.csv?campaignId=1", admin)
			if lines := strings.Count(body, "\n"); lines != 601 {
				t.Fatalf("codes export has %d lines, want 600 codes and a header", lines)
			}
			// The ledger export pages through every row: the demo's 40, the 5 of
			// its two multi-code orders, and the one above.
			_, body, _ = get(t, "http://"+addr+"/export/redemptions.csv", admin)
			if lines := strings.Count(body, "\n"); lines != 47 {
				t.Fatalf("ledger export has %d lines, want 46 redemptions and a header", lines)
			}
		})
	}
}

func TestCLI(t *testing.T) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			dbURL := databaseURLs(t)[name](t)
			ctx := context.Background()
			cli := func(args ...string) (string, error) {
				var out bytes.Buffer
				err := run(ctx, append(args, "--database-url", dbURL), &out, io.Discard)
				return out.String(), err
			}
			out, err := cli("migrate")
			if err != nil || !strings.Contains(out, "applied migration") {
				t.Fatalf("migrate: %q %v", out, err)
			}
			if out, err = cli("migrate"); err != nil || !strings.Contains(out, "up to date") {
				t.Fatalf("second migrate: %q %v", out, err)
			}
			if out, err = cli("merchant", "create", "--code", "acme", "--name", "Acme", "--timezone", "Asia/Shanghai"); err != nil {
				t.Fatalf("merchant create: %q %v", out, err)
			}
			if _, err = cli("merchant", "create", "--code", "acme", "--name", "Again"); err == nil {
				t.Fatal("duplicate merchant accepted")
			}
			if _, err = cli("token", "create", "--merchant", "acme", "--role", "CLERK"); err == nil {
				t.Fatal("clerk token without a store accepted")
			}
			out, err = cli("token", "create", "--merchant", "acme", "--role", "ADMIN")
			if err != nil || !regexp.MustCompile(`^cpd_\w+\n$`).MatchString(out) {
				t.Fatalf("token create printed %q, %v; want only the token", out, err)
			}
			if out, err = cli("token", "create", "--merchant", "acme", "--role", "FINANCE", "--name", "books", "--expires-in", "720h"); err != nil {
				t.Fatalf("token create --expires-in: %q %v", out, err)
			}
			out, err = cli("token", "list", "--merchant", "acme")
			if err != nil || !regexp.MustCompile(`(?m)^2\s+books\s+FINANCE\s+-\s+\S+\s+\d{4}-\S+\s+-\s+-\s*$`).MatchString(out) ||
				!regexp.MustCompile(`(?m)^1\s+admin\s+ADMIN\s+-\s+\S+\s+-\s+-\s+-\s*$`).MatchString(out) {
				t.Fatalf("token list: %q %v", out, err)
			}
			if out, err = cli("token", "revoke", "--merchant", "acme", "--id", "2"); err != nil || !strings.Contains(out, "token 2 (books) revoked") {
				t.Fatalf("token revoke: %q %v", out, err)
			}
			if again, err := cli("token", "revoke", "--merchant", "acme", "--id", "2"); err != nil || again != out {
				t.Fatalf("second token revoke: %q %v, want %q", again, err, out)
			}
			if _, err = cli("token", "revoke", "--merchant", "acme", "--id", "99"); err == nil {
				t.Fatal("revoking an unknown token succeeded")
			}
			if out, err = cli("token", "list", "--merchant", "acme"); err != nil || !regexp.MustCompile(`(?m)^2\s+books\s+FINANCE\s+.*\d{4}-\S+\s*$`).MatchString(out) {
				t.Fatalf("token list after revoke: %q %v", out, err)
			}
			if out, err = cli("audit"); err != nil || !strings.Contains(out, "no violations") {
				t.Fatalf("audit of a consistent database: %q %v", out, err)
			}
			// An order without a redemption is a violation, unless orders live elsewhere.
			db, err := openDB(ctx, dbURL, models.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			err = db.Exec("INSERT INTO orders (merchant_id, redeem_no, amount, status, created_at) VALUES (1, 'RDSTRAY', 100, 'CREATED', ?)", time.Now().UTC()).Error
			models.Close(db)
			if err != nil {
				t.Fatal(err)
			}
			out, err = cli("audit")
			if exitCode(err) != 1 || !strings.Contains(out, "ORDER_WITHOUT_REDEMPTION") {
				t.Fatalf("audit of a stray order: exit %d, %q", exitCode(err), out)
			}
			if out, err = cli("audit", "--external-orders"); err != nil {
				t.Fatalf("audit --external-orders: %q %v", out, err)
			}
		})
	}
}

func TestUnknownCommand(t *testing.T) {
	err := run(context.Background(), []string{"frobnicate"}, io.Discard, io.Discard)
	if exitCode(err) != 2 {
		t.Fatalf("exit code %d, want 2", exitCode(err))
	}
	if exitCode(run(context.Background(), nil, io.Discard, io.Discard)) != 2 {
		t.Fatal("no command should exit 2")
	}
	_ = fmt.Sprint()
}

// A schedule that is not a cron spec stops serve before it listens, naming
// the flag; "off" is a schedule serve accepts.
func TestServeSchedules(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tt := range []struct{ flag, job string }{{"--reconcile-schedule", "reconciliation"}, {"--statement-schedule", "daily-statement"}} {
		err := run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--database-url", t.TempDir() + "/coupond.db",
			tt.flag, "every full moon"}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.flag) || !strings.Contains(err.Error(), tt.job) {
			t.Fatalf("serve %s with a bad schedule: %v, want an error naming the flag and job %s", tt.flag, err, tt.job)
		}
	}
	addr, _ := startServe(t, t.TempDir()+"/coupond.db", "--reconcile-schedule", "off", "--statement-schedule", "off")
	if status, body, _ := get(t, "http://"+addr+"/healthz", ""); status != 200 {
		t.Fatalf("healthz %d %q with both schedules off", status, body)
	}
}

// TestReadmeFlow follows the README against a server with default settings:
// store, campaign, coupons, 100 concurrent redeems of one coupon with exactly
// one SUCCEEDED, a replayed request id, and a refund.
func TestReadmeFlow(t *testing.T) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			dbURL := databaseURLs(t)[name](t)
			addr, out := startServe(t, dbURL)
			admin := token(t, out.String(), "ADMIN")
			st := gql(t, addr, admin, `mutation($in: CreateStoreInput!) { createStore(input: $in) { id code } }`,
				map[string]any{"in": map[string]any{"code": "SH009", "name": "上海静安店"}})["createStore"].(map[string]any)
			camp := gql(t, addr, admin, `mutation($in: CreateCampaignInput!) { createCampaign(input: $in) { id } }`,
				map[string]any{"in": map[string]any{"name": "满30减10", "type": "CASH", "value": 1000, "minSpend": 3000,
					"validFrom": "2026-01-01T00:00:00Z", "validTo": "2099-01-01T00:00:00Z", "storeIds": []string{}, "totalQuantity": 10000,
					"refundWindowMinutes": 1440}})["createCampaign"].(map[string]any)
			iss := gql(t, addr, admin, `mutation($in: IssueCouponsInput!) { issueCoupons(input: $in) { issued codes } }`,
				map[string]any{"in": map[string]any{"campaignId": camp["id"], "count": 100}})["issueCoupons"].(map[string]any)
			code := services.FormatCouponCode(iss["codes"].([]any)[0].(string))
			var cliOut bytes.Buffer
			if err := run(context.Background(), []string{"token", "create", "--merchant", "demo", "--role", "CLERK", "--store", "SH009",
				"--database-url", dbURL}, &cliOut, io.Discard); err != nil {
				t.Fatal(err)
			}
			clerk := strings.TrimSpace(cliOut.String())
			redeem := `mutation($in: RedeemCouponInput!) { redeemCoupon(input: $in) { redeemNo status rejectReason } }`
			const n = 100
			results := make([]map[string]any, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					results[i] = gql(t, addr, clerk, redeem, map[string]any{"in": map[string]any{"code": strings.ToLower(code),
						"storeId": st["id"], "requestId": fmt.Sprintf("pos1-%03d", i), "orderAmount": 4500}})["redeemCoupon"].(map[string]any)
				}()
			}
			wg.Wait()
			var winner map[string]any
			for _, r := range results {
				switch r["status"] {
				case "SUCCEEDED":
					if winner != nil {
						t.Fatal("two redemptions succeeded")
					}
					winner = r
				case "REJECTED":
					if r["rejectReason"] != "COUPON_NOT_AVAILABLE" {
						t.Fatalf("rejected with %v", r["rejectReason"])
					}
				default:
					t.Fatalf("status %v", r["status"])
				}
			}
			if winner == nil {
				t.Fatal("no redemption succeeded")
			}
			var req string
			for i, r := range results {
				if r["redeemNo"] == winner["redeemNo"] {
					req = fmt.Sprintf("pos1-%03d", i)
				}
			}
			again := gql(t, addr, clerk, redeem, map[string]any{"in": map[string]any{"code": code, "storeId": st["id"],
				"requestId": req, "orderAmount": 4500}})["redeemCoupon"].(map[string]any)
			if again["redeemNo"] != winner["redeemNo"] || again["status"] != "SUCCEEDED" {
				t.Fatalf("replay %v, want %v", again, winner)
			}
			ref := gql(t, addr, clerk, `mutation($in: RefundRedemptionInput!) { refundRedemption(input: $in) { status redemption { coupon { status } } } }`,
				map[string]any{"in": map[string]any{"redeemNo": winner["redeemNo"], "requestId": "refund-0001", "reason": "dish not served"}})
			if ref["refundRedemption"].(map[string]any)["redemption"].(map[string]any)["coupon"].(map[string]any)["status"] != "REFUNDED" {
				t.Fatalf("refund %v", ref)
			}
		})
	}
}

// TestTwoServersConverge runs two servers with jobs on one database: held
// reservations nobody confirms are released by compensation exactly once each,
// whichever server gets to them, and the audit finds nothing wrong.
func TestTwoServersConverge(t *testing.T) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			dbURL := databaseURLs(t)[name](t)
			fast := []string{"--hold-timeout", "1s", "--compensate-every", "1s", "--limit-token-rps", "0", "--limit-store-rps", "0"}
			addr, out := startServe(t, dbURL, fast...)
			admin := token(t, out.String(), "ADMIN")
			startServe(t, dbURL, fast...) // a second replica on the same database
			codes := gql(t, addr, admin, `{ coupons(first: 20, filter: {status: UNUSED}) { edges { node { code } } } }`, nil)
			edges := codes["coupons"].(map[string]any)["edges"].([]any)
			for i, e := range edges {
				code := e.(map[string]any)["node"].(map[string]any)["code"]
				r := gql(t, addr, admin, `mutation($in: RedeemCouponInput!) { reserveCoupon(input: $in) { status } }`,
					map[string]any{"in": map[string]any{"code": code, "storeId": "1", "requestId": fmt.Sprintf("held-%d", i), "orderAmount": 9000}})
				if st := r["reserveCoupon"].(map[string]any)["status"]; st != "PROCESSING" {
					t.Fatalf("reserve %d: %v", i, st)
				}
			}
			const released = `{ redemptions(first: 100, filter: {status: RELEASED}) { edges { node { releaseReason coupon { status version } } } } }`
			deadline := time.Now().Add(20 * time.Second)
			var rows []any
			for time.Now().Before(deadline) {
				rows = gql(t, addr, admin, released, nil)["redemptions"].(map[string]any)["edges"].([]any)
				if len(rows) >= len(edges) {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			if len(rows) != len(edges) {
				t.Fatalf("%d of %d reservations released in time", len(rows), len(edges))
			}
			for _, r := range rows {
				n := r.(map[string]any)["node"].(map[string]any)
				c := n["coupon"].(map[string]any)
				if n["releaseReason"] != "HOLD_TIMEOUT" || c["status"] != "UNUSED" || c["version"] != 2.0 {
					t.Fatalf("released %v: want HOLD_TIMEOUT and an UNUSED coupon at version 2 (released once)", n)
				}
			}
			var auditOut bytes.Buffer
			if err := run(context.Background(), []string{"audit", "--database-url", dbURL, "--hold-timeout", "1s", "--compensate-every", "1s"},
				&auditOut, io.Discard); err != nil {
				t.Fatalf("audit: %v\n%s", err, auditOut.String())
			}
		})
	}
}

// metricValue is the value of an unlabelled metric in a Prometheus text
// exposition, or -1.
func metricValue(exposition, name string) float64 {
	for _, line := range strings.Split(exposition, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}
