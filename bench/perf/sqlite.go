package perf

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"coupond/bench/harness"
	"coupond/bench/load"
)

// SQLiteRow is the embedded database's knee and latency at one synchronous
// setting.
type SQLiteRow struct {
	Synchronous string     `json:"synchronous"`
	DatabaseURL string     `json:"database_url"`
	Ramp        []Step     `json:"ramp"`
	RampKnee    float64    `json:"ramp_knee_per_sec"`
	KneeReason  string     `json:"knee_reason"`
	Knee        float64    `json:"knee_per_sec"`
	KneeSteps   []KneeStep `json:"knee_steps"`
	Half        load.Stats `json:"half_knee"`
	Audit       int        `json:"audit_violations"`
}

// sqliteRows measures the embedded default (synchronous FULL) and the
// explicit NORMAL setting with the same scenarios, one after the other: a
// ramp, the step-down to a sustained knee, and a constant run at half of it.
func sqliteRows(ctx context.Context, cfg Config, res *Result) error {
	for _, mode := range []string{"FULL", "NORMAL"} {
		row, err := sqliteRow(ctx, cfg, mode)
		if err != nil {
			return fmt.Errorf("%s: %w", mode, err)
		}
		res.SQLite = append(res.SQLite, row)
	}
	return nil
}

func sqliteRow(ctx context.Context, cfg Config, mode string) (SQLiteRow, error) {
	env := cfg.Env
	dir := filepath.Join(env.Dir, "sqlite-"+mode)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return SQLiteRow{}, err
	}
	defer os.RemoveAll(dir)
	dbURL := filepath.Join(dir, "coupond.db")
	if mode != "FULL" {
		// FULL is the default; NORMAL only on request, as the README says.
		dbURL += "?_synchronous=" + mode
	}
	row := SQLiteRow{Synchronous: mode, DatabaseURL: dbURL}
	m, err := env.CreateMerchant(ctx, dbURL, "bench")
	if err != nil {
		return row, err
	}
	srv, err := env.StartServer(ctx, harness.ServerConfig{Name: "sqlite-" + mode, DatabaseURL: dbURL, Jobs: false})
	if err != nil {
		return row, err
	}
	defer srv.Stop()
	admin := &harness.Client{URL: srv.URL(), Token: m.AdminToken}
	storeID, err := harness.CreateStore(ctx, admin, "S1")
	if err != nil {
		return row, err
	}
	clerk, err := env.ClerkToken(ctx, dbURL, m.Code, "S1")
	if err != nil {
		return row, err
	}
	n := 150_000
	rampTo, rampOver, stepSecs := 2500.0, 25*time.Second, 15*time.Second
	if cfg.Quick {
		n, rampTo, rampOver, stepSecs = 40_000, 1500, 10*time.Second, 5*time.Second
	}
	camp, err := harness.CreateCampaign(ctx, admin, "sqlite-"+mode, n)
	if err != nil {
		return row, err
	}
	if _, err := harness.Issue(ctx, admin, camp, n); err != nil {
		return row, err
	}
	list, err := exportCodes(ctx, srv.URL(), camp, m.AdminToken)
	if err != nil {
		return row, err
	}
	// Every commit of FULL waits for the disk, so what was written before
	// (PostgreSQL's ledgers and checkpoints, dropped databases, and this
	// row's own 150,000 issued codes, which the kernel writes back within
	// half a minute) must have left it before the load starts, or the row
	// measures that write-back: in 061746Z the FULL ramp stalled at 197/s
	// while the row alone held 477/s.
	// PostgreSQL spreads a checkpoint's writes over minutes and syncs its
	// files at the end: after the rows on PostgreSQL one can be under way
	// (in 161715Z one ran through the first 9 s of FULL's ramp), and its
	// syncs would fall among FULL's. A CHECKPOINT finishes it at once.
	if err := env.Checkpoint(ctx); err != nil {
		cfg.logf("  no PostgreSQL checkpoint before the SQLite row: %v", err)
	}
	if err := quietDisk(ctx, time.Minute); err != nil {
		return row, err
	}
	pool := &codes{list: list}
	var rid atomic.Int64
	next := func(prefix string) func(int) load.Op {
		return func(int) load.Op {
			return load.Redeem("redeem", pool.take(), storeID, prefix+strconv.FormatInt(rid.Add(1), 10))
		}
	}
	url := srv.URL() + "/graphql"
	load.Run(ctx, load.Attack{Name: "warm-up", URL: url, Token: clerk, Pacer: load.Constant{PerSec: 50},
		Duration: 2 * time.Second, MaxOps: 100, Next: next("warm-")})
	cfg.logf("SQLite %s: ramp 50 -> %.0f/s over %s", mode, rampTo, rampOver)
	rctx, cancel := context.WithCancel(ctx)
	var slow atomic.Int64
	ramp := load.Run(rctx, load.Attack{Name: "ramp", URL: url, Token: clerk, Pacer: load.Ramp{From: 50, To: rampTo, Over: rampOver},
		Duration: rampOver, MaxOps: int(rampTo * rampOver.Seconds()), Timeout: 10 * time.Second, Next: next("ramp-"),
		OnDone: func(r *load.Record) {
			if r.Latency() > time.Second && slow.Add(1) > 200 {
				cancel()
			}
		}})
	cancel()
	row.Ramp, row.RampKnee, row.KneeReason = knee(ramp, load.Ramp{From: 50, To: rampTo, Over: rampOver})
	// Each run starts on an idle server, after warmUpFor at its rate, as the
	// rows on PostgreSQL do: the ramp ends far past the knee, and a step
	// that fails leaves requests queued behind SQLite's one writer. Two
	// seconds' rest were not always enough: in 174239Z the worst seconds of
	// the first step of both rows were its first four.
	settleAt := func(rate float64, prefix string) {
		waitIdle(ctx, srv, 30*time.Second)
		warmUpAt(ctx, url, clerk, rate, next(prefix))
	}
	// The knee's steps are PostgreSQL's (kneeSearch), so the two modes'
	// knees are both within 5% of what each sustains.
	row.Knee, err = kneeSearch(row.RampKnee, func(_ int, rate float64, _ kneeStepKind) (bool, error) {
		settleAt(rate, "warm-step-")
		recs := load.Run(ctx, load.Attack{Name: "knee", URL: url, Token: clerk, Pacer: load.Constant{PerSec: rate},
			Duration: stepSecs, MaxOps: int(rate*stepSecs.Seconds()) + 1, Next: next("step-")})
		st, ws := load.Summarise(recs, nil), windows(recs)
		held := st.P99 <= 100 && st.ErrorRate == 0 && st.Unknown == 0
		row.KneeSteps = append(row.KneeSteps, KneeStep{Rate: rate, P99: st.P99, ErrorRate: st.ErrorRate, Held: held, Windows: ws})
		cfg.logf("  %.0f/s: p99 %.1f ms, errors %.3f (%s)", rate, st.P99, st.ErrorRate, worstWindows(ws, 3))
		return held, nil
	})
	if err != nil {
		return row, err
	}
	settleAt(row.Knee/2, "warm-half-")
	row.Half = load.Summarise(load.Run(ctx, load.Attack{Name: "half", URL: url, Token: clerk, Pacer: load.Constant{PerSec: row.Knee / 2},
		Duration: stepSecs, MaxOps: int(row.Knee/2*stepSecs.Seconds()) + 1, Next: next("half-")}), nil)
	cfg.logf("SQLite %s: knee %.0f/s, p99 at half %.1f ms", mode, row.Knee, row.Half.P99)
	srv.Stop()
	a, err := env.Audit(ctx, dbURL, 2*time.Minute, 30*time.Second)
	if err != nil {
		return row, err
	}
	row.Audit = len(a.Violations)
	return row, nil
}

// waitIdle waits, at most limit, until srv serves no GraphQL request, or
// until its in-flight gauge cannot be read.
func waitIdle(ctx context.Context, srv *harness.Server, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && srv.Metric("coupond_graphql_inflight_requests") > 0 {
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// exportCodes reads a campaign's codes through /export/coupons.csv, the
// same on both databases.
func exportCodes(ctx context.Context, base, campaign, token string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/export/coupons.csv?campaignId="+campaign, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("coupons export: HTTP %d", resp.StatusCode)
	}
	r := csv.NewReader(resp.Body)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return nil, err
	}
	var out []string
	for i, rec := range recs {
		if i == 0 || len(rec) == 0 {
			continue // header (after the byte-order mark)
		}
		out = append(out, rec[0])
	}
	return out, nil
}

// quietDisk flushes the machine's dirty pages (sync) and waits, at most
// limit, until the kernel holds less than 32 MB of them and writes none back.
func quietDisk(ctx context.Context, limit time.Duration) error {
	syscall.Sync()
	deadline := time.Now().Add(limit)
	for {
		dirty, writeback, err := dirtyPages()
		if err != nil || (dirty < 32<<20 && writeback == 0) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		syscall.Sync()
	}
}

// dirtyPages reads Dirty and Writeback from /proc/meminfo, in bytes.
func dirtyPages() (dirty, writeback int64, err error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "Dirty:":
			dirty = n << 10
		case "Writeback:":
			writeback = n << 10
		}
	}
	return dirty, writeback, nil
}
