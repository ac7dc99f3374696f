package services

import (
	"context"
	"os"
	"testing"
	"time"

	"coupond/models"
)

func TestZZScale(t *testing.T) {
	u := os.Getenv("SCALE_URL")
	if u == "" {
		t.Skip()
	}
	db, err := models.Open(context.Background(), u, models.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc := New(db, Options{})
	r := svc.Reconciliation
	if os.Getenv("FULL") != "" {
		start := time.Now()
		vs, _, err := r.run(context.Background(), checks, yieldingRun, 0)
		t.Logf("full yielding run: %s, %d violations, %v", time.Since(start), len(vs), err)
		return
	}
	for _, c := range checks {
		if c.batch == "" {
			continue
		}
		start := time.Now()
		var rows []checkRow
		mode := yieldingRun
		mode.pause = 0
		ms, _ := models.Merchants(db, 0)
		if err := r.runBatches(context.Background(), db, mode, c, checkParams{now: time.Now(), refundCutoff: time.Now(), stuckCutoff: time.Now()}, ms, &rows); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		start = time.Now()
		q, args := expandBatch(c.sql, c.args(checkParams{now: time.Now(), refundCutoff: time.Now(), stuckCutoff: time.Now()}), nil)
		if err := r.runCheck(db, mode, q, args, &rows); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s batch=%s: %s, whole %s, %d rows", c.kind, c.batch, took, time.Since(start), len(rows))
	}
}
