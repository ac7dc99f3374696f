package services

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"coupond/models"
)

// Reconciler compares coupons, the redemption ledger, refunds, transitions and
// orders. Every check is one aggregate or anti-join query, so its cost grows
// with the tables, not with round trips. Check reports what is wrong now;
// Reconcile writes it down as findings, each once; finance lists and resolves
// findings.
type Reconciler struct {
	db *gorm.DB
	// read serves the checks, the findings list and export: a read replica
	// when there are any, else db.
	read       *gorm.DB
	now        func() time.Time
	audit      *Audit
	interval   time.Duration
	ordersInDB bool
	// lag bounds how old read's data may be; nil when read is the primary.
	lag func(ctx context.Context) (time.Duration, error)
	log *slog.Logger
	// tills paces the findings export beside the redemptions.
	tills *tills
}

// Violation is one broken invariant found by Check.
type Violation struct {
	MerchantID int64
	Kind       models.FindingKind
	CouponID   *int64
	RedeemNo   *string
	Details    string
	// Key names the discrepancy; it is unique per merchant and stable across
	// runs, so a finding is written once.
	Key string
}

// String formats the violation for the audit command's output.
func (v Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "merchant %d %s", v.MerchantID, v.Kind)
	if v.CouponID != nil {
		fmt.Fprintf(&b, " coupon %d", *v.CouponID)
	}
	if v.RedeemNo != nil {
		fmt.Fprintf(&b, " redemption %s", *v.RedeemNo)
	}
	return b.String() + ": " + v.Details
}

// Check runs every reconciliation check over all merchants and returns each
// discrepancy once, ordered by check. An empty result means coupons, ledger,
// refunds, transitions and (with the builtin adapter) orders agree. Rows that
// may be mid-operation are not reported: redemptions still PROCESSING within
// their hold deadline plus one compensation interval, and refunds younger than
// one compensation interval whose order is being cancelled. It fails only when a
// query fails.
//
// Up to checkWorkers checks run at once, each a single statement on a
// connection of its own: every check compares rows of one snapshot, and the
// grace periods cover what changes between checks.
func (r *Reconciler) Check(ctx context.Context) ([]Violation, error) {
	vs, _, err := r.run(ctx, checks, runMode{workers: checkWorkers}, 0)
	return vs, err
}

// asOf is the time the data the checks read is known to be current at: now
// on the primary, and now less the replicas' lag on a replica, whose data is
// that much older. Judging the time-based checks as of then keeps a replica
// from reporting a hold the primary resolved within the lag.
func (r *Reconciler) asOf(ctx context.Context) (time.Time, error) {
	now := r.now()
	if r.lag == nil {
		return now, nil
	}
	lag, err := r.lag(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("read replica lag: %w", err)
	}
	return now.Add(-lag), nil
}

// checkWorkers is how many checks run at once. Most checks are one big join,
// which PostgreSQL runs on one core; two at a time keep two cores busy
// without taking more than two connections from the pool.
const checkWorkers = 2

// runMode is how a run shares the database with the tills. `coupond audit`
// runs each check as one statement, as fast as it can (an operator waits for
// it). The scheduled job and runJob yield: one check at a time, each walked in
// small batches of one merchant's id range, every batch in a read-only
// transaction without parallel query workers and followed by a pause, so the
// job never holds a core of the database for long and the redemptions keep
// the rest (see the reconciliation rows of docs/PERFORMANCE.md).
type runMode struct {
	workers int
	// yield turns on the batches, the single-core plan and the pauses.
	yield bool
	// span is the rows of the batch table per batch a check starts with;
	// adapt lets it grow or shrink toward target.
	span   int64
	adapt  bool
	target time.Duration
	// pause is how long to rest after a batch, in multiples of the time it
	// took; busyPause, when above pause, replaces it while this process's
	// tills are busy.
	pause, busyPause int
}

// yieldingRun is the job's mode. A batch takes about 20 ms of one backend,
// short enough that the redemptions beside it drain within their own p99.
// Resting as long after it keeps the job at half of one core of the
// database at most; while this process answers redemptions it rests three
// times as long, a quarter of a core. Resting only as long, a run over a
// 1,500,000-coupon ledger beside half a knee of 6,682/s had the p99 1.97
// times the quiet one (docs/TUNING.md, "Reconciliation's unbounded
// statements").
var yieldingRun = runMode{workers: 1, yield: true, span: 1024, adapt: true, target: 20 * time.Millisecond, pause: 1, busyPause: 3}

// reconciledTables are the tables the checks read; staleShare is the share
// of a table's rows changed since its last ANALYZE beyond which a yielding
// run analyzes it first (autovacuum waits for 10%).
var reconciledTables = []string{"coupons", "redemption_flows", "refund_flows", "orders", "coupon_transitions",
	"campaigns", "redemption_orders", "redemption_allowances"}

const staleShare = 0.01

// minSpan and maxSpan bound the rows per batch. A span grows while its
// batches are cheap, over rows with little to join; the batch that then
// meets a dense stretch costs as many rows as the span has grown to. At
// 65,536 coupons such a batch took 440 ms beside the tills, in a plan that
// hashed the whole orders table; 8,192 keep it near the target
// (docs/TUNING.md).
const minSpan, maxSpan = 16, 1 << 13

// maxYieldPause bounds one pause, so a slow check on a huge ledger does not
// stretch the run without limit.
const maxYieldPause = 5 * time.Second

// batchTable names the table whose ids a check's batches walk.
type batchTable string

const (
	byCoupons   batchTable = "coupons"
	byOrders    batchTable = "orders"
	byCampaigns batchTable = "campaigns"
)

// batch is one merchant's id range [lo, hi) of a check's batch table.
type batch struct{ merchantID, lo, hi int64 }

// expandBatch writes out a check's {in:alias.column} markers. Without a
// batch (b nil) each is a true condition and the check is its whole query;
// with one, each restricts alias to the batch's merchant and column to its
// range, which the (merchant_id, ...) keys and the coupon_id indexes serve.
// The check's own ? parameters keep their order among the batch's.
func expandBatch(q string, args []any, b *batch) (string, []any) {
	var out strings.Builder
	var all []any
	for {
		i := strings.IndexAny(q, "?{")
		if i < 0 {
			out.WriteString(q)
			return out.String(), all
		}
		out.WriteString(q[:i])
		if q[i] == '?' {
			out.WriteByte('?')
			all = append(all, args[0])
			args, q = args[1:], q[i+1:]
			continue
		}
		end := strings.IndexByte(q[i:], '}')
		col := strings.TrimPrefix(q[i+1:i+end], "in:")
		q = q[i+end+1:]
		if b == nil {
			out.WriteString("1 = 1")
			continue
		}
		alias, _, _ := strings.Cut(col, ".")
		fmt.Fprintf(&out, "(%s.merchant_id = ? AND %s >= ? AND %s < ?)", alias, col, col)
		all = append(all, b.merchantID, b.lo, b.hi)
	}
}

// run runs the checks, all merchants' rows or, with merchantID other than 0,
// that merchant's only, and returns the time the data they read was current
// at (see asOf).
func (r *Reconciler) run(ctx context.Context, all []check, mode runMode, merchantID int64) ([]Violation, time.Time, error) {
	now, err := r.asOf(ctx)
	if err != nil {
		return nil, now, err
	}
	p := checkParams{now: now, refundCutoff: now.Add(-r.interval), stuckCutoff: now.Add(-r.interval)}
	var todo []check
	for _, c := range all {
		if !c.orders || r.ordersInDB {
			todo = append(todo, c)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	db := r.read.WithContext(ctx)
	if mode.yield && models.DialectOfDB(r.db) == models.Postgres {
		// Stale statistics turn the batches' plans quadratic: a merchant
		// whose rows arrived after the last ANALYZE is estimated at one row,
		// and the planner then probes the ledger by merchant alone. Analyzed
		// on the primary; its replicas get the statistics through the WAL.
		skipped, err := models.AnalyzeStale(r.db.WithContext(ctx), reconciledTables, staleShare)
		if err != nil {
			return nil, now, fmt.Errorf("reconciliation analyze: %w", err)
		}
		if len(skipped) > 0 {
			r.log.InfoContext(ctx, "reconciliation: stale statistics not refreshed, a vacuum holds the tables", "tables", skipped)
		}
	}
	var merchants []models.Merchant
	if mode.yield {
		if merchants, err = models.Merchants(db, merchantID); err != nil {
			return nil, now, fmt.Errorf("reconciliation merchants: %w", err)
		}
	}
	rows := make([][]checkRow, len(todo))
	var (
		wg       sync.WaitGroup
		failOnce sync.Once
		failed   error
	)
	next := make(chan int)
	for range min(mode.workers, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c := todo[i]
				var err error
				began := time.Now()
				var st checkStats
				if mode.yield && c.batch != "" {
					err = r.runBatches(ctx, db, mode, c, p, merchants, &rows[i], &st)
				} else {
					q, args := expandBatch(c.sql, c.args(p), nil)
					if merchantID != 0 {
						// Every check selects merchant_id; the planner pushes
						// the condition down into the check's own scans.
						q, args = "SELECT * FROM ("+q+") q WHERE q.merchant_id = ?", append(args, merchantID)
					}
					err = r.runCheck(db, mode, q, args, &rows[i])
					st = checkStats{batches: 1, busy: time.Since(began)}
					if mode.yield {
						rest(ctx, time.Duration(r.pause(mode))*st.busy)
					}
				}
				if mode.yield {
					r.log.Debug("reconciliation check", "kind", c.kind, "batches", st.batches, "busy", st.busy,
						"took", time.Since(began), "found", len(rows[i]), "err", err)
				}
				if err != nil {
					// The first failure cancels the other checks; their
					// cancellation errors say nothing more.
					failOnce.Do(func() { failed = fmt.Errorf("reconciliation check %s: %w", c.kind, err) })
					cancel()
				}
			}
		}()
	}
	for i := range todo {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if failed != nil {
		return nil, now, failed
	}
	if err := ctx.Err(); err != nil {
		return nil, now, err
	}
	var out []Violation
	seen := map[string]bool{}
	for i, c := range todo {
		for _, row := range rows[i] {
			v := Violation{MerchantID: row.MerchantID, Kind: c.kind, CouponID: row.CouponID, RedeemNo: row.RedeemNo,
				Details: c.details(row), Key: string(c.kind) + ":" + c.subject(row)}
			id := strconv.FormatInt(v.MerchantID, 10) + "/" + v.Key
			if seen[id] {
				continue
			}
			seen[id] = true
			out = append(out, v)
		}
	}
	return out, now, nil
}

// runBatches runs check c over each merchant's rows of its batch table, a
// batch at a time, resting after each (see walk). Each batch is one
// statement over rows of its own range, so it sees them in one snapshot;
// what changes between batches is covered by the checks' grace periods, as
// between checks. A check with a tally counts across its batches instead
// (runTally). A merchant for whom the check's applies selects nothing is
// skipped.
func (r *Reconciler) runBatches(ctx context.Context, db *gorm.DB, mode runMode, c check, p checkParams,
	merchants []models.Merchant, rows *[]checkRow, st *checkStats) error {
	span := mode.span
	for _, m := range merchants {
		if c.applies != "" {
			var hit []checkRow
			if err := r.runCheck(db, mode, c.applies, []any{m.ID}, &hit); err != nil {
				return err
			}
			if len(hit) == 0 {
				continue
			}
		}
		if c.tally != nil {
			if err := r.runTally(ctx, db, mode, c.tally, m.ID, &span, rows, st); err != nil {
				return err
			}
			continue
		}
		err := r.walk(ctx, db, mode, c.batch, m.ID, &span, st, func(b batch) error {
			q, args := expandBatch(c.sql, c.args(p), &b)
			var part []checkRow
			if err := r.runCheck(db, mode, q, args, &part); err != nil {
				return err
			}
			*rows = append(*rows, part...)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// walk calls fn for each batch of merchantID's rows of table, resting after
// each r.pause(mode) times as long as the batch took. A batch is the id
// range of the next span rows of the merchant (models.IDAfter), so its cost
// does not depend on how densely the merchant's ids lie: ranges sized by ids
// alone grew wide over a merchant's sparse ids and then took a dense
// stretch, a million rows, in one statement. The rows per batch start at
// *span and, with mode.adapt, double while a batch takes under half of
// mode.target and halve while it takes more, so a batch costs about
// mode.target whatever the check and the data; *span is left where it got
// to, for the next merchant.
func (r *Reconciler) walk(ctx context.Context, db *gorm.DB, mode runMode, table batchTable, merchantID int64,
	span *int64, st *checkStats, fn func(batch) error) error {
	lo, hi, ok, err := models.IDRange(db, string(table), merchantID)
	if err != nil {
		return err
	}
	for ok && lo < hi {
		began := time.Now()
		next, more, err := models.IDAfter(db, string(table), merchantID, lo, int(*span))
		if err != nil {
			return err
		}
		if !more {
			next = hi
		}
		if err := fn(batch{merchantID: merchantID, lo: lo, hi: next}); err != nil {
			return err
		}
		took := time.Since(began)
		st.batches++
		st.busy += took
		lo = next
		if mode.adapt {
			switch {
			case took > mode.target && *span > minSpan:
				*span /= 2
			case took < mode.target/2 && *span < maxSpan:
				*span *= 2
			}
		}
		if !rest(ctx, time.Duration(r.pause(mode))*took) {
			return ctx.Err()
		}
	}
	return nil
}

// pause is how many times as long as a batch took a run in mode rests after
// it: mode.busyPause while redemptions are being answered here, as an
// export rests beside them (exportRestFactor, a longer rest), else
// mode.pause.
func (r *Reconciler) pause(mode runMode) int {
	if mode.busyPause > mode.pause && r.tills.busy() {
		return mode.busyPause
	}
	return mode.pause
}

// tally is how a yielding run checks counters against the rows they count
// (each campaign's issued and reissued coupons) without a statement over
// all of those rows: one statement over a campaign of a million coupons
// took a core of the database for the better part of a second, and the
// tills beside it queued for that long (docs/TUNING.md).
type tally struct {
	// totals selects the counters of the merchant given as its one
	// parameter: ref_id and n, the count the counter claims.
	totals string
	// table is the table whose rows the counters count, walked in batches;
	// counts selects ref_id and n, how many of the batch's rows (its
	// {in:...} marker) each counter counts.
	table  batchTable
	counts string
}

// testHookTallied, when tests set it, is called after each batch a tally
// counted.
var testHookTallied func()

// runTally checks t's counters of one merchant: it reads them, counts their
// rows batch by batch (walk), and reads them again. A counter moves in the
// transaction that adds the rows it counts, and rows are never deleted, so a
// counter that read the same before and after the count had no rows added
// while the batches ran, and its count is exact: it is reported when the two
// differ, as ref_id with n (the counter) and m (the rows). A counter that
// moved meanwhile (a campaign issuing during the run) is left to the next
// run.
func (r *Reconciler) runTally(ctx context.Context, db *gorm.DB, mode runMode, t *tally, merchantID int64,
	span *int64, rows *[]checkRow, st *checkStats) error {
	totals := func() (map[int64]int64, error) {
		var rs []checkRow
		if err := r.runCheck(db, mode, t.totals, []any{merchantID}, &rs); err != nil {
			return nil, err
		}
		out := make(map[int64]int64, len(rs))
		for _, x := range rs {
			out[num(x.RefID)] = num(x.N)
		}
		return out, nil
	}
	before, err := totals()
	if err != nil {
		return err
	}
	counted := map[int64]int64{}
	err = r.walk(ctx, db, mode, t.table, merchantID, span, st, func(b batch) error {
		q, args := expandBatch(t.counts, nil, &b)
		var part []checkRow
		if err := r.runCheck(db, mode, q, args, &part); err != nil {
			return err
		}
		for _, x := range part {
			counted[num(x.RefID)] += num(x.N)
		}
		if testHookTallied != nil {
			testHookTallied()
		}
		return nil
	})
	if err != nil {
		return err
	}
	after, err := totals()
	if err != nil {
		return err
	}
	refs := make([]int64, 0, len(before))
	for ref := range before {
		refs = append(refs, ref)
	}
	slices.Sort(refs)
	for _, ref := range refs {
		n, m := before[ref], counted[ref]
		if after[ref] == n && m != n {
			*rows = append(*rows, checkRow{MerchantID: merchantID, RefID: &ref, N: &n, M: &m})
		}
	}
	return nil
}

// checkStats is what one check of a yielding run cost: its statements, and
// the time they held the database.
type checkStats struct {
	batches int
	busy    time.Duration
}

// rest waits d, at most maxYieldPause; it returns false when ctx ends first.
func rest(ctx context.Context, d time.Duration) bool {
	if d <= 0 || ctx.Err() != nil {
		return ctx.Err() == nil
	}
	t := time.NewTimer(min(d, maxYieldPause))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// runCheck runs one check's query into rows. A yielding run on the primary
// runs it through models.ReadSerial, without parallel plans on PostgreSQL, so
// the check's joins take one backend's core instead of up to three. On a
// read replica (r.lag set) the checks take nothing from the tills' database,
// so they run as they are, parallel plans and all.
func (r *Reconciler) runCheck(db *gorm.DB, mode runMode, q string, args []any, rows *[]checkRow) error {
	if !mode.yield || r.lag != nil {
		return db.Raw(q, args...).Scan(rows).Error
	}
	return models.ReadSerial(db, func(tx *gorm.DB) error { return tx.Raw(q, args...).Scan(rows).Error })
}

// ReconcileResult counts what one reconciliation run found.
type ReconcileResult struct {
	// Violations is how many discrepancies the checks found.
	Violations int
	// Opened is how many of them were new findings.
	Opened int
	// Reopened is how many of them were resolved findings, now open again.
	Reopened int
}

// Counts returns the result as named counts for the job-run record.
func (r ReconcileResult) Counts() map[string]int64 {
	return map[string]int64{"violations": int64(r.Violations), "opened": int64(r.Opened), "reopened": int64(r.Reopened)}
}

// Reconcile runs Check over every merchant and writes each violation as an
// OPEN finding unless the merchant already has a finding with its key:
// re-running never duplicates a finding. A violation whose finding was
// resolved reopens it (the resolution stays in its history); every finding a
// run sees gets the run's time as its last_seen_at.
func (r *Reconciler) Reconcile(ctx context.Context) (ReconcileResult, error) {
	res, _, err := r.reconcile(ctx, 0)
	return res, err
}

// ReconcileMerchant is Reconcile for one merchant: it checks and writes that
// merchant's rows only.
func (r *Reconciler) ReconcileMerchant(ctx context.Context, merchantID int64) (ReconcileResult, error) {
	res, _, err := r.reconcile(ctx, merchantID)
	return res, err
}

// reconcile is Reconcile over one merchant, or every merchant when
// merchantID is 0; it also returns the counts of each merchant with a
// violation.
func (r *Reconciler) reconcile(ctx context.Context, merchantID int64) (ReconcileResult, map[int64]*ReconcileResult, error) {
	vs, asOf, err := r.run(ctx, checks, yieldingRun, merchantID)
	if err != nil {
		return ReconcileResult{}, nil, err
	}
	now := r.now()
	res := ReconcileResult{Violations: len(vs)}
	byMerchantRes := map[int64]*ReconcileResult{}
	byMerchant := map[int64][]models.Finding{}
	var order []int64
	for _, v := range vs {
		if byMerchant[v.MerchantID] == nil {
			order = append(order, v.MerchantID)
		}
		byMerchant[v.MerchantID] = append(byMerchant[v.MerchantID], models.Finding{MerchantID: v.MerchantID, Kind: v.Kind,
			CouponID: v.CouponID, RedeemNo: v.RedeemNo, Details: v.Details, DedupeKey: v.Key, Status: models.FindingOpen,
			CreatedAt: now})
	}
	for _, m := range order {
		mr, err := r.writeFindings(ctx, m, byMerchant[m], now, asOf)
		if err != nil {
			return res, byMerchantRes, fmt.Errorf("write findings of merchant %d: %w", m, err)
		}
		res.Opened += mr.Opened
		res.Reopened += mr.Reopened
		byMerchantRes[m] = &mr
	}
	return res, byMerchantRes, nil
}

// writeFindings writes one merchant's violations as findings in one
// transaction: new keys are inserted (with their OPENED event), resolved ones
// reopened, and all of them marked seen at now. Each reopening is a
// conditional update judged by rows affected, so a finding resolved or
// reopened meanwhile by someone else is counted by whoever changed it. Only
// findings resolved at or before asOf, the time the checks' data was current
// at, are reopened: a resolution made after it may have dealt with what the
// checks saw.
func (r *Reconciler) writeFindings(ctx context.Context, merchantID int64, fs []models.Finding, now, asOf time.Time) (ReconcileResult, error) {
	res := ReconcileResult{Violations: len(fs)}
	keys := make([]string, len(fs))
	for i := range fs {
		keys[i] = fs[i].DedupeKey
		fs[i].LastSeenAt = &now
	}
	err := r.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		resolved, err := models.ResolvedFindingKeys(tx, merchantID, keys)
		if err != nil {
			return err
		}
		for _, k := range resolved {
			ok, err := models.ReopenFinding(tx, merchantID, k, now, asOf)
			if err != nil {
				return fmt.Errorf("reopen finding %s: %w", k, err)
			}
			if ok {
				res.Reopened++
			}
		}
		n, err := models.InsertFindings(tx, fs)
		if err != nil {
			return err
		}
		res.Opened = int(n)
		return models.SeeFindings(tx, merchantID, keys, now)
	})
	if err != nil {
		return ReconcileResult{}, err
	}
	return res, nil
}

// OpenFindingStats reports, across all merchants, how many findings are
// OPEN and how long the oldest has been, for metrics.
func (r *Reconciler) OpenFindingStats(ctx context.Context, now time.Time) (count int64, oldest time.Duration, err error) {
	n, first, err := models.OpenFindingStats(r.db.WithContext(ctx))
	if err != nil || first == nil {
		return n, 0, err
	}
	return n, now.Sub(*first), nil
}

// FindingFilter narrows Findings; zero fields do not filter.
type FindingFilter = models.FindingFilter

// Findings returns the actor's merchant's findings, newest first;
// administrators and finance staff only.
func (r *Reconciler) Findings(ctx context.Context, actor Actor, f FindingFilter, p PageArgs) (Page[models.Finding], error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance); err != nil {
		return Page[models.Finding]{}, err
	}
	q := models.MerchantFindings(r.read.WithContext(ctx), actor.MerchantID, f)
	page, err := paginate[models.Finding](q, "findings", p)
	if err != nil {
		return page, fmt.Errorf("list findings: %w", err)
	}
	return page, nil
}

// ErrFindingResolved is returned when resolving a finding that is already
// resolved; nothing changes.
var ErrFindingResolved = &Error{Code: ErrInvalidState.Code, Message: "the finding is already resolved", Kind: ErrConflict}

// ResolveFinding marks an OPEN finding RESOLVED with the actor and a note (1 to
// 1000 characters), audited and added to the finding's history in the same
// transaction; finance staff and
// administrators only. Another merchant's finding is NOT_FOUND; a resolved one
// is INVALID_STATE.
func (r *Reconciler) ResolveFinding(ctx context.Context, actor Actor, id int64, note string) (*models.Finding, error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance); err != nil {
		return nil, err
	}
	note = strings.TrimSpace(note)
	if note == "" || utf8.RuneCountInString(note) > 1000 || !utf8.ValidString(note) {
		return nil, invalidf("note is required and must be at most 1000 characters")
	}
	now := r.now()
	err := r.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		ok, err := models.ResolveFinding(tx, actor.MerchantID, id, actor.Label(), note, now)
		if err != nil {
			return err
		}
		if !ok {
			_, err := models.FindingByID(tx, actor.MerchantID, id)
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return notFoundf("finding %d not found", id)
			}
			if err != nil {
				return err
			}
			return ErrFindingResolved
		}
		return r.audit.record(tx, actor, "finding.resolve", fmt.Sprintf("finding:%d", id), note, nil)
	})
	if err != nil {
		return nil, fmt.Errorf("resolve finding %d: %w", id, err)
	}
	f, err := models.FindingByID(r.db.WithContext(ctx), actor.MerchantID, id)
	if err != nil {
		return nil, fmt.Errorf("read finding %d: %w", id, err)
	}
	return f, nil
}

// FindingHistory returns the history of the actor's merchant's findings among
// ids, oldest first per finding, for batch loaders; administrators and
// finance staff only. Other merchants' findings have none.
func (r *Reconciler) FindingHistory(ctx context.Context, actor Actor, ids []int64) ([]models.FindingEvent, error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance); err != nil {
		return nil, err
	}
	evs, err := models.FindingEvents(r.db.WithContext(ctx), actor.MerchantID, ids)
	if err != nil {
		return nil, fmt.Errorf("read finding history: %w", err)
	}
	return evs, nil
}
