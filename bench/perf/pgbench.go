package perf

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"coupond/bench/harness"
)

// The seed article's redemption: five statements, each its own autocommit
// transaction (insert flow, occupy coupon, create order, confirm coupon,
// finish flow). Coupons are picked at random, so a few occupy updates find
// the coupon taken and change nothing; the statements run either way, as in
// the article.
const seedFive = `\set cid random(1, :ncoupons)
\set r random(1, 1000000000000)
INSERT INTO redeem_flow (redeem_no, coupon_id, status, created_at) VALUES ('RD' || :client_id || '-' || :r, :cid, 'PROCESSING', now());
UPDATE coupon SET status = 'REDEEMING', redeem_no = 'RD' || :client_id || '-' || :r, version = version + 1, update_time = now() WHERE coupon_id = :cid AND status = 'UNUSED';
INSERT INTO orders (redeem_no, coupon_id, created_at) VALUES ('RD' || :client_id || '-' || :r, :cid, now());
UPDATE coupon SET status = 'REDEEMED', version = version + 1, update_time = now() WHERE coupon_id = :cid AND status = 'REDEEMING' AND redeem_no = 'RD' || :client_id || '-' || :r;
UPDATE redeem_flow SET status = 'SUCCEEDED', order_id = :r WHERE redeem_no = 'RD' || :client_id || '-' || :r;
`

// The minimal correct redemption: one transaction, one commit, with the
// conditional update, the ledger row and the order.
const oneCommit = `\set cid random(1, :ncoupons)
\set r random(1, 1000000000000)
BEGIN;
UPDATE coupon SET status = 'REDEEMED', redeem_no = 'RD' || :client_id || '-' || :r, version = version + 1, update_time = now() WHERE coupon_id = :cid AND status = 'UNUSED';
INSERT INTO redeem_flow (redeem_no, coupon_id, status, order_id, created_at) VALUES ('RD' || :client_id || '-' || :r, :cid, 'SUCCEEDED', :r, now());
INSERT INTO orders (redeem_no, coupon_id, created_at) VALUES ('RD' || :client_id || '-' || :r, :cid, now());
COMMIT;
`

// Baseline is one pgbench measurement.
type Baseline struct {
	Name       string  `json:"name"`
	TPS        float64 `json:"tps"`
	Clients    int     `json:"clients"`
	Seconds    int     `json:"seconds"`
	LatencyAvg float64 `json:"latency_avg_ms"`
	Script     string  `json:"script"`
}

var (
	tpsRe = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	latRe = regexp.MustCompile(`latency average = ([0-9.]+) ms`)
)

// PGBench finds pgbench on PATH or in Debian's PostgreSQL directories.
func PGBench() (string, error) {
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p, nil
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench")
	if len(m) > 0 {
		return m[len(m)-1], nil
	}
	return "", fmt.Errorf("pgbench not found: apt-get install postgresql-contrib")
}

// RunBaselines creates database db with the seed's tables, fills ncoupons
// coupons and runs both scripts with 8 clients for secs seconds each.
func RunBaselines(ctx context.Context, env harness.Env, db string, ncoupons, secs int, dir string) ([]Baseline, error) {
	bin, err := PGBench()
	if err != nil {
		return nil, err
	}
	if err := env.RecreateDB(ctx, db); err != nil {
		return nil, err
	}
	pool, err := pgxpool.New(ctx, env.DBURL(db, 0))
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	_, err = pool.Exec(ctx, `
CREATE TABLE coupon (coupon_id BIGINT PRIMARY KEY, status TEXT NOT NULL, redeem_no TEXT, version INT NOT NULL DEFAULT 0, update_time TIMESTAMPTZ NOT NULL);
CREATE TABLE redeem_flow (redeem_no TEXT PRIMARY KEY, coupon_id BIGINT NOT NULL, status TEXT NOT NULL, order_id BIGINT, created_at TIMESTAMPTZ NOT NULL);
CREATE INDEX redeem_flow_coupon ON redeem_flow (coupon_id);
CREATE TABLE orders (id BIGSERIAL PRIMARY KEY, redeem_no TEXT NOT NULL UNIQUE, coupon_id BIGINT NOT NULL, created_at TIMESTAMPTZ NOT NULL);`)
	if err != nil {
		return nil, err
	}
	reset := func() error {
		_, err := pool.Exec(ctx, `TRUNCATE coupon, redeem_flow, orders;
INSERT INTO coupon SELECT g, 'UNUSED', NULL, 0, now() FROM generate_series(1, $1::bigint) g; VACUUM ANALYZE coupon;`, ncoupons)
		if err != nil {
			// VACUUM cannot run inside the implicit transaction of a multi-statement Exec.
			if _, err = pool.Exec(ctx, `TRUNCATE coupon, redeem_flow, orders`); err != nil {
				return err
			}
			if _, err = pool.Exec(ctx, `INSERT INTO coupon SELECT g, 'UNUSED', NULL, 0, now() FROM generate_series(1, $1::bigint) g`, ncoupons); err != nil {
				return err
			}
			_, err = pool.Exec(ctx, `VACUUM ANALYZE coupon`)
		}
		return err
	}
	var out []Baseline
	for _, s := range []struct{ name, script string }{{"seed five autocommit statements", seedFive}, {"minimal one-commit redemption", oneCommit}} {
		if err := reset(); err != nil {
			return nil, err
		}
		bl, err := runPGBench(ctx, env, bin, db, s.name, s.script, secs, dir, "ncoupons="+strconv.Itoa(ncoupons))
		if err != nil {
			return nil, err
		}
		out = append(out, bl)
		time.Sleep(time.Second)
	}
	return out, nil
}

// runPGBench runs script with 8 clients for secs seconds against db, with
// -D definitions defs, and reads its rate and mean latency.
func runPGBench(ctx context.Context, env harness.Env, bin, db, name, script string, secs int, dir string, defs ...string) (Baseline, error) {
	f, err := os.CreateTemp(dir, "pgbench-*.sql")
	if err != nil {
		return Baseline{}, err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(script); err != nil {
		return Baseline{}, err
	}
	f.Close()
	args := []string{"-h", env.PGHost, "-p", strconv.Itoa(env.PGPort), "-U", "postgres",
		"-n", "-M", "prepared", "-c", "8", "-j", "2", "-T", strconv.Itoa(secs)}
	for _, d := range defs {
		args = append(args, "-D", d)
	}
	b, err := exec.CommandContext(ctx, bin, append(args, "-f", f.Name(), db)...).CombinedOutput()
	if err != nil {
		return Baseline{}, fmt.Errorf("pgbench %s: %w: %s", name, err, b)
	}
	m := tpsRe.FindSubmatch(b)
	if m == nil {
		return Baseline{}, fmt.Errorf("pgbench %s: no tps in output: %s", name, b)
	}
	tps, _ := strconv.ParseFloat(string(m[1]), 64)
	bl := Baseline{Name: name, TPS: tps, Clients: 8, Seconds: secs, Script: script}
	if l := latRe.FindSubmatch(b); l != nil {
		bl.LatencyAvg, _ = strconv.ParseFloat(string(l[1]), 64)
	}
	return bl, nil
}

// OwnSQLName names the own-SQL baseline in the report.
const OwnSQLName = "own SQL: coupond's one-statement redemption"

// ownSQLParams are the pgbench expressions bound to the one-shot statement's
// parameters, drawn as the server draws them: a fresh redemption number and
// request id per redemption (unique across runs by :run), the next unused
// code of a campaign (each client walks its own share of the codes, so no
// two redemptions race for one),
// the bench store, a 5,000 order, the server's hold deadline. The operator is
// NULL (a clerk token of the bench names no operator), no customer, and the
// clock is the database's (the bench campaign has no time rules).
var ownSQLParams = map[string]string{
	"redeemNo":     "'RD' || :run || '-' || :client_id || '-' || :i || '-' || :r",
	"now":          "now()",
	"merchantId":   ":mid",
	"code":         "(SELECT code FROM bench_own_codes WHERE n = :n)",
	"orderAmount":  "5000",
	"storeId":      ":sid",
	"requestId":    "'own-' || :run || '-' || :client_id || '-' || :i",
	"fingerprint":  "'" + strings.Repeat("f", 64) + "'",
	"operatorId":   "NULL",
	"holdUntil":    "now() + interval '2 minutes'",
	"actor":        "'bench'",
	"customerRef":  "''",
	"clockDay":     "(1 << (extract(isodow FROM now())::int - 1))",
	"clockPrevDay": "(1 << ((extract(isodow FROM now())::int + 5) % 7))",
	"clockMinute":  "(extract(hour FROM now())::int * 60 + extract(minute FROM now())::int)",
	"eventId":      "'evt_own_' || :run || '_' || :client_id || '_' || :i",
}

var placeholderRe = regexp.MustCompile(`\$(\d+)`)

// OwnSQLScript turns the statement `coupond debug redeem-sql` prints into a
// pgbench script. It fails on a parameter it does not know how to draw, so
// a new parameter of the statement cannot go unnoticed.
func OwnSQLScript(stmt string, params []string) (string, error) {
	var bad error
	body := placeholderRe.ReplaceAllStringFunc(stmt, func(m string) string {
		i, _ := strconv.Atoi(m[1:])
		if i < 1 || i > len(params) {
			bad = fmt.Errorf("statement uses %s, only %d parameters named", m, len(params))
			return m
		}
		e, ok := ownSQLParams[params[i-1]]
		if !ok {
			bad = fmt.Errorf("no pgbench expression for parameter %q", params[i-1])
			return m
		}
		return "(" + e + ")"
	})
	if bad != nil {
		return "", bad
	}
	return "\\set i :i + 1\n\\set n :client_id + 8 * (:i - 1) + 1\n\\set r random(1, 1000000000)\n" + body + ";\n", nil
}

// RunOwnSQL runs the server's own one-shot statement (printed by
// `coupond debug redeem-sql` of the binary under test) in pgbench against the
// fixture's database, on the codes of a campaign of its own.
func RunOwnSQL(ctx context.Context, fx *harness.Fixture, codes []string, secs int, dir string) (Baseline, int, error) {
	bin, err := PGBench()
	if err != nil {
		return Baseline{}, 0, err
	}
	out, err := exec.CommandContext(ctx, fx.Env.Bin, "debug", "redeem-sql").Output()
	if err != nil {
		return Baseline{}, 0, fmt.Errorf("coupond debug redeem-sql: %w", err)
	}
	var st struct {
		SQL    string   `json:"sql"`
		Params []string `json:"params"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		return Baseline{}, 0, fmt.Errorf("coupond debug redeem-sql: %w", err)
	}
	script, err := OwnSQLScript(st.SQL, st.Params)
	if err != nil {
		return Baseline{}, 0, err
	}
	if _, err := fx.Pool.Exec(ctx, `DROP TABLE IF EXISTS bench_own_codes;
CREATE TABLE bench_own_codes (n BIGINT PRIMARY KEY, code TEXT NOT NULL)`); err != nil {
		return Baseline{}, 0, err
	}
	defer fx.Pool.Exec(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS bench_own_codes`)
	if _, err := fx.Pool.Exec(ctx, `INSERT INTO bench_own_codes SELECT ord, code FROM unnest($1::text[]) WITH ORDINALITY AS u(code, ord);
ANALYZE bench_own_codes`, codes); err != nil {
		// ANALYZE cannot follow in one extended-protocol Exec on every setup.
		if _, err = fx.Pool.Exec(ctx, `INSERT INTO bench_own_codes SELECT ord, code FROM unnest($1::text[]) WITH ORDINALITY AS u(code, ord)`, codes); err != nil {
			return Baseline{}, 0, err
		}
	}
	if _, err := fx.Pool.Exec(ctx, `ANALYZE bench_own_codes`); err != nil {
		return Baseline{}, 0, err
	}
	var mid int64
	if err := fx.Pool.QueryRow(ctx, `SELECT id FROM merchants WHERE code = $1`, fx.Merchant.Code).Scan(&mid); err != nil {
		return Baseline{}, 0, err
	}
	var before int
	_ = fx.Pool.QueryRow(ctx, `SELECT count(*) FROM redemption_flows WHERE request_id LIKE 'own-%'`).Scan(&before)
	bl, err := runPGBench(ctx, fx.Env, bin, fx.DBName, OwnSQLName, script, secs, dir,
		"i=0", "run="+strconv.FormatInt(time.Now().UnixNano(), 10), "mid="+strconv.FormatInt(mid, 10), "sid="+fx.StoreID)
	if err != nil {
		return bl, 0, err
	}
	var after int
	_ = fx.Pool.QueryRow(ctx, `SELECT count(*) FROM redemption_flows WHERE request_id LIKE 'own-%'`).Scan(&after)
	return bl, after - before, nil
}
