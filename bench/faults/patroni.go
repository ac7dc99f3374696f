package faults

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"coupond/bench/harness"
	"coupond/bench/load"
)

// PatroniOutcome is what a failover row measures besides the common columns.
type PatroniOutcome struct {
	// Sync tells whether the standby was synchronous during the row.
	Sync bool `json:"sync"`
	// Lost counts redemptions answered SUCCEEDED that the new primary does
	// not hold as succeeded with the answered redemption number.
	Lost int `json:"lost"`
	// Doubled counts coupons with more succeeded redemptions than uses (one,
	// or a card's uses), and request ids answered SUCCEEDED with two
	// redemption numbers.
	Doubled int `json:"doubled"`
	// FailoverMS is from the injection to the other node accepting writes.
	FailoverMS float64 `json:"failover_ms"`
	// KillToSuccessMS is from the injection to the first acknowledged
	// redemption sent after it.
	KillToSuccessMS float64 `json:"kill_to_first_success_ms"`
	// GapMS is the longest time during the row without an acknowledged
	// redemption completing: the outage clients saw.
	GapMS float64 `json:"longest_gap_ms"`
	// From and To are the primary before and after.
	From string `json:"from"`
	To   string `json:"to"`
}

// patroniRow is one failover fault.
type patroniRow struct {
	name, how string
	sync      bool
	kill      bool // kill -9 the primary's postmaster; else patronictl switchover
	ci        bool
}

var patroniRows = []patroniRow{
	{"Patroni failover, synchronous", "kill -9 of the primary's postmaster; Patroni (primary_start_timeout 0) promotes the synchronous standby", true, true, true},
	{"Patroni switchover, synchronous", "`patronictl switchover --force` to the synchronous standby", true, false, false},
	{"Patroni failover, asynchronous", "kill -9 of the primary's postmaster with the standby asynchronous (synchronous_mode off); Patroni promotes it", false, true, false},
}

// runPatroni makes a Patroni cluster (two PostgreSQL nodes, one etcd), starts
// a server on it that reaches the primary through a multi-host URL with
// target_session_attrs=read-write, and runs the failover rows on it in
// order: the synchronous ones first, then the cluster is switched to
// asynchronous replication (patronictl edit-config) for the last. The
// cluster is removed at the end, on failure too.
func runPatroni(ctx context.Context, cfg Config, rate float64, secs time.Duration, ncodes int) ([]FaultResult, error) {
	var rows []patroniRow
	for _, r := range patroniRows {
		if !cfg.CI || r.ci {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return nil, nil
	}
	t0 := time.Now()
	pc, err := harness.StartPatroni(ctx, rows[0].sync)
	if err != nil {
		return nil, fmt.Errorf("patroni cluster: %w", err)
	}
	defer pc.Stop()
	setup := time.Since(t0)
	cfg.logf("patroni cluster (PostgreSQL %s) on %s: made in %.1f s", pc.Version, pc.Hosts(), setup.Seconds())
	cfg.Env = pc.Env(cfg.Env)
	w, err := newWorld(ctx, cfg, "coupond_faults_patroni", false, true, ncodes)
	if err != nil {
		return nil, err
	}
	defer w.close()
	var out []FaultResult
	for _, r := range rows {
		if r.sync != pc.Sync {
			if err := pc.SetSync(ctx, r.sync); err != nil {
				return out, err
			}
		}
		if err := pc.WaitStandby(ctx, 90*time.Second); err != nil {
			return out, fmt.Errorf("%s: %w", r.name, err)
		}
		po := &PatroniOutcome{Sync: r.sync}
		fr, err := w.run(ctx, r.name, r.how, rate, secs, injectPatroni(pc, r, po))
		if err != nil {
			return out, fmt.Errorf("%s: %w\n%s", r.name, err, pc.Logs())
		}
		if err := countLostAndDoubled(ctx, w.fx.Pool, w.lastRecs, po); err != nil {
			return out, err
		}
		po.KillToSuccessMS = fr.FirstSuccessMS
		fr.Patroni = po
		if !r.sync && po.Lost > 0 {
			// What asynchronous replication loses is the row's result, not a
			// defect of coupond: the history check's complaints about those
			// acknowledged redemptions are reported as the row's loss.
			var kept []string
			for _, v := range fr.HistoryViolation {
				if !strings.Contains(v, "acknowledged") {
					kept = append(kept, v)
				}
			}
			fr.HistoryViolation = kept
		}
		notes := []string{fmt.Sprintf("PostgreSQL %s; %s → %s; other node writable %.0f ms after the injection",
			pc.Version, po.From, po.To, po.FailoverMS)}
		if fr.Notes != "" {
			notes = append(notes, fr.Notes)
		}
		fr.Notes = strings.Join(notes, "; ")
		cfg.logf("  lost %d doubled %d failover %.0f ms", po.Lost, po.Doubled, po.FailoverMS)
		out = append(out, fr)
	}
	return out, nil
}

// injectPatroni kills the primary's postmaster or switches over, waits until
// the other node is the primary and accepts writes, and returns the moment
// of the injection: the row's first success counts from the kill.
func injectPatroni(pc *harness.Patroni, r patroniRow, po *PatroniOutcome) func(ctx context.Context, w *world) (time.Time, string, error) {
	return func(ctx context.Context, w *world) (time.Time, string, error) {
		from, err := pc.Primary()
		if err != nil {
			return time.Time{}, "", err
		}
		to := pc.Other(from)
		po.From = from.Name
		at := time.Now()
		note := ""
		if r.kill {
			pid, err := pc.KillPostmaster(from)
			if err != nil {
				return at, "", err
			}
			note = fmt.Sprintf("postmaster pid %d killed", pid)
		} else {
			if _, err := pc.Switchover(ctx, from, to); err != nil {
				return at, "", err
			}
		}
		n, err := pc.WaitPrimaryOther(ctx, from, 60*time.Second)
		if err != nil {
			return at, note, err
		}
		po.To = n.Name
		po.FailoverMS = float64(time.Since(at).Microseconds()) / 1000
		return at, note, nil
	}
}

// countLostAndDoubled compares the load's acknowledged redemptions with the
// new primary's ledger.
func countLostAndDoubled(ctx context.Context, pool *pgxpool.Pool, recs []*load.Record, po *PatroniOutcome) error {
	succeeded := map[string]string{} // request id -> redemption number on the primary
	rows, err := pool.Query(ctx, `SELECT f.request_id, f.redeem_no FROM redemption_flows f
JOIN coupons c ON c.merchant_id = f.merchant_id AND c.id = f.coupon_id
WHERE f.operation = 'REDEEM' AND f.status = 'SUCCEEDED'
  AND (c.uses_total > 1 OR (c.redeem_no = f.redeem_no AND c.status IN ('REDEEMED', 'REFUNDED')))`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var rid, no string
		if err := rows.Scan(&rid, &no); err != nil {
			rows.Close()
			return err
		}
		succeeded[rid] = no
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	answered := map[string]string{}
	lost := map[string]bool{}
	for _, r := range recs {
		if r == nil || r.Outcome != load.OK || r.RequestID == "" {
			continue
		}
		if strings.HasPrefix(r.Kind, "multi") {
			// A several-code order: each code's flow is <id>#<n>.
			got := strings.Join(r.GotRedeemNos, ",")
			if prev, ok := answered[r.RequestID]; ok && prev != got {
				po.Doubled++
			}
			answered[r.RequestID] = got
			for i, no := range r.GotRedeemNos {
				if have, ok := succeeded[r.RequestID+"#"+strconv.Itoa(i+1)]; !ok || have != no {
					lost[r.RequestID] = true
				}
			}
			continue
		}
		if prev, ok := answered[r.RequestID]; ok && prev != r.GotRedeemNo {
			po.Doubled++
		}
		answered[r.RequestID] = r.GotRedeemNo
		if no, ok := succeeded[r.RequestID]; !ok || no != r.GotRedeemNo {
			lost[r.RequestID] = true
		}
	}
	po.Lost = len(lost)
	var done []time.Duration
	for _, r := range recs {
		if r != nil && r.Outcome == load.OK && !strings.HasSuffix(r.Kind, "retry") {
			done = append(done, r.Done)
		}
	}
	slices.Sort(done)
	for i := 1; i < len(done); i++ {
		if g := float64((done[i] - done[i-1]).Microseconds()) / 1000; g > po.GapMS {
			po.GapMS = g
		}
	}
	var doubled int
	// A card takes up to its uses; any other coupon one.
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT f.coupon_id FROM redemption_flows f
JOIN coupons c ON c.merchant_id = f.merchant_id AND c.id = f.coupon_id
WHERE f.operation = 'REDEEM' AND f.status = 'SUCCEEDED' GROUP BY f.merchant_id, f.coupon_id, c.uses_total
HAVING count(*) > c.uses_total) d`).Scan(&doubled); err != nil {
		return err
	}
	po.Doubled += doubled
	return nil
}
