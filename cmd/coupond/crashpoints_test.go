//go:build crashpoints

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"coupond/services"
)

func TestParseCrashAt(t *testing.T) {
	tests := []struct {
		give    string
		want    services.CrashPoint
		wantN   int64
		wantErr bool
	}{
		{give: "after-reserve-commit", want: services.CrashAfterReserveCommit, wantN: 1},
		{give: "after-order-created:7", want: services.CrashAfterOrderCreated, wantN: 7},
		{give: "after-confirm-commit:1", want: services.CrashAfterConfirmCommit, wantN: 1},
		{give: "after-confirm-commit:0", wantErr: true},
		{give: "after-confirm-commit:x", wantErr: true},
		{give: "before-anything", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			p, n, err := parseCrashAt(tt.give)
			if (err != nil) != tt.wantErr || p != tt.want || n != tt.wantN {
				t.Fatalf("parseCrashAt(%q) = %q, %d, %v", tt.give, p, n, err)
			}
		})
	}
}

// TestCrashAtHelper is the serve process of TestCrashAt, run as a child of
// the test binary so that it can kill itself.
func TestCrashAtHelper(t *testing.T) {
	args := os.Getenv("COUPOND_TEST_CRASH_ARGS")
	if args == "" {
		t.Skip("run by TestCrashAt")
	}
	err := run(context.Background(), strings.Split(args, "\n"), os.Stdout, os.Stderr)
	t.Fatalf("serve returned without crashing: %v", err)
}

// The tagged binary's serve --crash-at kills itself with SIGKILL at the
// point, before answering; the redemption committed there is the answer of
// the client's same-id retry after a restart.
func TestCrashAt(t *testing.T) {
	dbURL := t.TempDir() + "/coupond.db"
	// The demo data, seeded by a server stopped before the crashing one starts.
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	seeded := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--demo", "--addr", addr, "--database-url", dbURL, "--jobs=false"}, seeded, io.Discard)
	}()
	for start := time.Now(); !strings.Contains(seeded.String(), "listening on"); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("serve --demo did not start:\n%s", seeded.String())
		}
	}
	admin, clerk := token(t, seeded.String(), "ADMIN"), token(t, seeded.String(), "CLERK")
	codes := gql(t, addr, admin, `{ coupons(first: 2, filter: {status: UNUSED}) { edges { node { code } } } }`, nil)["coupons"].(map[string]any)["edges"].([]any)
	store := gql(t, addr, clerk, `{ viewer { storeIds } }`, nil)["viewer"].(map[string]any)["storeIds"].([]any)[0]
	http.DefaultClient.CloseIdleConnections()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashAtHelper$")
	cmd.Env = append(os.Environ(), "COUPOND_TEST_CRASH_ARGS="+strings.Join([]string{"serve", "--addr", addr,
		"--database-url", dbURL, "--jobs=false", "--crash-at", "after-confirm-commit:2"}, "\n"))
	var stderr syncBuffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("serve --crash-at did not start:\n%s", stderr.String())
		}
	}
	redeem := func(i int) (map[string]any, error) {
		code := codes[i].(map[string]any)["node"].(map[string]any)["code"]
		body, _ := json.Marshal(map[string]any{"query": `mutation($in: RedeemCouponInput!) { redeemCoupon(input: $in) { redeemNo status } }`,
			"variables": map[string]any{"in": map[string]any{"code": code, "storeId": store, "requestId": fmt.Sprintf("crash-%d", i), "orderAmount": 10000}}})
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+clerk)
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var r struct{ Data map[string]map[string]any }
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			return nil, err
		}
		return r.Data["redeemCoupon"], nil
	}
	if r, err := redeem(0); err != nil || r["status"] != "SUCCEEDED" {
		t.Fatalf("first redemption (the point's first pass): %v, %v", r, err)
	}
	if r, err := redeem(1); err == nil {
		t.Fatalf("second redemption answered %v; want the server dead before its answer", r)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("serve ended with %v, want killed by SIGKILL; stderr:\n%s", err, stderr.String())
	}
	m := regexp.MustCompile(`crash-at: after-confirm-commit reached 2 times, redemption (\S+): SIGKILL`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no crash line in stderr:\n%s", stderr.String())
	}

	// After a restart the same request id answers with what was committed.
	addr, _ = startServe(t, dbURL, "--jobs=false")
	r, err := redeem(1)
	if err != nil || r["status"] != "SUCCEEDED" || r["redeemNo"] != m[1] {
		t.Fatalf("retry after the restart: %v, %v; want SUCCEEDED %s", r, err, m[1])
	}
}
