package models_test

import (
	"fmt"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
)

// TestExportBatchesContinue reads the same rows in batches of 1, 3 and more
// than all: a batch boundary must neither drop nor repeat a row.
func TestExportBatchesContinue(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		fs := make([]models.Finding, 10)
		for i := range fs {
			key := fmt.Sprintf("k%d", i)
			fs[i] = models.Finding{MerchantID: 1, Kind: models.FindingRedemptionWithoutOrder, Details: key, DedupeKey: key,
				Status: models.FindingOpen, CreatedAt: now.Add(time.Duration(i) * time.Minute)}
		}
		if err := db.Exec("INSERT INTO merchants (id, code, name, timezone, created_at) VALUES (1, 'm', 'm', 'UTC', ?)", now).Error; err != nil {
			t.Fatal(err)
		}
		if _, err := models.InsertFindings(db, fs); err != nil {
			t.Fatal(err)
		}
		read := func(batch models.BatchSize) string {
			var got []string
			err := models.EachFindingForExport(db, 1, models.FindingFilter{From: now.Add(2 * time.Minute)}, batch,
				func(f models.Finding) error { got = append(got, f.Details); return nil })
			if err != nil {
				t.Fatal(err)
			}
			return fmt.Sprint(got)
		}
		want := "[k9 k8 k7 k6 k5 k4 k3 k2]"
		for _, batch := range []int{1, 3, 8, 100} {
			if got := read(models.Fixed(batch)); got != want {
				t.Errorf("batch %d: %s, want %s", batch, got, want)
			}
		}
		// A reader that changes pace between queries (an export beside
		// the tills) reads the same rows.
		sizes, i := []int{3, 1, 2}, 0
		changing := func() int { n := sizes[i%len(sizes)]; i++; return n }
		if got := read(changing); got != want {
			t.Errorf("batches of 3, 1, 2, ...: %s, want %s", got, want)
		}
	})
}
