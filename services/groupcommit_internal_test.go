package services

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
)

// Fifty requests arrive while the first one's work is still running: the
// first commits alone, the other forty-nine share the second commit. Every
// third request fails after writing, and a failure rolls back only its own
// savepoint: exactly the others' rows are there afterwards.
func TestGroupCommitSharesOneCommitAndIsolatesFailures(t *testing.T) {
	db := testdb.SQLite(t)
	if err := db.Exec("CREATE TABLE gc_probe (n INTEGER PRIMARY KEY)").Error; err != nil {
		t.Fatal(err)
	}
	g := newGroupCommit(db, nil)
	const n = 50
	release := make(chan struct{})
	first := make(chan struct{})
	boom := errors.New("kitchen on fire")
	var wg sync.WaitGroup
	errs := make([]error, n)
	batchOf := make([]int64, n)
	var batch atomic.Int64
	run := func(i int) {
		defer wg.Done()
		errs[i] = g.run(context.Background(), func(tx *gorm.DB) error {
			if i == 0 {
				batch.Add(1)
				close(first)
				<-release
			}
			batchOf[i] = batch.Load()
			if err := tx.Exec("INSERT INTO gc_probe (n) VALUES (?)", i).Error; err != nil {
				return err
			}
			if i%3 == 1 {
				return boom
			}
			return nil
		})
	}
	wg.Add(1)
	go run(0)
	<-first
	for i := 1; i < n; i++ {
		wg.Add(1)
		go run(i)
	}
	// Let the others queue behind the first batch before it commits.
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		q := len(g.queue)
		g.mu.Unlock()
		if q == n-1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	batch.Add(1)
	close(release)
	wg.Wait()

	var rows []int
	if err := db.Raw("SELECT n FROM gc_probe ORDER BY n").Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	var want []int
	for i := range n {
		switch {
		case i%3 == 1:
			if !errors.Is(errs[i], boom) {
				t.Fatalf("request %d: err %v, want its own failure", i, errs[i])
			}
		case errs[i] != nil:
			t.Fatalf("request %d failed: %v", i, errs[i])
		default:
			want = append(want, i)
		}
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %v, want %v", rows, want)
	}
	for i := range rows {
		if rows[i] != want[i] {
			t.Fatalf("rows %v, want %v", rows, want)
		}
	}
	// The forty-nine that queued ran in one batch after the first.
	for i := 1; i < n; i++ {
		if batchOf[i] != 2 {
			t.Fatalf("request %d ran in batch %d, want all queued requests in batch 2", i, batchOf[i])
		}
	}
}

// A request whose context ended before its turn never runs; a request that
// panics fails alone; a failed commit fails every request of its batch.
func TestGroupCommitCancelPanicAndCommitFailure(t *testing.T) {
	db := testdb.SQLite(t)
	if err := db.Exec("CREATE TABLE gc_probe (n INTEGER PRIMARY KEY)").Error; err != nil {
		t.Fatal(err)
	}
	g := newGroupCommit(db, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	if err := g.run(ctx, func(tx *gorm.DB) error { ran = true; return nil }); !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("cancelled request: err %v, ran %v", err, ran)
	}
	if err := g.run(context.Background(), func(tx *gorm.DB) error {
		tx.Exec("INSERT INTO gc_probe (n) VALUES (1)")
		panic("bug")
	}); err == nil {
		t.Fatal("a panicking request succeeded")
	}
	if err := g.run(context.Background(), func(tx *gorm.DB) error {
		return tx.Exec("INSERT INTO gc_probe (n) VALUES (2)").Error
	}); err != nil {
		t.Fatal(err)
	}
	var rows []int
	db.Raw("SELECT n FROM gc_probe ORDER BY n").Scan(&rows)
	if len(rows) != 1 || rows[0] != 2 {
		t.Fatalf("rows %v, want [2]: the panicking request's insert must be rolled back", rows)
	}
	// A deferred foreign key violated by the batch makes the commit fail:
	// both requests of the batch get the error, and nothing is written.
	if err := db.Exec("CREATE TABLE gc_parent (id INTEGER PRIMARY KEY)").Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("CREATE TABLE gc_child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES gc_parent (id) DEFERRABLE INITIALLY DEFERRED)").Error; err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	g.leading = true // hold the lead so that both requests queue into one batch
	g.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = g.run(context.Background(), func(tx *gorm.DB) error {
				return tx.Exec("INSERT INTO gc_child (id, parent) VALUES (?, 99)", i+1).Error
			})
		}()
	}
	for {
		g.mu.Lock()
		q := len(g.queue)
		g.mu.Unlock()
		if q == 2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	g.lead()
	wg.Wait()
	for i, err := range errs {
		if err == nil {
			t.Fatalf("request %d succeeded although its batch's commit failed", i)
		}
	}
	var children int64
	db.Raw("SELECT count(*) FROM gc_child").Scan(&children)
	if children != 0 {
		t.Fatalf("%d children written by a failed commit", children)
	}
}
