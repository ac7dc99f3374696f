// Package testdb opens a fresh, migrated database for each test: an SQLite file
// in the test's temporary directory, or a fresh schema on the PostgreSQL server
// named by TEST_DATABASE_URL.
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"gorm.io/gorm"

	"coupond/models"
)

// Each runs fn once per database, as subtests "sqlite" and "postgres". Without
// TEST_DATABASE_URL the PostgreSQL subtest is skipped, except under CI=true,
// where it fails: CI must never pass by skipping PostgreSQL.
func Each(t *testing.T, fn func(t *testing.T, db *gorm.DB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLite(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, Postgres(t)) })
}

// SQLite returns a migrated SQLite database in a temporary file.
func SQLite(t testing.TB) *gorm.DB {
	t.Helper()
	return open(t, t.TempDir()+"/coupond.db", nil)
}

// SQLiteURL returns the URL of a fresh, migrated SQLite file, for tests that
// start the command themselves.
func SQLiteURL(t testing.TB) string {
	t.Helper()
	u := t.TempDir() + "/coupond.db"
	models.Close(open(t, u, nil))
	return u
}

// Postgres returns a migrated PostgreSQL database in a schema of its own, dropped
// when the test ends.
func Postgres(t testing.TB) *gorm.DB {
	t.Helper()
	u, _ := PostgresURL(t)
	return open(t, u, nil)
}

// PostgresURL creates a fresh schema and returns a URL whose search_path selects
// it, and the schema's name. The schema is dropped when the test ends.
func PostgresURL(t testing.TB) (string, string) {
	t.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("TEST_DATABASE_URL is not set: PostgreSQL tests must run in CI")
		}
		t.Skip("TEST_DATABASE_URL is not set")
	}
	ctx := context.Background()
	admin, err := models.Open(ctx, base, models.OpenOptions{MaxOpenConns: 1})
	if err != nil {
		t.Fatalf("connect to %s: %v", base, err)
	}
	defer models.Close(admin)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	if err := admin.Exec("CREATE SCHEMA " + schema).Error; err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		admin, err := models.Open(ctx, base, models.OpenOptions{MaxOpenConns: 1})
		if err != nil {
			t.Errorf("connect for cleanup: %v", err)
			return
		}
		defer models.Close(admin)
		if err := admin.Exec("DROP SCHEMA " + schema + " CASCADE").Error; err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	pu, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse TEST_DATABASE_URL: %v", err)
	}
	q := pu.Query()
	q.Set("search_path", schema)
	pu.RawQuery = q.Encode()
	return pu.String(), schema
}

func open(t testing.TB, databaseURL string, opts *models.OpenOptions) *gorm.DB {
	t.Helper()
	o := models.OpenOptions{MaxOpenConns: 16}
	if opts != nil {
		o = *opts
	}
	db, err := models.Open(context.Background(), databaseURL, o)
	if err != nil {
		t.Fatalf("open %s: %v", databaseURL, err)
	}
	t.Cleanup(func() { _ = models.Close(db) })
	if _, err := models.Migrate(context.Background(), db); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return db
}
