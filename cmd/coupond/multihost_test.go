package main

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"coupond/internal/testdb"
	"coupond/models"
)

// multiHostURL turns a single-host PostgreSQL URL into a multi-host one whose
// first host is a loopback address where nothing listens, with the given
// target_session_attrs: the shape docs/operations.md gives for reaching the
// primary of a Patroni cluster without a proxy.
func multiHostURL(t *testing.T, single, attrs string) string {
	t.Helper()
	u, err := url.Parse(single)
	if err != nil {
		t.Fatal(err)
	}
	dead := freeAddr(t)
	u.Host = dead + "," + u.Host
	q := u.Query()
	q.Set("target_session_attrs", attrs)
	q.Set("connect_timeout", "2")
	u.RawQuery = q.Encode()
	return u.String()
}

// A multi-host URL with target_session_attrs=read-write: serve skips the dead
// first host, reaches the writable one and redeems through it.
func TestServeMultiHostURL(t *testing.T) {
	single, _ := testdb.PostgresURL(t)
	dbURL := multiHostURL(t, single, "read-write")
	if !strings.Contains(dbURL, ",127.0.0.1:") && !strings.Contains(dbURL, ",localhost:") {
		t.Fatalf("not a multi-host URL: %s", dbURL)
	}
	addr, out := startServe(t, dbURL)
	clerk, admin := token(t, out.String(), "CLERK"), token(t, out.String(), "ADMIN")
	data := gql(t, addr, admin, `{ coupons(first: 1, filter: {status: UNUSED}) { edges { node { code } } } }`, nil)
	code := data["coupons"].(map[string]any)["edges"].([]any)[0].(map[string]any)["node"].(map[string]any)["code"].(string)
	stores := gql(t, addr, clerk, `{ viewer { storeIds } }`, nil)["viewer"].(map[string]any)["storeIds"].([]any)
	red := gql(t, addr, clerk, `mutation($in: RedeemCouponInput!) { redeemCoupon(input: $in) { status } }`,
		map[string]any{"in": map[string]any{"code": code, "storeId": stores[0], "requestId": "multi-host-1", "orderAmount": 10000}})
	if st := red["redeemCoupon"].(map[string]any)["status"]; st != "SUCCEEDED" {
		t.Fatalf("redeem through the multi-host URL: %v", st)
	}
}

// target_session_attrs=read-write refuses a server whose sessions are read
// only (as a standby's are): coupond never opens its pool on a standby.
func TestMultiHostURLRefusesReadOnly(t *testing.T) {
	single, _ := testdb.PostgresURL(t)
	u, err := url.Parse(multiHostURL(t, single, "read-write"))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("options", "-c default_transaction_read_only=on")
	u.RawQuery = q.Encode()
	db, err := models.Open(context.Background(), u.String(), models.OpenOptions{MaxOpenConns: 1})
	if err == nil {
		_ = models.Close(db)
		t.Fatal("opened a read-only server with target_session_attrs=read-write")
	}
	if !strings.Contains(err.Error(), "read") {
		t.Errorf("error %v does not say the server was read only", err)
	}
}
