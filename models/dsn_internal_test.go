package models

import (
	"net/url"
	"strings"
	"testing"
)

func TestSQLiteDSNDefaults(t *testing.T) {
	tests := []struct {
		name     string
		give     string
		wantPath string
		want     map[string]string
	}{
		{"empty is the default file, synced fully", "", DefaultSQLitePath,
			map[string]string{"_synchronous": "FULL", "_journal_mode": "WAL", "_txlock": "immediate", "_foreign_keys": "1"}},
		{"a path is synced fully", "/var/lib/coupond/c.db", "/var/lib/coupond/c.db",
			map[string]string{"_synchronous": "FULL"}},
		{"a sqlite URL is synced fully", "sqlite://data/c.db", "data/c.db",
			map[string]string{"_synchronous": "FULL", "_busy_timeout": "10000"}},
		{"NORMAL only when asked for", "data/c.db?_synchronous=NORMAL", "data/c.db",
			map[string]string{"_synchronous": "NORMAL", "_journal_mode": "WAL"}},
		{"other parameters keep the default", "data/c.db?_busy_timeout=500", "data/c.db",
			map[string]string{"_synchronous": "FULL", "_busy_timeout": "500"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dsn, err := sqliteDSN(tt.give)
			if err != nil {
				t.Fatal(err)
			}
			path, query, _ := strings.Cut(dsn, "?")
			if path != tt.wantPath {
				t.Errorf("path %q, want %q", path, tt.wantPath)
			}
			values, err := url.ParseQuery(query)
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range tt.want {
				if got := values[k]; len(got) != 1 || got[0] != want {
					t.Errorf("%s = %v, want %s (dsn %s)", k, got, want, dsn)
				}
			}
		})
	}
}

// TestSQLiteOpensSynchronousFull reads the pragma back from an open database,
// so a driver that ignored the DSN parameter would be caught.
func TestSQLiteOpensSynchronousFull(t *testing.T) {
	for _, tt := range []struct {
		name, query string
		want        int
	}{{"default", "", 2}, {"explicit NORMAL", "?_synchronous=NORMAL", 1}} {
		t.Run(tt.name, func(t *testing.T) {
			db, err := Open(t.Context(), t.TempDir()+"/c.db"+tt.query, OpenOptions{MaxOpenConns: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer Close(db)
			var got int
			if err := db.Raw("PRAGMA synchronous").Scan(&got).Error; err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("PRAGMA synchronous = %d, want %d", got, tt.want)
			}
		})
	}
}
