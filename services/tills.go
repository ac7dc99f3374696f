package services

import (
	"context"
	"sync/atomic"
	"time"
)

// tills tells background work of this process whether redemptions are being
// served, so that work paces itself beside them and runs at full speed when
// they are quiet. It reads the real clock, not the service's: it measures
// how the process shares its cores, not business time.
type tills struct {
	last atomic.Int64
}

// tillsQuiet is how long after the last redemption the tills count as quiet.
const tillsQuiet = 250 * time.Millisecond

// served notes a redemption request answered now.
func (t *tills) served() {
	if t != nil {
		t.last.Store(time.Now().UnixNano())
	}
}

// busy reports whether a redemption was answered within tillsQuiet.
func (t *tills) busy() bool {
	return t != nil && time.Since(time.Unix(0, t.last.Load())) < tillsQuiet
}

// exportPaceRows is how many rows an export streams between two looks at the
// tills: one query's worth beside them (exportBusyBatch).
const exportPaceRows = exportBusyBatch

// paced returns s streaming as fast as it can while the tills are quiet and,
// while they are busy, resting after every exportPaceRows rows as long as
// those rows took (read, encoded and written to the client), so an export
// beside the redemptions takes at most about half of a core and leaves them
// the rest. It stops early when ctx ends.
func paced[T any](ctx context.Context, t *tills, s Stream[T]) Stream[T] {
	return func(fn func(T) error) error {
		n, since := 0, time.Now()
		return s(func(row T) error {
			if err := fn(row); err != nil {
				return err
			}
			if n++; n < exportPaceRows {
				return nil
			}
			n = 0
			if t.busy() && !rest(ctx, time.Since(since)) {
				return ctx.Err()
			}
			since = time.Now()
			return nil
		})
	}
}
