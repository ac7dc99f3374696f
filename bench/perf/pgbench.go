package perf

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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
		f := filepath.Join(dir, fmt.Sprintf("pgbench-%d.sql", len(out)))
		if err := os.WriteFile(f, []byte(s.script), 0o644); err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, bin, "-h", env.PGHost, "-p", strconv.Itoa(env.PGPort), "-U", "postgres",
			"-n", "-M", "prepared", "-c", "8", "-j", "2", "-T", strconv.Itoa(secs), "-D", "ncoupons="+strconv.Itoa(ncoupons), "-f", f, db)
		b, err := cmd.CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("pgbench %s: %w: %s", s.name, err, b)
		}
		m := tpsRe.FindSubmatch(b)
		if m == nil {
			return nil, fmt.Errorf("pgbench %s: no tps in output: %s", s.name, b)
		}
		tps, _ := strconv.ParseFloat(string(m[1]), 64)
		bl := Baseline{Name: s.name, TPS: tps, Clients: 8, Seconds: secs, Script: s.script}
		if l := latRe.FindSubmatch(b); l != nil {
			bl.LatencyAvg, _ = strconv.ParseFloat(string(l[1]), 64)
		}
		out = append(out, bl)
		time.Sleep(time.Second)
	}
	return out, nil
}
