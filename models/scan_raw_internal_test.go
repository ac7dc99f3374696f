package models

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gorm.io/gorm"
)

// scanRaw and scanRows answer as db.Raw(...).Scan and a built query's Scan
// do (rows, scalars, no row, errors, RowsAffected), on both databases, and skips the rendering of the statement
// with its arguments that Scan does for its recorder, which allocates at
// least once for each argument.
func TestScanRawAsScan(t *testing.T) {
	urls := map[string]string{"sqlite": filepath.Join(t.TempDir(), "scan.db")}
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		urls["postgres"] = u
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			db, err := Open(context.Background(), url, OpenOptions{MaxOpenConns: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer Close(db)
			three := "SELECT 1 AS id, 'a' AS name UNION ALL SELECT 2, 'b' UNION ALL SELECT 3, 'c' ORDER BY id"
			type row struct {
				ID   int64
				Name string
			}
			var viaScan, viaRaw []row
			a, b := db.Raw(three).Scan(&viaScan), scanRaw(db, &viaRaw, three)
			if a.Error != nil || b.Error != nil || a.RowsAffected != 3 || b.RowsAffected != 3 ||
				len(viaRaw) != 3 || viaRaw[2] != (row{3, "c"}) || viaRaw[0] != viaScan[0] {
				t.Fatalf("rows: Scan %v %d %v, scanRaw %v %d %v", a.Error, a.RowsAffected, viaScan, b.Error, b.RowsAffected, viaRaw)
			}
			built := func() *gorm.DB {
				return db.Table("(SELECT 1 AS id, 'a' AS name UNION ALL SELECT 2, 'b' UNION ALL SELECT 3, 'c') AS t").
					Where("id > ?", 1).Order("id DESC")
			}
			var builtScan, builtRows []row
			a, b = built().Scan(&builtScan), scanRows(built(), &builtRows)
			if a.Error != nil || b.Error != nil || b.RowsAffected != 2 || len(builtRows) != 2 || builtRows[0] != (row{3, "c"}) ||
				builtRows[1] != builtScan[1] {
				t.Fatalf("built query: Scan %v %v, scanRows %v %d %v", a.Error, builtScan, b.Error, b.RowsAffected, builtRows)
			}
			var n int64
			if err := scanRaw(db, &n, "SELECT ? + 1", 41).Error; err != nil || n != 42 {
				t.Fatalf("scalar: %d, %v", n, err)
			}
			none := row{ID: 7}
			if res := scanRaw(db, &none, "SELECT 1 AS id, 'x' AS name WHERE 1 = 0"); res.Error != nil || res.RowsAffected != 0 || none.ID != 7 {
				t.Fatalf("no row: %v %d %v", res.Error, res.RowsAffected, none)
			}
			if err := scanRaw(db, &n, "SELECT no_such_column FROM no_such_table").Error; err == nil {
				t.Fatal("no error from a bad statement")
			}
			if name != "sqlite" {
				return
			}
			args := make([]any, 2000)
			for i := range args {
				args[i] = i
			}
			big := "SELECT 1 WHERE 0 IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(args)), ", ") + ")"
			scan := testing.AllocsPerRun(5, func() { _ = db.Raw(big, args...).Scan(&n) })
			raw := testing.AllocsPerRun(5, func() { _ = scanRaw(db, &n, big, args...) })
			if raw > scan-float64(len(args))/2 {
				t.Fatalf("scanRaw allocates %.0f a call, Scan %.0f: want at least one less for every two of the %d arguments", raw, scan, len(args))
			}
			t.Logf("allocations a call with %d arguments: Scan %.0f, scanRaw %.0f", len(args), scan, raw)
		})
	}
}
