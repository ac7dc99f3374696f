package perf

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"coupond/bench/harness"
	"coupond/bench/load"
)

// seedLedger writes a ledger of the bench merchant's straight into the
// database, at a store of its own: n coupons of one campaign, the first 87%
// of them redeemed, each with its succeeded flow, its two transitions and
// its order, consistent by every reconciliation check. It stands for the
// ledger a long sale leaves behind, made in seconds instead of the hour
// redemptions would take, so reconciliation (runJob reconciles the caller's
// merchant) has as much to read as it would after one.
func seedLedger(ctx context.Context, fx *harness.Fixture, n int) error {
	redeemed := n * 87 / 100
	stmts := []string{
		`INSERT INTO stores (merchant_id, code, name, created_at) SELECT id, 'bg', 'Ledger store', now() FROM merchants WHERE code = 'bench'`,
		fmt.Sprintf(`INSERT INTO campaigns (merchant_id, name, type, value, valid_from, valid_to, all_stores, total_quantity, issued,
  refund_window_minutes, created_at)
SELECT id, 'ledger', 'CASH', 100, now() - interval '1 day', now() + interval '30 days', true, %d, %d, 60, now()
FROM merchants WHERE code = 'bench'`, n, n),
		fmt.Sprintf(`INSERT INTO coupons (merchant_id, campaign_id, code, status, version, valid_from, valid_to, redeem_no,
  created_at, updated_at, uses_total, uses_left)
SELECT k.merchant_id, k.id, 'BGLEDGER' || g, CASE WHEN g <= %[2]d THEN 'REDEEMED' ELSE 'UNUSED' END,
  CASE WHEN g <= %[2]d THEN 2 ELSE 0 END, k.valid_from, k.valid_to, CASE WHEN g <= %[2]d THEN 'BGRD' || g END,
  now(), now(), 1, CASE WHEN g <= %[2]d THEN 0 ELSE 1 END
FROM campaigns k, generate_series(1, %[1]d) g WHERE k.name = 'ledger'`, n, redeemed),
		`INSERT INTO redemption_flows (merchant_id, redeem_no, operation, request_id, fingerprint, coupon_id, store_id, status,
  order_amount, discount_amount, order_ref, created_at, updated_at, finished_at, use_no)
SELECT c.merchant_id, c.redeem_no, 'REDEEM', 'bg' || c.id, 'seed', c.id, s.id, 'SUCCEEDED', 1000, 100, c.redeem_no,
  now(), now(), now(), 1
FROM coupons c JOIN stores s ON s.merchant_id = c.merchant_id AND s.code = 'bg' WHERE c.redeem_no LIKE 'BGRD%'`,
		`INSERT INTO coupon_transitions (merchant_id, coupon_id, from_status, to_status, version_after, flow_no, actor, created_at)
SELECT c.merchant_id, c.id, v.f, v.t, v.n, c.redeem_no, 'seed', now()
FROM coupons c, (VALUES ('UNUSED', 'REDEEMING', 1), ('REDEEMING', 'REDEEMED', 2)) v(f, t, n) WHERE c.redeem_no LIKE 'BGRD%'`,
		`INSERT INTO orders (merchant_id, redeem_no, coupon_id, store_id, amount, status, created_at)
SELECT c.merchant_id, c.redeem_no, c.id, s.id, 900, 'CREATED', now()
FROM coupons c JOIN stores s ON s.merchant_id = c.merchant_id AND s.code = 'bg' WHERE c.redeem_no LIKE 'BGRD%'`,
		`VACUUM ANALYZE`,
		`CHECKPOINT`,
	}
	for _, q := range stmts {
		if _, err := fx.Pool.Exec(ctx, q); err != nil {
			return fmt.Errorf("seed ledger: %w", err)
		}
	}
	return nil
}

// controlSleep is the control row's work (Config.Control): long enough for
// the busy side to run in as many chunks as beside a work (an export of
// the seeded ledger beside the tills took 84-98 s at a rest of three times
// its batches, 148-216 s at five).
const controlSleep = 100 * time.Second

// yieldingOnly runs the reconciliation row alone (ONLY=reconciliation) or
// the ledger export's (ONLY=export): a fresh server, a seeded ledger of n
// coupons of the bench merchant's (which its runJob reconciles and its
// /export/redemptions.csv exports), and its redemptions at half the given
// knee, quiet and then beside runJob(reconciliation) or the whole ledger's
// export.
func yieldingOnly(ctx context.Context, cfg Config, res *Result) error {
	n, secs := 1_500_000, 20*time.Second
	if cfg.Quick {
		n, secs = 150_000, 8*time.Second
	}
	knee := cfg.Knee
	if knee <= 0 {
		knee = 1156 // the sustained knee of the last full run
	}
	res.Knee = knee
	env := cfg.Env
	hold, every := 2*time.Minute, 30*time.Second
	fx, err := env.NewFixture(ctx, "coupond_bench_bg", harness.ServerConfig{GoMaxProcs: serverProcs(), Name: "bench-server", Jobs: true, HoldTimeout: hold,
		CompensateEvery: every, AllowPrivateWebhooks: true})
	if err != nil {
		return err
	}
	defer fx.Close()
	cfg.logf("seeding a ledger of %d coupons", n)
	t := time.Now()
	if err := seedLedger(ctx, fx, n); err != nil {
		return err
	}
	cfg.logf("  seeded in %.0f s", time.Since(t).Seconds())
	rate := knee / 2
	// A campaign issues at most a million codes; at half a knee of over
	// 4,900/s the row's bound needs more.
	span := bgOpen + 2*maxBackground + 5*time.Second
	if cfg.Control {
		span += bgOpen + 2*controlSleep + 10*time.Second
	}
	list, err := issueCodes(ctx, fx, "load", int(rate*span.Seconds())+1000)
	if err != nil {
		return err
	}
	// The load's campaign adds a sixth to the coupons: vacuum and analyze
	// now, or autovacuum does it during the quiet window and makes it the
	// noisy one.
	for _, q := range []string{"VACUUM ANALYZE coupons", "CHECKPOINT"} {
		if _, err := fx.Pool.Exec(ctx, q); err != nil {
			return fmt.Errorf("after the load's campaign: %w", err)
		}
	}
	if err := settle(ctx, fx); err != nil {
		return err
	}
	pool := &codes{list: list}
	var rid atomic.Int64
	next := func(prefix string, _ int) func(int) load.Op {
		return func(int) load.Op {
			return load.Redeem("redeem", pool.take(), fx.StoreID, prefix+strconv.FormatInt(rid.Add(1), 10))
		}
	}
	url := fx.Server.URL() + "/graphql"
	// A fresh server's first seconds at the rate (connections, statements,
	// the campaign's pages) are not the quiet the row compares with.
	load.Run(ctx, load.Attack{Name: "warm-up", URL: url, Token: fx.Clerk, Pacer: load.Constant{PerSec: rate},
		Duration: 5 * time.Second, MaxOps: int(rate*5) + 1, Next: next("bgw-", 0)})
	name, what := "p99 during reconciliation", "runJob(reconciliation), each run measured whole"
	work := func(ctx context.Context) error { return runJob(ctx, fx.Admin, "reconciliation") }
	if cfg.Only == "export" {
		name, what = "p99 during a ledger export", "GET /export/redemptions.csv of the whole ledger, each run measured whole"
		work = func(ctx context.Context) error {
			_, err := exportCSV(ctx, fx.Server.URL(), "/export/redemptions.csv", fx.Merchant.AdminToken)
			return err
		}
	}
	if cfg.Control {
		nothing := func(ctx context.Context) error {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(controlSleep):
				return nil
			}
		}
		row := underBackground(ctx, fx, url, fx.Clerk, rate, secs, "control: p99 beside nothing",
			fmt.Sprintf("nothing (a sleep of %s, the control)", controlSleep), next, nothing)
		res.Background = append(res.Background, row)
		cfg.logf("  control: quiet p99 %.1f ms, beside a sleep %.1f ms", row.Quiet.P99, row.During.P99)
	}
	row := underBackground(ctx, fx, url, fx.Clerk, rate, secs, name, what, next, work)
	res.Background = append(res.Background, row)
	cfg.logf("  quiet p99 %.1f ms, during %.1f ms (%d runs of %.1f s)", row.Quiet.P99, row.During.P99, row.WorkRuns, row.WorkSecs)
	a, err := env.Audit(ctx, fx.DBURL, hold, every)
	if err != nil {
		return err
	}
	if len(a.Violations) > 0 {
		return fmt.Errorf("audit after the %s row: %d violations", cfg.Only, len(a.Violations))
	}
	return nil
}
