package perf

import (
	"fmt"
	"strings"
	"testing"

	"coupond/bench/load"
)

// The import row reads the counts the scenario stores, whatever integer type
// they have: the upload's counts are int64, and a report that read them as 0
// called a correct import a miss (1,000,000 codes, "0 rejected").
func TestReportImportRow(t *testing.T) {
	run := ImportRun{Codes: 1_000_000, Duplicates: 100, Imported: 999_900, Rejected: 100, Seconds: 26.4}
	r := &Result{Scenarios: []Scenario{{Name: "import of 1000000 codes (CSV upload, <= 30 s)",
		Extra: importExtra(run)}}}
	md := r.Markdown("test")
	var row string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| import 1000000 codes") {
			row = l
		}
	}
	if !strings.Contains(row, "26.4 s, 100 rejected") || !strings.HasSuffix(row, "| pass |") {
		t.Fatalf("import row %q, want 100 rejected and pass", row)
	}
}

func TestNum(t *testing.T) {
	for _, v := range []any{int(7), int32(7), int64(7), uint64(7), float32(7), float64(7)} {
		if num(v) != 7 {
			t.Fatalf("num(%T) = %v, want 7", v, num(v))
		}
	}
}

// The products' rows render from a record: the knee ratio against its
// target, and the per-store daily limit's rate.
func TestReportProductRows(t *testing.T) {
	r := &Result{Only: "products", Products: &ProductRows{StepSeconds: 15, KneeStart: 1000, KneePlain: 950, KneeRules: 903,
		PlainSteps: []KneeStep{{Rate: 1000, P99: 140}, {Rate: 950, P99: 60, Held: true}},
		RulesSteps: []KneeStep{{Rate: 1000, P99: 150}, {Rate: 950, P99: 120}, {Rate: 903, P99: 70, Held: true}},
		Window:     "02:10-02:09", StoreLimit: 100000, StoreLimitRate: 500,
		StoreLimitSteps:  []KneeStep{{Rate: 340, P99: 12, Held: true}, {Rate: 500, P99: 30, Held: true}, {Rate: 750, P99: 80}},
		StoreLimitReason: "750/s: p99 80.0 ms"}}
	md := r.Markdown("ONLY=products bench/run.sh perf")
	for _, want := range []string{
		"| knee with weekday and time rules vs without, same run | ≥ 0.95× the plain campaign's | 903/s with the rules, 950/s without | 0.95× | pass |",
		"| per-store daily limit: one store's rate with redemption p99 ≤ 50 ms | measured (no bound in the issue) | 500/s (750/s: p99 80.0 ms) | - | pass |",
		"| 903/s | - | - | 70.0 | yes |",
		"| 750/s | 80.0 | 0.0000 | no |",
	} {
		if !strings.Contains(md, want) {
			t.Fatalf("report lacks %q:\n%s", want, md)
		}
	}
}

// A split step is confirmed by two more runs a side: the majority decides,
// whatever the last run said.
func TestReportProductRowsConfirmed(t *testing.T) {
	yes, no := true, false
	for _, tt := range []struct {
		name      string
		rulesHeld *bool
		want      string
	}{
		{"majority held", &yes, "| 1000/s with the rules, 1000/s without | 1.00× | pass |"},
		{"majority did not hold", &no, "| 1000/s with the rules, 1000/s without | 1.00× | **miss**"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &Result{Only: "products", Products: &ProductRows{StepSeconds: 15, KneeStart: 1000, KneePlain: 1000, KneeRules: 1000,
				PlainSteps: []KneeStep{{Rate: 1000, P99: 90, Held: true}, {Rate: 1000, P99: 95, Held: true, Confirm: true},
					{Rate: 1000, P99: 130, Confirm: true}},
				RulesSteps: []KneeStep{{Rate: 1000, P99: 120}, {Rate: 1000, P99: 80, Held: true, Confirm: true},
					{Rate: 1000, P99: 140, Confirm: true}},
				PlainHeld: &yes, RulesHeld: tt.rulesHeld, Window: "02:10-02:09", StoreLimitRate: 500}}
			md := r.Markdown("ONLY=products bench/run.sh perf")
			for _, want := range []string{tt.want, "| 1000/s *again* | 130.0 | no | 140.0 | no |", "majority of its three runs"} {
				if !strings.Contains(md, want) {
					t.Fatalf("report lacks %q:\n%s", want, md)
				}
			}
		})
	}
}

func TestReportWebhookKnees(t *testing.T) {
	r := &Result{Only: "webhooks", RampKnee: 1200, KneeWebhook: 1100, WebhookLagP99MS: 150, WebhookEvents: 8000,
		Webhook: &WebhookKnees{Start: 1000, StepSeconds: 15, KneePlain: 950, KneeHook: 857,
			PlainSteps: []KneeStep{{Rate: 1000, P99: 140}, {Rate: 950, P99: 60, Held: true}},
			HookSteps:  []KneeStep{{Rate: 1000, P99: 150}, {Rate: 950, P99: 120}, {Rate: 902, P99: 101}, {Rate: 857, P99: 70, Held: true}}}}
	md := r.Markdown("ONLY=webhooks bench/run.sh perf")
	for _, want := range []string{
		// 857 / 950 = 0.90: the bound itself passes.
		"| sustained knee with one subscribed webhook endpoint vs without, same run | ≥ 0.9× | 857/s with, 950/s without | 0.90× | pass |",
		"| webhook delivery lag p99 at half the knee | ≤ 1 s | 150 ms over 8000 events (p50 0 ms) | 0.15× | pass |",
		"| 950/s | 60.0 | yes | 120.0 | no |",
		"| 857/s | - | - | 70.0 | yes |",
	} {
		if !strings.Contains(md, want) {
			t.Fatalf("report lacks %q:\n%s", want, md)
		}
	}
	// A knee with the endpoint that never held fails whatever its ratio.
	r.Webhook.HookSteps[3].Held = false
	if md := r.Markdown("x"); !strings.Contains(md, "| no step held down to 857/s with the endpoint; 950/s without | < 0.90× | **miss**") {
		t.Fatalf("an endpoint knee that never held passed:\n%s", md)
	}
}

func TestReportSeparateScale(t *testing.T) {
	scale := &Result{Only: "scale", Date: "2026-12-03T18:02:55Z", Scale: []ScaleRow{
		{Name: "1 server, direct", Servers: 1, Path: "direct", QueryMode: "cache_statement", Tracing: "off", Knee: 1000},
		{Name: "1 server through pgbouncer", Servers: 1, Path: "pgbouncer", QueryMode: "cache_describe", Tracing: "off", Knee: 400}}}
	r := &Result{Separate: []SeparateRun{{File: "bench/results/x-scale.json", Result: scale}}}
	md := r.Markdown("bench/run.sh perf")
	for _, want := range []string{
		"## `ONLY=scale bench/run.sh perf` on 2026-12-03T18:02:55Z (record `bench/results/x-scale.json`)",
		"| 1 server through pgbouncer | 1 | pgbouncer | cache_describe | off | 400 (-60%) |",
	} {
		if !strings.Contains(md, want) {
			t.Fatalf("report lacks %q:\n%s", want, md)
		}
	}
}

// A background row with its CPU and worst seconds states them under the
// table.
func TestReportBackgroundEvidence(t *testing.T) {
	r := &Result{Only: "reconciliation", Knee: 1000, Background: []BackgroundRow{{Name: "p99 during reconciliation", Rate: 500,
		Work: "runJob(reconciliation)", Quiet: load.Stats{P99: 8}, During: load.Stats{P99: 20}, Ratio: 2.5, WorkRuns: 1, WorkSecs: 40,
		QuietSecs: 20, DuringSecs: 40,
		QuietCPU:    map[string]float64{"coupond server": 3, "postgresql (all processes)": 5, "machine (all processes)": 11},
		DuringCPU:   map[string]float64{"coupond server": 6, "postgresql (all processes)": 14, "postgresql autovacuum": 2, "machine (all processes)": 26},
		DuringWorst: []Window{{Second: 17, P99: 90}, {Second: 3, P99: 40}},
		QuietWorst:  worst([]Window{{Second: 2, P99: 9}, {Second: 11, P99: 31}, {Second: 5, P99: 12}}, 2)}}}
	md := r.Markdown("ONLY=reconciliation bench/run.sh perf")
	want := "runJob(reconciliation): CPU seconds quiet: server 3.0, generator 0.0, PostgreSQL 5.0 (client backends 0.0, autovacuum 0.0, " +
		"other 0.0), machine 11.0 of 40; beside the work: server 6.0, generator 0.0, PostgreSQL 14.0 (client backends 0.0, autovacuum 2.0, " +
		"other 0.0), machine 26.0 of 80. The worst seconds beside the work (from its start): second 17: p99 90 ms, second 3: p99 40 ms. " +
		"The worst seconds of the quiet run: second 11: p99 31 ms, second 5: p99 12 ms."
	if !strings.Contains(md, want) {
		t.Fatalf("report lacks %q:\n%s", want, md)
	}
}

// The knee's targets name the resource that ran out: how busy the steps that
// did not hold kept the machine, from the CPU they recorded.
func TestReportKneeStepsCPU(t *testing.T) {
	r := &Result{Knee: 1500, Scenarios: []Scenario{{Name: "knee step-down: 1750/s did not hold", Stats: load.Stats{Seconds: 15, P99: 108},
		Extra: map[string]any{"rate": 1750.0, "cpu_seconds": map[string]any{"machine (all processes)": 26.1, "coupond server": 7.5,
			"postgresql (all processes)": 14.5, "generator (this process)": 3.7}}}}}
	want := ". The steps that did not hold kept the machine's two cores busy: 1750/s: 26.1 of 30 CPU s busy (87%; server 7.5, " +
		"PostgreSQL 14.5, generator 3.7), p99 108 ms."
	if got := r.stepsOutOfCPU(); !strings.HasPrefix(got, strings.TrimSuffix(want, ".")) {
		t.Fatalf("stepsOutOfCPU() = %q, want it to start with %q", got, want)
	}
	if got := (&Result{Scenarios: []Scenario{{Name: "knee step-down: 1750/s did not hold"}}}).stepsOutOfCPU(); got != "" {
		t.Fatalf("a record without CPU figures gave %q", got)
	}
}

// The row at half the knee says whose the tail was: the generator's wait to
// send or the answer's, and who used the CPU.
func TestReportTailSplit(t *testing.T) {
	s := &Scenario{Extra: map[string]any{"send_wait_p99_ms": 1.45, "answer_p99_ms": 12.64, "cpu_seconds": map[string]any{
		"coupond server": 4.93, "generator (this process)": 3.07, "postgresql (all processes)": 7.33,
		"postgresql client backends": 7.33, "machine (all processes)": 14.26}}}
	want := ". The p99 of the wait before a request left the generator was 1.4 ms, of the time from leaving to the answer 12.6 ms. " +
		"CPU seconds during the run: server 4.9, generator 3.1, PostgreSQL 7.3 (client backends 7.3, autovacuum 0.0, other 0.0), machine 14.3"
	if got := tailSplit(s); got != want {
		t.Fatalf("tailSplit = %q, want %q", got, want)
	}
	if got := tailSplit(&Scenario{Extra: map[string]any{}}); got != "" {
		t.Fatalf("a run without CPU figures gave %q", got)
	}
}

// The knee's halfway step goes between the highest rate that held and the
// lowest rate above it that did not, whichever way the steps went.
func TestKneeBracket(t *testing.T) {
	step := func(rate float64, held bool) KneeStep { return KneeStep{Rate: rate, Held: held} }
	tests := []struct {
		name         string
		steps        []KneeStep
		held, failed float64
	}{
		{"down", []KneeStep{step(3457, false), step(3111, false), step(2800, true)}, 2800, 3111},
		{"up", []KneeStep{step(2000, true), step(2200, true), step(2420, false)}, 2200, 2420},
		{"halfway held", []KneeStep{step(3111, false), step(2800, true), step(2956, true)}, 2956, 3111},
		{"nothing held", []KneeStep{step(3000, false), step(2700, false)}, 0, 0},
		{"nothing above", []KneeStep{step(3000, true)}, 3000, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			held, failed := kneeBracket(tt.steps)
			if held != tt.held || failed != tt.failed {
				t.Errorf("kneeBracket = %v, %v; want %v, %v", held, failed, tt.held, tt.failed)
			}
		})
	}
}

// The report says which kernel writeback settings the run had, and sets the
// row with the host's own beside the row at half the knee.
func TestReportWriteback(t *testing.T) {
	host := Writeback{BackgroundRatio: 10, ExpireCentisecs: 3000, WritebackCentisecs: 500}
	run := host
	run.BackgroundBytes, run.BackgroundRatio = 8<<20, 0
	tests := []struct {
		name string
		give *HostWriteback
		rows []Scenario
		want []string
	}{
		{name: "none recorded", give: nil},
		{name: "set, with the host's row", give: &HostWriteback{Before: host, During: run, Set: true},
			rows: []Scenario{
				{Name: "constant at half the knee", Stats: load.Stats{Ops: 100, P50: 2, P95: 6, P99: 9.5}},
				{Name: halfKneeHostWriteback, Stats: load.Stats{Ops: 100, Seconds: 40, P50: 2.5, P95: 7, P99: 48.2},
					Windows: []Window{{Second: 0, P99: 8}, {Second: 31, P99: 61}}},
			},
			want: []string{"set `vm.dirty_background_bytes` to 8 MiB",
				"the host's own settings (background writeback from 10% of memory dirty, pages written once 30 s old, checked every 5 s) came back",
				"ran for 40 s with the host's own settings: p99 48.2 ms (p50 2.5, p95 7.0; second 31: p99 61 ms, second 0: p99 8 ms), against 9.5 ms"}},
		{name: "refused", give: &HostWriteback{Before: host, During: host, Err: "permission denied"},
			want: []string{"the host's own settings (background writeback from 10% of memory dirty", "could not set `vm.dirty_background_bytes` (permission denied)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Result{Writeback: tt.give, Scenarios: tt.rows}
			got := r.writebackText()
			if tt.give == nil && got != "" {
				t.Fatalf("got %q, want nothing", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("got %q, want it to hold %q", got, w)
				}
			}
		})
	}
}

// The report says when the servers ran without their scheduled
// reconciliation, and says nothing of it for older records, which ran it.
func TestReportSchedulesOff(t *testing.T) {
	for _, off := range []bool{true, false} {
		md := (&Result{SchedulesOff: off}).Markdown("test")
		if got := strings.Contains(md, "`--reconcile-schedule off`"); got != off {
			t.Fatalf("schedules off %v: report mentions it %v", off, got)
		}
	}
}

// A SQLite step that did not hold shows its worst seconds, so a stall tells
// itself from a rate the writer cannot keep; a step that held does not.
func TestReportSQLiteStepWindows(t *testing.T) {
	r := &Result{SQLite: []SQLiteRow{{Synchronous: "FULL", RampKnee: 687, Knee: 556, KneeSteps: []KneeStep{
		{Rate: 687, P99: 431, Windows: []Window{{Second: 3, P99: 12}, {Second: 7, P99: 455}, {Second: 8, P99: 210}}},
		{Rate: 556, P99: 30, Held: true, Windows: []Window{{Second: 1, P99: 30}}},
	}}}}
	md := r.Markdown("ONLY=sqlite bench/run.sh perf")
	if !strings.Contains(md, "687/s: 431 ms (second 7: p99 455 ms, second 8: p99 210 ms), 556/s: 30 ms |") {
		t.Fatalf("SQLite steps without their worst seconds:\n%s", md)
	}
}

// The floor and the hot coupon report their median bursts, and the report
// lists every burst's p99 beside them.
func TestHotCouponMedianBurst(t *testing.T) {
	bs := []burst{{p99: 120}, {p99: 87}, {p99: 155}, {p99: 95}, {p99: 101}}
	if got := medianBurst(bs); got.p99 != 101 {
		t.Fatalf("median burst p99 %.0f, want 101", got.p99)
	}
	if got := medianBurst(bs[:4]); got.p99 != 95 {
		t.Fatalf("median of four: p99 %.0f, want the lower middle, 95", got.p99)
	}
	if got := oneSuccessEach([]burst{{successes: 1}, {successes: 2}, {successes: 1}}); got != 2 {
		t.Fatalf("successes %d, want the burst that had 2", got)
	}
	floor := Scenario{Name: floorScenario, Stats: load.Stats{P99: 101}, Extra: map[string]any{"bursts": 5, "bursts_p99_ms": []float64{120, 87, 155, 95, 101}}}
	hot := Scenario{Name: "hot coupon: 1,000 concurrent redeems of one coupon",
		Extra: map[string]any{"bursts": 5, "losers_p99_ms": 180.0, "bursts_losers_p99_ms": []float64{175, 180, 210, 160, 190}, "successes": 1}}
	md := (&Result{Scenarios: []Scenario{floor, hot}}).Markdown("test")
	for _, want := range []string{"180.0 ms (floor 101.0 ms), the median bursts of 5 each", "[120 87 155 95 101]", "[175 180 210 160 190]"} {
		if !strings.Contains(md, want) {
			t.Fatalf("report lacks %q", want)
		}
	}
	if strings.Contains(md, "the server's CPU by burst") {
		t.Fatal("a record without the bursts' CPU reports it")
	}
	floor.Extra["bursts_server_cpu_ms"], floor.Extra["bursts_gc_cycles"] = []float64{100, 90, 110, 95, 105}, []float64{1, 1, 2, 1, 1}
	hot.Extra["bursts_server_cpu_ms"], hot.Extra["bursts_gc_cycles"], hot.Extra["server_heap_mb"] = []float64{200, 190, 210, 180, 205}, []float64{3, 3, 4, 3, 3}, 42.0
	md = (&Result{Scenarios: []Scenario{floor, hot}}).Markdown("test")
	if want := "the server's CPU by burst: pings [100 90 110 95 105] ms, redemptions [200 190 210 180 205] ms (collector cycles [1 1 2 1 1] and [3 3 4 3 3]; heap 42 MB before)"; !strings.Contains(md, want) {
		t.Fatalf("report lacks %q", want)
	}
}

// The audit's row judges the time per 1,000,000 flows of the database it
// read: a larger ledger than the seeded million passes at the same pace,
// a slower pace misses, and a violation misses whatever the time.
func TestReportAuditRow(t *testing.T) {
	tests := []struct {
		name         string
		flows        int
		secs         float64
		viol         int
		wantMeasured string
		wantPass     bool
	}{
		{name: "the seeded million", flows: 1_000_000, secs: 14.5, wantMeasured: "14.5 s, 0 violations", wantPass: true},
		{name: "a ledger three times as large", flows: 3_000_000, secs: 18.8,
			wantMeasured: "18.8 s over 3000000 flows and 9 coupons = 6.3 s per 1,000,000 flows, 0 violations", wantPass: true},
		{name: "too slow per million", flows: 2_000_000, secs: 31, wantMeasured: "= 15.5 s per 1,000,000 flows"},
		{name: "a violation", flows: 1_000_000, secs: 10, viol: 1, wantMeasured: "10.0 s, 1 violations"},
		{name: "fewer than a million", flows: 999_999, secs: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Result{AuditFlows: tt.flows, AuditCoupons: 9, AuditSecs: tt.secs, AuditViol: tt.viol}
			got := r.auditTarget()
			if !strings.Contains(got.measured, tt.wantMeasured) || got.pass != tt.wantPass {
				t.Fatalf("audit row %q pass %v, want %q and pass %v", got.measured, got.pass, tt.wantMeasured, tt.wantPass)
			}
			if !got.pass && !strings.Contains(got.why, fmt.Sprintf("over %d flows", tt.flows)) {
				t.Fatalf("missed audit row says why %q, want the flows it read", got.why)
			}
		})
	}
}
