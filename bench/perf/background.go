package perf

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"coupond/bench/harness"
	"coupond/bench/load"
)

// BackgroundRow compares the redemption latency at one constant rate without
// and with background work (an export, a reconciliation run) running beside
// it, the two runs back to back in the same run.
type BackgroundRow struct {
	Name      string     `json:"name"`
	Rate      float64    `json:"rate_per_sec"`
	Quiet     load.Stats `json:"quiet"`
	During    load.Stats `json:"during"`
	Ratio     float64    `json:"p99_ratio"`
	Work      string     `json:"work"`
	WorkRuns  int        `json:"work_runs"`
	WorkSecs  float64    `json:"work_seconds_each"`
	WorkError string     `json:"work_error,omitempty"`
	// QuietCPU and DuringCPU are the CPU seconds by process class (see
	// cpuReading.since) over the quiet run and over the runs beside the
	// work; DuringWorst are the worst one-second windows beside the work,
	// counted in seconds from its start.
	QuietCPU  map[string]float64 `json:"quiet_cpu_seconds,omitempty"`
	DuringCPU map[string]float64 `json:"during_cpu_seconds,omitempty"`
	// QuietSecs and DuringSecs are the wall time of each.
	QuietSecs   float64  `json:"quiet_wall_seconds,omitempty"`
	DuringSecs  float64  `json:"during_wall_seconds,omitempty"`
	DuringWorst []Window `json:"during_worst_seconds,omitempty"`
	// QuietWorst are the worst one-second windows of the quiet run: its
	// p99 is the ratio's denominator, and a stall there moves the ratio as
	// much as one beside the work.
	QuietWorst []Window `json:"quiet_worst_seconds,omitempty"`
	// QuietSendP99 and DuringSendP99 are the p99s of each side's wait
	// before a request left the generator (its pacer and scheduler), and
	// QuietAnswerP99 and DuringAnswerP99 of the time from leaving to the
	// answer: a side whose send p99 rose was measured by a generator that
	// fell behind, not by slower tills.
	QuietSendP99    float64 `json:"quiet_send_p99_ms,omitempty"`
	QuietAnswerP99  float64 `json:"quiet_answer_p99_ms,omitempty"`
	DuringSendP99   float64 `json:"during_send_p99_ms,omitempty"`
	DuringAnswerP99 float64 `json:"during_answer_p99_ms,omitempty"`
	// QuietStart and DuringStart are when each side began, and
	// QuietSeconds and DuringSeconds all their one-second windows (from
	// that start), to set against the server's and PostgreSQL's logs.
	QuietStart    time.Time `json:"quiet_start,omitzero"`
	DuringStart   time.Time `json:"during_start,omitzero"`
	QuietSeconds  []Window  `json:"quiet_seconds,omitempty"`
	DuringSeconds []Window  `json:"during_seconds,omitempty"`
}

// ExportRun is one timed export.
type ExportRun struct {
	Rows    int     `json:"rows"`
	Seconds float64 `json:"seconds"`
	MB      float64 `json:"mb"`
}

// exportCSV downloads path (e.g. /export/redemptions.csv?...) with token and
// counts its data rows. A 429 (one export at a time per merchant) waits for
// Retry-After and tries again.
func exportCSV(ctx context.Context, base, path, token string) (ExportRun, error) {
	start := time.Now()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			return ExportRun{}, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return ExportRun{}, err
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			resp.Body.Close()
			wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			select {
			case <-ctx.Done():
				return ExportRun{}, ctx.Err()
			case <-time.After(time.Duration(max(wait, 1)) * time.Second):
			}
			continue
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return ExportRun{}, fmt.Errorf("GET %s: HTTP %d", path, resp.StatusCode)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		lines, bytes := 0, 0
		for sc.Scan() {
			lines++
			bytes += len(sc.Bytes()) + 1
		}
		resp.Body.Close()
		if err := sc.Err(); err != nil {
			return ExportRun{}, err
		}
		return ExportRun{Rows: max(lines-1, 0), Seconds: round(time.Since(start).Seconds()), MB: round(float64(bytes) / 1e6)}, nil
	}
}

// runJob runs a job through the API and fails unless it succeeded. runJob
// returns a run still going after its wait RUNNING and lets it go on, so a
// run that outlasts the wait (a yielding reconciliation over a large
// ledger) is followed in jobRuns until it ends.
func runJob(ctx context.Context, c *harness.Client, job string) error {
	type run struct {
		ID     string  `json:"id"`
		Status string  `json:"status"`
		Error  *string `json:"error"`
	}
	var out struct {
		RunJob run `json:"runJob"`
	}
	if err := c.Do(ctx, `mutation($in: RunJobInput!) { runJob(input: $in) { id status error } }`,
		map[string]any{"in": map[string]any{"job": job}}, &out); err != nil {
		return err
	}
	r := out.RunJob
	for r.Status == "RUNNING" {
		select {
		case <-ctx.Done():
			return fmt.Errorf("job %s run %s: %w", job, r.ID, ctx.Err())
		case <-time.After(time.Second):
		}
		var page struct {
			JobRuns struct {
				Edges []struct {
					Node run `json:"node"`
				} `json:"edges"`
			} `json:"jobRuns"`
		}
		// A poll that fails (OVERLOADED in a stall of the machine's, a
		// connection cut) changed nothing: the run goes on, and the next
		// poll asks again. Only the row's own bound ends the wait.
		if err := c.Do(ctx, `query($job: String) { jobRuns(filter: {job: $job}, first: 20) { edges { node { id status error } } } }`,
			map[string]any{"job": job}, &page); err != nil {
			continue
		}
		// A replica behind the primary may not list the run yet.
		for _, e := range page.JobRuns.Edges {
			if e.Node.ID == r.ID {
				r = e.Node
			}
		}
	}
	if r.Status != "SUCCEEDED" {
		msg := ""
		if r.Error != nil {
			msg = *r.Error
		}
		return fmt.Errorf("job %s %s: %s", job, r.Status, msg)
	}
	return nil
}

// underBackground runs redemptions at rate for secs quietly, then again
// while work runs beside them: the work is started with the load and run
// again until secs have passed, and the load goes on in short chunks until
// the last run of the work has finished (at most maxBackground), so every
// run of the work is measured whole; then quietly again, until the quiet
// side has run as long as the busy one. It compares the two p99s.
func underBackground(ctx context.Context, fx *harness.Fixture, url, clerk string, rate float64, secs time.Duration, name, what string,
	next func(prefix string, n int) func(int) load.Op, work func(context.Context) error) BackgroundRow {
	// Every run of the row goes through one transport: the load beside the
	// work comes in chunks (the work's length is not known beforehand), and
	// a transport of each chunk's own opened its connections afresh every
	// 2 s, a burst of dials the quiet run had once.
	tr := load.NewTransport()
	defer tr.CloseIdleConnections()
	attack := func(prefix string, d time.Duration) []*load.Record {
		n := int(rate*d.Seconds()) + 1
		return load.Run(ctx, load.Attack{Name: name, URL: url, Token: clerk, Pacer: load.Constant{PerSec: rate},
			Duration: d, MaxOps: n, Next: next(prefix, n), Transport: tr})
	}
	// Its connections open before the quiet run, so that neither run
	// measures their dials.
	attack("bgo-", bgOpen)
	row := BackgroundRow{Name: name, Rate: round(rate), Work: what}
	cpu0, t0 := readCPU(fx), time.Now()
	quiet := attack("bgq-", secs)
	row.Quiet = load.Summarise(quiet, nil)
	row.QuietSeconds = windows(quiet)
	row.QuietWorst = worst(row.QuietSeconds, 5)
	row.QuietStart = t0.UTC()
	cpu1, t1 := readCPU(fx), time.Now()
	row.QuietSecs = round(t1.Sub(t0).Seconds())
	row.QuietCPU = cpu1.since(cpu0)
	wctx, stop := context.WithTimeout(ctx, maxBackground)
	defer stop()
	done := make(chan struct{})
	var spent time.Duration
	start := time.Now()
	row.DuringStart = start.UTC()
	go func() {
		defer close(done)
		for wctx.Err() == nil && time.Since(start) < secs {
			t := time.Now()
			if err := work(wctx); err != nil {
				switch {
				case errors.Is(wctx.Err(), context.DeadlineExceeded):
					row.WorkError = fmt.Sprintf("a run had not finished after %s; the row stopped waiting for it", maxBackground)
				case !errors.Is(err, context.Canceled) && wctx.Err() == nil:
					row.WorkError = err.Error()
				}
				return
			}
			row.WorkRuns++
			spent += time.Since(t)
		}
	}()
	var during []*load.Record
	var ws []Window
	for {
		chunk := min(secs-time.Since(start), secs)
		if chunk < 2*time.Second {
			chunk = 2 * time.Second
		}
		at := int(time.Since(start) / time.Second)
		recs := attack("bgd-", chunk)
		for _, w := range windows(recs) {
			w.Second += at
			ws = append(ws, w)
		}
		during = append(during, recs...)
		select {
		case <-done:
		default:
			continue
		}
		break
	}
	stop()
	<-done
	busy := time.Since(t1)
	row.During = load.Summarise(during, nil)
	row.DuringCPU, row.DuringSecs = readCPU(fx).since(cpu1), round(busy.Seconds())
	row.DuringWorst, row.DuringSeconds = worst(ws, 5), ws
	row.DuringSendP99, row.DuringAnswerP99 = sendAndAnswerP99(during)
	// The quiet side then runs on until it has run as long as the busy
	// side, so that both span as many of the machine's periodic events
	// (PostgreSQL's checkpoints, a minute or so apart at these rates, and
	// the kernel's writeback): a p99 over a 20 s quiet run against one over
	// 150 s beside an export compared a window that held no checkpoint
	// with one that held two.
	if more := busy - t1.Sub(t0); more >= time.Second {
		cpu2, t2 := readCPU(fx), time.Now()
		rest := attack("bgq-", more)
		qws := windows(quiet)
		for _, w := range windows(rest) {
			w.Second += int(t1.Sub(t0) / time.Second)
			qws = append(qws, w)
		}
		quiet = append(quiet, rest...)
		row.Quiet, row.QuietWorst, row.QuietSeconds = load.Summarise(quiet, nil), worst(qws, 5), qws
		row.QuietCPU = addCPU(row.QuietCPU, readCPU(fx).since(cpu2))
		row.QuietSecs = round(row.QuietSecs + time.Since(t2).Seconds())
	}
	row.QuietSendP99, row.QuietAnswerP99 = sendAndAnswerP99(quiet)
	if row.WorkRuns > 0 {
		row.WorkSecs = round(spent.Seconds() / float64(row.WorkRuns))
	}
	row.Ratio = round(row.During.P99 / nz(row.Quiet.P99))
	return row
}

// addCPU returns the sum of two CPU readings by class (cpuReading.since).
func addCPU(a, b map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(a))
	for k, v := range a {
		out[k] = round(v + b[k])
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			out[k] = round(v)
		}
	}
	return out
}

// bgOpen is how long a background row runs its load, unmeasured, to open
// its connections.
const bgOpen = 2 * time.Second

// maxBackground bounds one background row's work: a yielding
// reconciliation of a ledger of a few million coupons beside the load takes
// minutes (240-300 s over the 1.5 M-coupon ledger at half the knee). The
// row's codes are issued beforehand for twice this long at its rate, and
// the merchant's reconciliation reads them too, so a longer bound makes
// the run it waits for longer.
const maxBackground = 6 * time.Minute

// worst returns the n windows of ws with the highest p99, highest first.
func worst(ws []Window, n int) []Window {
	ws = append([]Window(nil), ws...)
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].P99 > ws[j].P99 })
	return ws[:min(n, len(ws))]
}
