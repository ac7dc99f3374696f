package main

import (
	"context"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"coupond/internal/testdb"
	"coupond/internal/testreplica"
)

// --read-database-url is repeatable; COUPOND_READ_DATABASE_URL holds a
// comma-separated list, which the flag replaces.
func TestReadDatabaseURLFlag(t *testing.T) {
	tests := []struct {
		name string
		env  string
		args []string
		want []string
	}{
		{name: "none", want: nil},
		{name: "env", env: "postgres://a/x, postgres://b/x", want: []string{"postgres://a/x", "postgres://b/x"}},
		{name: "flags", args: []string{"--read-database-url", "postgres://a/x", "--read-database-url", "postgres://b/x"},
			want: []string{"postgres://a/x", "postgres://b/x"}},
		{name: "flag wins", env: "postgres://a/x", args: []string{"--read-database-url", "postgres://c/x"}, want: []string{"postgres://c/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := lookupEnv
			t.Cleanup(func() { lookupEnv = old })
			lookupEnv = func(k string) (string, bool) {
				if k == "COUPOND_READ_DATABASE_URL" && tt.env != "" {
					return tt.env, true
				}
				return "", false
			}
			fs := newFlagSet("serve", io.Discard)
			got := fs.List("read-database-url", "replica")
			if err := fs.parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Fatalf("got %q, want %q", *got, tt.want)
			}
		})
	}
}

// serve refuses replicas without a PostgreSQL primary and an unreachable
// replica; with a real streaming replica it reports the replica's lag in
// /metrics and through readReplicas.
func TestServeReadReplica(t *testing.T) {
	err := run(context.Background(), []string{"serve", "--addr", freeAddr(t), "--database-url", t.TempDir() + "/coupond.db",
		"--read-database-url", "postgres://postgres@127.0.0.1:5432/test"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--read-database-url") {
		t.Fatalf("replicas on SQLite: %v", err)
	}
	primary, _ := testdb.PostgresURL(t)
	err = run(context.Background(), []string{"serve", "--addr", freeAddr(t), "--database-url", primary,
		"--read-database-url", "postgres://postgres@127.0.0.1:1/test?connect_timeout=2"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--read-database-url") || !strings.Contains(err.Error(), "127.0.0.1:1/test") {
		t.Fatalf("unreachable replica: %v", err)
	}

	// Migrate first, so that the replica starts with the schema.
	if err := run(context.Background(), []string{"migrate", "--database-url", primary}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	rep := testreplica.Start(t, primary)
	addr, out := startServe(t, primary, "--read-database-url", rep.URL, "--jobs=false")
	admin := token(t, out.String(), "ADMIN")
	data := gql(t, addr, admin, `{ readReplicas { name up inRecovery replayPaused lagSeconds error } }`, nil)
	reps := data["readReplicas"].([]any)
	if len(reps) != 1 {
		t.Fatalf("readReplicas: %v", reps)
	}
	r := reps[0].(map[string]any)
	if r["up"] != true || r["inRecovery"] != true || r["error"] != nil || !strings.HasPrefix(r["name"].(string), "127.0.0.1:") {
		t.Fatalf("readReplicas: %v", r)
	}
	_, metrics, _ := get(t, "http://"+addr+"/metrics", "")
	if !strings.Contains(metrics, `coupond_read_replica_up{replica="`+r["name"].(string)+`"} 1`) ||
		!strings.Contains(metrics, "coupond_read_replica_lag_seconds{") {
		t.Fatalf("replica metrics missing:\n%s", metrics)
	}
	// Lists read through the replica answer once it has replayed the demo.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		data = gql(t, addr, admin, `{ coupons(first: 5) { edges { node { code } } } }`, nil)
		if n := len(data["coupons"].(map[string]any)["edges"].([]any)); n == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("coupons through the replica: %v", data)
		}
	}
}
