package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"coupond/models"
	"coupond/services"
)

// coupond jobs list shows the operator the installation's runs, and with
// --merchant one merchant's, read from the database without a token.
func TestJobsList(t *testing.T) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			dbURL := databaseURLs(t)[name](t)
			ctx := context.Background()
			cli := func(args ...string) (string, error) {
				var out bytes.Buffer
				err := run(ctx, append(args, "--database-url", dbURL), &out, io.Discard)
				return out.String(), err
			}
			db, err := openDB(ctx, dbURL, models.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer models.Close(db)
			svc := services.New(db, services.Options{})
			m, err := svc.Merchants.Create(ctx, "acme", "Acme", "")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.JobRuns.RunJob(ctx, services.JobReconciliation, ""); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.JobRuns.Trigger(ctx, services.SystemActor(m.ID), services.JobCompensation); err != nil {
				t.Fatal(err)
			}
			out, err := cli("jobs", "list")
			if err != nil || !strings.Contains(out, "reconciliation") || strings.Contains(out, "compensation") {
				t.Fatalf("jobs list: %q %v; want the installation's reconciliation run only", out, err)
			}
			out, err = cli("jobs", "list", "--merchant", "acme")
			if err != nil || !strings.Contains(out, "compensation") || strings.Contains(out, "reconciliation") {
				t.Fatalf("jobs list --merchant: %q %v; want acme's compensation run only", out, err)
			}
			if _, err = cli("jobs", "list", "--merchant", "nobody"); err == nil {
				t.Fatal("an unknown merchant was listed")
			}
		})
	}
}
