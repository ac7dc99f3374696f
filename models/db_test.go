package models_test

import (
	"context"
	"testing"

	"coupond/internal/testdb"
	"coupond/models"
)

func TestOpenWarmsThePool(t *testing.T) {
	urls := map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return testdb.SQLiteURL(t) },
		"postgres": func(t *testing.T) string { u, _ := testdb.PostgresURL(t); return u },
	}
	for dialect, url := range urls {
		t.Run(dialect, func(t *testing.T) {
			u := url(t)
			for _, tt := range []struct {
				name string
				warm bool
				want int
			}{{"cold", false, 1}, {"warm", true, 5}} {
				t.Run(tt.name, func(t *testing.T) {
					db, err := models.Open(context.Background(), u, models.OpenOptions{MaxOpenConns: 5, Warm: tt.warm})
					if err != nil {
						t.Fatal(err)
					}
					defer models.Close(db)
					sqlDB, _ := db.DB()
					if got := sqlDB.Stats().OpenConnections; got != tt.want {
						t.Errorf("open connections after Open: %d, want %d", got, tt.want)
					}
				})
			}
		})
	}
}
