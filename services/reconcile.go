package services

import (
	"context"
	"errors"
	"fmt"
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
	db         *gorm.DB
	now        func() time.Time
	audit      *Audit
	interval   time.Duration
	ordersInDB bool
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

// checkRow is what every check query selects, each using the columns it needs.
type checkRow struct {
	MerchantID int64
	CouponID   *int64
	RedeemNo   *string
	RefID      *int64
	A, B, C, D *string
	N, M       *int64
}

func str(p *string) string {
	if p == nil {
		return "NULL"
	}
	return *p
}

func num(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// check is one reconciliation query.
type check struct {
	kind models.FindingKind
	// orders marks checks that need the builtin adapter's orders table.
	orders  bool
	sql     string
	args    func(p checkParams) []any
	subject func(r checkRow) string
	details func(r checkRow) string
}

type checkParams struct {
	now, refundCutoff, stuckCutoff time.Time
}

// legalEdges are the coupon state machine's edges (DESIGN.md §2).
var legalEdges = [][2]models.CouponStatus{
	{models.CouponUnused, models.CouponRedeeming},
	{models.CouponRedeeming, models.CouponRedeemed},
	{models.CouponRedeeming, models.CouponUnused},
	{models.CouponRedeemed, models.CouponRefunded},
	{models.CouponUnused, models.CouponExpired},
}

func legalEdgeSQL(alias string) string {
	parts := make([]string, len(legalEdges))
	for i, e := range legalEdges {
		parts[i] = fmt.Sprintf("(%s.from_status = '%s' AND %s.to_status = '%s')", alias, e[0], alias, e[1])
	}
	return "(" + strings.Join(parts, " OR ") + ")"
}

func byRedeemNo(r checkRow) string { return str(r.RedeemNo) }
func byCoupon(r checkRow) string   { return strconv.FormatInt(num(r.CouponID), 10) }
func byRef(r checkRow) string      { return strconv.FormatInt(num(r.RefID), 10) }
func noArgs(checkParams) []any     { return nil }

var checks = []check{
	{
		kind: models.FindingSucceededFlowCouponNotRedeemed,
		sql: `SELECT f.merchant_id, f.coupon_id, f.redeem_no, c.status AS a, c.redeem_no AS b
FROM redemption_flows f JOIN coupons c ON c.id = f.coupon_id
WHERE f.status = 'SUCCEEDED'
  AND NOT (c.status IN ('REDEEMED', 'REFUNDED') AND c.redeem_no IS NOT NULL AND c.redeem_no = f.redeem_no)`,
		args: noArgs, subject: byRedeemNo,
		details: func(r checkRow) string {
			return fmt.Sprintf("redemption succeeded but its coupon is %s held by %s", str(r.A), str(r.B))
		},
	},
	{
		kind: models.FindingRedeemedCouponFlowCount,
		sql: `SELECT c.merchant_id, c.id AS coupon_id, c.status AS a, COALESCE(s.n, 0) AS n
FROM coupons c LEFT JOIN (SELECT coupon_id, COUNT(*) AS n FROM redemption_flows WHERE status = 'SUCCEEDED' GROUP BY coupon_id) s
  ON s.coupon_id = c.id
WHERE c.status IN ('REDEEMED', 'REFUNDED') AND COALESCE(s.n, 0) <> 1`,
		args: noArgs, subject: byCoupon,
		details: func(r checkRow) string {
			return fmt.Sprintf("coupon is %s with %d succeeded redemptions, want 1", str(r.A), num(r.N))
		},
	},
	{
		kind: models.FindingProcessingFlowCouponNotHeld,
		sql: `SELECT f.merchant_id, f.coupon_id, f.redeem_no, c.status AS a, c.redeem_no AS b
FROM redemption_flows f JOIN coupons c ON c.id = f.coupon_id
WHERE f.status = 'PROCESSING'
  AND NOT (c.status = 'REDEEMING' AND c.redeem_no IS NOT NULL AND c.redeem_no = f.redeem_no)`,
		args: noArgs, subject: byRedeemNo,
		details: func(r checkRow) string {
			return fmt.Sprintf("redemption is processing but its coupon is %s held by %s", str(r.A), str(r.B))
		},
	},
	{
		kind: models.FindingRedeemingCouponWithoutFlow,
		// Reached through merchants so the (merchant_id, status) index finds
		// the few REDEEMING coupons instead of a scan of them all.
		sql: `SELECT c.merchant_id, c.id AS coupon_id, c.redeem_no
FROM merchants m JOIN coupons c ON c.merchant_id = m.id
WHERE c.status = 'REDEEMING' AND NOT EXISTS (SELECT 1 FROM redemption_flows f
  WHERE f.coupon_id = c.id AND f.redeem_no = c.redeem_no AND f.status = 'PROCESSING')`,
		args:    noArgs,
		subject: func(r checkRow) string { return byCoupon(r) + ":" + str(r.RedeemNo) },
		details: func(r checkRow) string { return "coupon is REDEEMING without the processing redemption holding it" },
	},
	{
		kind: models.FindingStuckRedeeming,
		sql: `SELECT c.merchant_id, c.id AS coupon_id, f.redeem_no
FROM coupons c JOIN redemption_flows f ON f.coupon_id = c.id AND f.redeem_no = c.redeem_no AND f.status = 'PROCESSING'
WHERE c.status = 'REDEEMING' AND f.hold_until < ?`,
		args:    func(p checkParams) []any { return []any{p.stuckCutoff} },
		subject: byRedeemNo,
		details: func(r checkRow) string {
			return "coupon is still REDEEMING past its hold deadline and one compensation interval"
		},
	},
	{
		kind: models.FindingOrderWithoutRedemption, orders: true,
		// A live order is justified by a redemption in flight or a succeeded one
		// not refunded; a refund younger than the grace period may still be
		// cancelling its order. A redemption number names one flow at most, so
		// this is the orders without a live flow plus the orders whose
		// succeeded flow was refunded: two anti- and semi-joins, where a refund
		// test nested in the first would run once per flow.
		sql: `SELECT o.merchant_id, o.coupon_id, o.redeem_no, o.id AS ref_id
FROM orders o
WHERE o.status = 'CREATED' AND NOT EXISTS (SELECT 1 FROM redemption_flows f
  WHERE f.merchant_id = o.merchant_id AND f.redeem_no = o.redeem_no AND f.status IN ('PROCESSING', 'SUCCEEDED'))
UNION ALL
SELECT o.merchant_id, o.coupon_id, o.redeem_no, o.id AS ref_id
FROM orders o JOIN redemption_flows f ON f.merchant_id = o.merchant_id AND f.redeem_no = o.redeem_no
WHERE o.status = 'CREATED' AND f.status = 'SUCCEEDED'
  AND EXISTS (SELECT 1 FROM refund_flows r WHERE r.redemption_id = f.id AND r.created_at < ?)`,
		args:    func(p checkParams) []any { return []any{p.refundCutoff} },
		subject: byRedeemNo,
		details: func(r checkRow) string {
			return fmt.Sprintf("order %d is live without a succeeded, unrefunded redemption", num(r.RefID))
		},
	},
	{
		kind: models.FindingRedemptionWithoutOrder, orders: true,
		sql: `SELECT f.merchant_id, f.coupon_id, f.redeem_no
FROM redemption_flows f
WHERE f.status = 'SUCCEEDED' AND f.operation = 'REDEEM'
  AND NOT EXISTS (SELECT 1 FROM refund_flows r WHERE r.redemption_id = f.id)
  AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.redeem_no = f.redeem_no AND o.status = 'CREATED')`,
		args: noArgs, subject: byRedeemNo,
		details: func(r checkRow) string { return "redemption succeeded but has no live order" },
	},
	{
		kind: models.FindingRefundWithoutRedemption,
		sql: `SELECT r.merchant_id, r.coupon_id, r.redeem_no, r.id AS ref_id, f.status AS a
FROM refund_flows r LEFT JOIN redemption_flows f ON f.id = r.redemption_id
WHERE f.id IS NULL OR f.status <> 'SUCCEEDED' OR f.coupon_id <> r.coupon_id OR f.redeem_no <> r.redeem_no
  OR f.merchant_id <> r.merchant_id`,
		args: noArgs, subject: byRef,
		details: func(r checkRow) string {
			return fmt.Sprintf("refund %d does not reverse a succeeded redemption of its coupon (redemption %s)",
				num(r.RefID), str(r.A))
		},
	},
	{
		kind: models.FindingRefundCount,
		sql: `SELECT c.merchant_id, c.id AS coupon_id, c.status AS a, COALESCE(s.n, 0) AS n
FROM merchants m JOIN coupons c ON c.merchant_id = m.id
LEFT JOIN (SELECT coupon_id, COUNT(*) AS n FROM refund_flows GROUP BY coupon_id) s ON s.coupon_id = c.id
WHERE c.status = 'REFUNDED' AND COALESCE(s.n, 0) <> 1`,
		args: noArgs, subject: byCoupon,
		details: func(r checkRow) string {
			return fmt.Sprintf("coupon is %s with %d refunds, want 1", str(r.A), num(r.N))
		},
	},
	{
		kind: models.FindingRefundCount,
		sql: `SELECT c.merchant_id, c.id AS coupon_id, c.status AS a, COUNT(*) AS n
FROM refund_flows r JOIN coupons c ON c.id = r.coupon_id
WHERE c.status <> 'REFUNDED'
GROUP BY c.merchant_id, c.id, c.status`,
		args: noArgs, subject: byCoupon,
		details: func(r checkRow) string {
			return fmt.Sprintf("coupon is %s with %d refunds, want 0", str(r.A), num(r.N))
		},
	},
	{
		kind: models.FindingHistoryMismatch,
		// One join of each coupon with its transitions, counted and searched
		// for the one that made the current version (versions are unique per
		// coupon), instead of joining the transitions twice.
		sql: `SELECT c.merchant_id, c.id AS coupon_id, c.status AS a,
  MAX(t.to_status) FILTER (WHERE t.version_after = c.version) AS b, c.version AS n, COUNT(t.id) AS m
FROM coupons c LEFT JOIN coupon_transitions t ON t.coupon_id = c.id
GROUP BY c.id
HAVING c.version <> COUNT(t.id)
   OR (c.version > 0 AND MAX(t.to_status) FILTER (WHERE t.version_after = c.version) IS DISTINCT FROM c.status)
   OR (c.version = 0 AND c.status <> 'UNUSED')`,
		args: noArgs, subject: byCoupon,
		details: func(r checkRow) string {
			return fmt.Sprintf("coupon is %s at version %d with %d transitions, the last ending in %s",
				str(r.A), num(r.N), num(r.M), str(r.B))
		},
	},
	{
		kind: models.FindingIllegalTransition,
		// The transition before t is the previous one in version order when its
		// version is t's minus one (versions are unique per coupon): one ordered
		// pass with lag instead of joining the table with itself.
		sql: `SELECT t.merchant_id, t.coupon_id, t.id AS ref_id, t.from_status AS a, t.to_status AS b, t.flow_no AS c,
  CASE WHEN t.prev_version = t.version_after - 1 THEN t.prev_to END AS d
FROM (SELECT t.*, LAG(t.version_after) OVER w AS prev_version, LAG(t.to_status) OVER w AS prev_to
  FROM coupon_transitions t WINDOW w AS (PARTITION BY t.coupon_id ORDER BY t.version_after)) t
WHERE NOT ` + legalEdgeSQL("t") + `
   OR (t.version_after = 1 AND t.from_status <> 'UNUSED')
   OR (t.version_after > 1 AND (t.prev_version IS NULL OR t.prev_version <> t.version_after - 1 OR t.prev_to <> t.from_status))`,
		args: noArgs, subject: byRef,
		details: func(r checkRow) string {
			return fmt.Sprintf("transition %d %s -> %s by %s is not a legal edge after %s",
				num(r.RefID), str(r.A), str(r.B), str(r.C), str(r.D))
		},
	},
	{
		kind: models.FindingIssuedCountMismatch,
		sql: `SELECT k.merchant_id, k.id AS ref_id, k.issued + k.reissued AS n, COALESCE(s.n, 0) AS m
FROM campaigns k LEFT JOIN (SELECT campaign_id, COUNT(*) AS n FROM coupons GROUP BY campaign_id) s ON s.campaign_id = k.id
WHERE k.issued + k.reissued <> COALESCE(s.n, 0)`,
		args: noArgs, subject: byRef,
		details: func(r checkRow) string {
			return fmt.Sprintf("campaign %d counts %d issued and reissued coupons but has %d", num(r.RefID), num(r.N), num(r.M))
		},
	},
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
	return r.run(ctx, checks, checkWorkers)
}

// checkWorkers is how many checks run at once. Most checks are one big join,
// which PostgreSQL runs on one core; two at a time keep two cores busy
// without taking more than two connections from the pool.
const checkWorkers = 2

func (r *Reconciler) run(ctx context.Context, all []check, workers int) ([]Violation, error) {
	now := r.now()
	p := checkParams{now: now, refundCutoff: now.Add(-r.interval), stuckCutoff: now.Add(-r.interval)}
	var todo []check
	for _, c := range all {
		if !c.orders || r.ordersInDB {
			todo = append(todo, c)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	db := r.db.WithContext(ctx)
	rows := make([][]checkRow, len(todo))
	var (
		wg       sync.WaitGroup
		failOnce sync.Once
		failed   error
	)
	next := make(chan int)
	for range min(workers, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c := todo[i]
				if err := db.Raw(c.sql, c.args(p)...).Scan(&rows[i]).Error; err != nil {
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
		return nil, failed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
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
	return out, nil
}

// ReconcileResult counts what one reconciliation run found.
type ReconcileResult struct {
	// Violations is how many discrepancies the checks found.
	Violations int
	// Opened is how many of them were new findings.
	Opened int
}

// Counts returns the result as named counts for the job-run record.
func (r ReconcileResult) Counts() map[string]int64 {
	return map[string]int64{"violations": int64(r.Violations), "opened": int64(r.Opened)}
}

// Reconcile runs Check and writes each violation as an OPEN finding unless the
// merchant already has a finding with its key, resolved or not: re-running
// never duplicates a finding.
func (r *Reconciler) Reconcile(ctx context.Context) (ReconcileResult, error) {
	vs, err := r.Check(ctx)
	if err != nil {
		return ReconcileResult{}, err
	}
	now := r.now()
	fs := make([]models.Finding, len(vs))
	for i, v := range vs {
		fs[i] = models.Finding{MerchantID: v.MerchantID, Kind: v.Kind, CouponID: v.CouponID, RedeemNo: v.RedeemNo,
			Details: v.Details, DedupeKey: v.Key, Status: models.FindingOpen, CreatedAt: now}
	}
	n, err := models.InsertFindings(r.db.WithContext(ctx), fs)
	if err != nil {
		return ReconcileResult{Violations: len(vs)}, fmt.Errorf("write findings: %w", err)
	}
	return ReconcileResult{Violations: len(vs), Opened: int(n)}, nil
}

// FindingFilter narrows Findings; zero fields do not filter.
type FindingFilter struct {
	Status   models.FindingStatus
	Kind     models.FindingKind
	CouponID int64
	// From and To bound the creation time: From <= created_at < To.
	From, To time.Time
}

// Findings returns the actor's merchant's findings, newest first;
// administrators and finance staff only.
func (r *Reconciler) Findings(ctx context.Context, actor Actor, f FindingFilter, p PageArgs) (Page[models.Finding], error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance); err != nil {
		return Page[models.Finding]{}, err
	}
	q := r.db.WithContext(ctx).Model(&models.Finding{}).Where("merchant_id = ?", actor.MerchantID)
	if f.Status != "" {
		q = q.Where("status = ?", string(f.Status))
	}
	if f.Kind != "" {
		q = q.Where("kind = ?", string(f.Kind))
	}
	if f.CouponID != 0 {
		q = q.Where("coupon_id = ?", f.CouponID)
	}
	if !f.From.IsZero() {
		q = q.Where("created_at >= ?", f.From.UTC())
	}
	if !f.To.IsZero() {
		q = q.Where("created_at < ?", f.To.UTC())
	}
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
// 1000 characters), audited in the same transaction; finance staff and
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
			var f models.Finding
			err := tx.Where("id = ? AND merchant_id = ?", id, actor.MerchantID).Take(&f).Error
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
	var f models.Finding
	if err := r.db.WithContext(ctx).Take(&f, id).Error; err != nil {
		return nil, fmt.Errorf("read finding %d: %w", id, err)
	}
	return &f, nil
}
