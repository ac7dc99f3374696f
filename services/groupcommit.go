package services

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"gorm.io/gorm"
)

// groupCommit runs the redemption transactions of concurrent requests on
// SQLite together: one transaction, one savepoint per request, one commit.
//
// SQLite has one writer, so its transactions run one after another anyway,
// and with synchronous=FULL (the embedded default) every commit waits for an
// fsync of the write-ahead log. Sharing the commit among the requests that
// queued up meanwhile pays that fsync once per batch instead of once per
// redemption, without giving up durability: no request is answered before
// the commit that holds its work returned.
//
// Each request's work runs inside its own savepoint: when it fails, only its
// savepoint is rolled back and the others go on, exactly as if it had run
// alone. Requests run in arrival order, each seeing the work of those before
// it, as serial transactions would. If the commit itself fails, every
// request of the batch gets the error (nothing of the batch was written).
//
// There is no background goroutine: the first request that finds nobody
// committing leads; after its batch it hands the lead to the oldest request
// still waiting, so no request serves others for longer than one batch.
type groupCommit struct {
	db *gorm.DB
	// max bounds a batch.
	max int
	// tills hears of every request that waits for a batch.
	tills *tills

	mu      sync.Mutex
	queue   []*groupReq
	leading bool
}

type groupReq struct {
	ctx  context.Context
	fn   func(tx *gorm.DB) error
	done chan error
}

// errLead tells a waiting request that it now leads.
var errLead = errors.New("lead the next batch")

// groupCommitMax bounds a batch, so one commit does not hold the writer for
// long.
const groupCommitMax = 64

func newGroupCommit(db *gorm.DB, t *tills) *groupCommit {
	return &groupCommit{db: db, max: groupCommitMax, tills: t}
}

// run runs fn inside a transaction shared with concurrent callers and
// returns fn's error, or the commit's. It returns only after the commit, so
// success means fn's writes are durable. A caller whose ctx ends before its
// turn gets ctx's error and fn never runs.
func (g *groupCommit) run(ctx context.Context, fn func(tx *gorm.DB) error) error {
	r := &groupReq{ctx: ctx, fn: fn, done: make(chan error, 1)}
	g.mu.Lock()
	behind := len(g.queue) >= g.max
	g.queue = append(g.queue, r)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	if behind {
		// More wait than the next batch takes.
		g.tills.waited()
	}
	for {
		if lead {
			g.lead()
		}
		err := <-r.done
		if err != errLead {
			return err
		}
		lead = true
	}
}

// lead commits one batch from the head of the queue, then hands the lead to
// the oldest waiting request, or gives it up when nobody waits.
func (g *groupCommit) lead() {
	g.mu.Lock()
	n := min(len(g.queue), g.max)
	batch := append([]*groupReq(nil), g.queue[:n]...)
	g.queue = g.queue[n:]
	g.mu.Unlock()

	results := g.commit(batch)

	g.mu.Lock()
	if len(g.queue) == 0 {
		g.leading = false
	} else {
		g.queue[0].done <- errLead
	}
	g.mu.Unlock()
	for i, r := range batch {
		r.done <- results[i]
	}
}

// commit runs the batch in one transaction and returns each request's
// outcome.
func (g *groupCommit) commit(batch []*groupReq) []error {
	results := make([]error, len(batch))
	// The transaction is the batch's, not any one request's: a request that
	// goes away must not roll back the others (and interrupting SQLite in a
	// write rolls back the whole transaction), so its statements run
	// without its cancellation; it is skipped if it ended before its turn.
	err := g.db.WithContext(context.Background()).Transaction(func(tx *gorm.DB) error {
		for i, r := range batch {
			if err := r.ctx.Err(); err != nil {
				results[i] = err
				continue
			}
			sp := "gc" + strconv.Itoa(i)
			if err := tx.SavePoint(sp).Error; err != nil {
				return err
			}
			if err := runSafely(r.fn, tx.WithContext(context.WithoutCancel(r.ctx))); err != nil {
				results[i] = err
				if err := tx.RollbackTo(sp).Error; err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		for i := range results {
			if results[i] == nil {
				results[i] = fmt.Errorf("group commit: %w", err)
			}
		}
	}
	return results
}

// runSafely runs fn, turning a panic into an error so that one request's
// bug does not take the batch's transaction and its leader down with it.
func runSafely(fn func(tx *gorm.DB) error, tx *gorm.DB) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in a grouped transaction: %v", p)
		}
	}()
	return fn(tx)
}
