package models_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"coupond/models"
)

// A unique violation from a raw statement is an expected outcome (a replayed
// request id) and must not be logged as an SQL error; other errors must be.
func TestLoggerSkipsUniqueViolations(t *testing.T) {
	urls := map[string]string{"sqlite": filepath.Join(t.TempDir(), "log.db")}
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		urls["postgres"] = u
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			db, err := models.Open(context.Background(), url, models.OpenOptions{MaxOpenConns: 1,
				Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			if err != nil {
				t.Fatal(err)
			}
			defer models.Close(db)
			if err := db.Exec("CREATE TEMP TABLE logger_probe (id INTEGER PRIMARY KEY, k TEXT UNIQUE)").Error; err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for range 2 {
				err = db.Raw("INSERT INTO logger_probe (id, k) VALUES (1, 'a') RETURNING id").Scan(&ids).Error
			}
			if err == nil {
				t.Fatal("second insert succeeded")
			}
			if strings.Contains(buf.String(), "sql error") {
				t.Fatalf("unique violation logged as an error: %s", buf.String())
			}
			_ = db.Raw("SELECT no_such_column FROM logger_probe").Scan(&ids).Error
			if !strings.Contains(buf.String(), "sql error") {
				t.Fatal("a real error was not logged")
			}
		})
	}
}
