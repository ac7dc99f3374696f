package perf

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// vmDir holds the kernel's writeback settings (a variable for tests).
var vmDir = "/proc/sys/vm"

// DefaultDirtyBackgroundBytes is the kernel's vm.dirty_background_bytes a
// run sets by default: what docs/operations.md advises for a PostgreSQL
// host ("Kernel writeback on the PostgreSQL host").
//
// Why: PostgreSQL 15 extends a table or index by writing a page of zeros
// through the page cache, and nothing flushes that write until a
// checkpoint. At the kernel's defaults (background writeback from 10% of
// memory, pages written once 30 s old) those pages gather for 30 s and go
// to disk in one burst: 60-75 MB every 30 s at 1,300 redemptions a second
// in probes, while each commit waits for its own WAL flush on the same
// disk. The burst held every commit in flight for 40-70 ms. From 8 MiB on,
// the kernel writes them back in steps of a few megabytes instead.
const DefaultDirtyBackgroundBytes = 8 << 20

// Writeback is the kernel's dirty-page writeback settings.
type Writeback struct {
	BackgroundBytes    int64 `json:"dirty_background_bytes"`
	BackgroundRatio    int64 `json:"dirty_background_ratio"`
	ExpireCentisecs    int64 `json:"dirty_expire_centisecs"`
	WritebackCentisecs int64 `json:"dirty_writeback_centisecs"`
}

// String says when the kernel starts writing dirty pages back.
func (w Writeback) String() string {
	from := fmt.Sprintf("from %d%% of memory dirty", w.BackgroundRatio)
	if w.BackgroundBytes > 0 {
		from = fmt.Sprintf("from %s dirty", mib(w.BackgroundBytes))
	}
	return fmt.Sprintf("background writeback %s, pages written once %.0f s old, checked every %.0f s", from,
		float64(w.ExpireCentisecs)/100, float64(w.WritebackCentisecs)/100)
}

func mib(b int64) string {
	if b%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", b>>20)
	}
	return fmt.Sprintf("%d bytes", b)
}

// HostWriteback records the host's writeback settings before a run and
// during it, and whether the run set them.
type HostWriteback struct {
	Before Writeback `json:"before"`
	During Writeback `json:"during"`
	// Set is true when the run set vm.dirty_background_bytes itself (and
	// gave the host its own settings back afterwards).
	Set bool `json:"set"`
	// Err says why the run could not set it, when it tried.
	Err string `json:"error,omitempty"`
}

// readWriteback reads the kernel's writeback settings.
func readWriteback() (Writeback, error) {
	var w Writeback
	for _, f := range []struct {
		name string
		to   *int64
	}{
		{"dirty_background_bytes", &w.BackgroundBytes},
		{"dirty_background_ratio", &w.BackgroundRatio},
		{"dirty_expire_centisecs", &w.ExpireCentisecs},
		{"dirty_writeback_centisecs", &w.WritebackCentisecs},
	} {
		b, err := os.ReadFile(filepath.Join(vmDir, f.name))
		if err != nil {
			return w, err
		}
		if *f.to, err = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err != nil {
			return w, fmt.Errorf("vm.%s: %w", f.name, err)
		}
	}
	return w, nil
}

// applyWriteback gives the kernel's background writeback threshold the
// value of w: bytes when w.BackgroundBytes is set, a ratio otherwise (the
// kernel keeps one of the two and zeroes the other).
func applyWriteback(w Writeback) error {
	name, v := "dirty_background_ratio", w.BackgroundRatio
	if w.BackgroundBytes > 0 {
		name, v = "dirty_background_bytes", w.BackgroundBytes
	}
	if err := os.WriteFile(filepath.Join(vmDir, name), []byte(strconv.FormatInt(v, 10)), 0o644); err != nil {
		return fmt.Errorf("set vm.%s: %w", name, err)
	}
	return nil
}

// setWriteback sets vm.dirty_background_bytes to bytes for a run and
// returns what it found and the function that gives the host its own
// setting back. bytes 0 leaves the host as it is. When the kernel refuses
// (not root, a read-only /proc/sys), the run goes on with the host's
// settings and the record says why.
func setWriteback(bytes int64) (*HostWriteback, func()) {
	before, err := readWriteback()
	if err != nil {
		return &HostWriteback{Err: err.Error()}, func() {}
	}
	hw := &HostWriteback{Before: before, During: before}
	if bytes <= 0 || before.BackgroundBytes == bytes {
		return hw, func() {}
	}
	during := before
	during.BackgroundBytes = bytes
	if err := applyWriteback(during); err != nil {
		hw.Err = err.Error()
		return hw, func() {}
	}
	if now, err := readWriteback(); err == nil {
		during = now
	}
	hw.During, hw.Set = during, true
	return hw, func() { _ = applyWriteback(before) }
}
