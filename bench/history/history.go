// Package history checks a client's recorded history of operations against
// the database: every acknowledged success is durable and every definite
// failure had no effect. It complements `coupond audit`, which checks the
// database against itself.
package history

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"coupond/bench/load"
)

// Report is the result of a history check.
type Report struct {
	Checked    int      `json:"checked"`
	Violations []string `json:"violations"`
}

type flow struct {
	redeemNo, status string
	couponID         int64
	code             string
	couponStatus     string
	couponRedeemNo   string
}

// Check compares the records of redemptions and refunds with the database.
//
//   - a redemption answered SUCCEEDED has a SUCCEEDED flow with that request id,
//     the same redemption number, and its coupon is REDEEMED or REFUNDED by it;
//   - a redemption answered REJECTED or RELEASED has a flow in that state that
//     does not hold its coupon;
//   - a redemption refused with an error code (no flow written) has no flow;
//   - a refund answered SUCCEEDED has a refund row and a REFUNDED coupon;
//   - a several-code order (kind "multi") answered SUCCEEDED has, for each
//     code in order, a SUCCEEDED flow with request id <id>#<n>, the answer's
//     redemption number and its coupon held by it; one answered REJECTED or
//     RELEASED holds none of its coupons;
//   - a use of a multi-use card (kind "card") answered SUCCEEDED has a
//     SUCCEEDED flow of that card with that request id and redemption number
//     (between uses a card is UNUSED and held by none, so its state is judged
//     per card): no card has more SUCCEEDED flows, nor more acknowledged
//     uses, than it has uses;
//   - a coupon is REDEEMED or REFUNDED, or a card has a use taken, only if
//     some operation on it succeeded or ended unknown (nothing is taken by
//     definite failures alone).
//
// Requests answered with transport:refused never reached the server and must
// have no flow unless another operation with the same request id reached it.
func Check(ctx context.Context, pool *pgxpool.Pool, recs []*load.Record) (Report, error) {
	var rep Report
	flows := map[string]flow{}
	rows, err := pool.Query(ctx, `SELECT f.request_id, f.redeem_no, f.status, f.coupon_id, c.code, c.status, COALESCE(c.redeem_no, '')
FROM redemption_flows f JOIN coupons c ON c.id = f.coupon_id WHERE f.operation = 'REDEEM'`)
	if err != nil {
		return rep, err
	}
	for rows.Next() {
		var rid string
		var f flow
		if err := rows.Scan(&rid, &f.redeemNo, &f.status, &f.couponID, &f.code, &f.couponStatus, &f.couponRedeemNo); err != nil {
			rows.Close()
			return rep, err
		}
		flows[rid] = f
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return rep, err
	}
	refunds := map[string]string{} // request id -> coupon status
	rows, err = pool.Query(ctx, `SELECT r.request_id, c.status FROM refund_flows r JOIN coupons c ON c.id = r.coupon_id`)
	if err != nil {
		return rep, err
	}
	for rows.Next() {
		var rid, st string
		if err := rows.Scan(&rid, &st); err != nil {
			rows.Close()
			return rep, err
		}
		refunds[rid] = st
	}
	rows.Close()

	// Group by request id: an id may have been sent several times (retries).
	byID := map[string][]*load.Record{}
	touched := map[string]bool{} // codes with an ok or unknown redemption
	for _, r := range recs {
		if r == nil || !r.Finished() || r.RequestID == "" {
			continue
		}
		k := r.Kind[:min(len(r.Kind), 6)]
		switch {
		case strings.HasPrefix(r.Kind, "multi"):
			k = "multi" // an order and its same-id resends
		case strings.HasPrefix(r.Kind, "card"):
			k = "card" // a card's use and its same-id resends
		}
		byID[k+"/"+r.RequestID] = append(byID[k+"/"+r.RequestID], r)
		if r.Kind != "refund" && r.Outcome != load.Fail {
			for _, c := range codesOf(r) {
				touched[strings.ToUpper(c)] = true
			}
		}
	}
	// Retries share the redeem request id; merge "retry" into "redeem".
	merged := map[string][]*load.Record{}
	for k, v := range byID {
		if strings.HasPrefix(k, "retry/") {
			k = "redeem/" + k[len("retry/"):]
		}
		merged[k] = append(merged[k], v...)
	}
	bad := func(format string, a ...any) {
		if len(rep.Violations) < 50 {
			rep.Violations = append(rep.Violations, fmt.Sprintf(format, a...))
		} else if len(rep.Violations) == 50 {
			rep.Violations = append(rep.Violations, "...")
		}
	}
	acked := map[string]int{}     // card code -> acknowledged uses
	ackedUse := map[string]bool{} // request ids of the uses counted in acked
	for k, rs := range merged {
		rep.Checked++
		kind, rid, _ := strings.Cut(k, "/")
		if kind == "refund" {
			for _, r := range rs {
				if r.Outcome == load.OK {
					st, ok := refunds[rid]
					if !ok {
						bad("refund %s acknowledged but no refund row", rid)
					} else if st != "REFUNDED" {
						bad("refund %s acknowledged but coupon is %s", rid, st)
					}
					break
				}
			}
			continue
		}
		if kind == "multi" {
			checkOrder(rid, rs, flows, bad)
			continue
		}
		f, has := flows[rid]
		for _, r := range rs {
			switch {
			case r.Outcome == load.OK:
				if !has || f.status != "SUCCEEDED" {
					bad("redemption %s acknowledged SUCCEEDED but flow is %q", rid, f.status)
				} else if r.GotRedeemNo != f.redeemNo {
					bad("redemption %s acknowledged as %s but the ledger has %s", rid, r.GotRedeemNo, f.redeemNo)
				} else if !strings.EqualFold(f.code, r.Code) {
					bad("redemption %s acknowledged for %s but its flow is of %s", rid, r.Code, f.code)
				} else if kind == "card" {
					if !ackedUse[rid] { // once per use, however often it was resent
						ackedUse[rid] = true
						acked[strings.ToUpper(f.code)]++
					}
				} else if f.couponRedeemNo != f.redeemNo || (f.couponStatus != "REDEEMED" && f.couponStatus != "REFUNDED") {
					bad("redemption %s acknowledged but coupon %s is %s held by %q", rid, f.code, f.couponStatus, f.couponRedeemNo)
				}
			case r.Outcome == load.Fail && (strings.HasPrefix(r.Result, "REJECTED") || r.Result == "RELEASED"):
				want := "REJECTED"
				if r.Result == "RELEASED" {
					want = "RELEASED"
				}
				if !has || f.status != want {
					bad("redemption %s answered %s but flow is %q", rid, r.Result, f.status)
				} else if f.couponRedeemNo == f.redeemNo && f.couponStatus != "UNUSED" {
					bad("redemption %s answered %s but holds coupon %s (%s)", rid, r.Result, f.code, f.couponStatus)
				}
			case r.Outcome == load.Fail && !anyReached(rs):
				if has {
					bad("redemption %s failed with %s before any flow, but flow %s is %s", rid, r.Result, f.redeemNo, f.status)
				}
			}
		}
	}
	if err := checkCards(ctx, pool, acked, bad); err != nil {
		return rep, err
	}
	// Coupons taken although every operation on them definitely failed.
	rows, err = pool.Query(ctx, `SELECT code FROM coupons WHERE status IN ('REDEEMED', 'REFUNDED', 'REDEEMING') OR uses_left < uses_total`)
	if err != nil {
		return rep, err
	}
	attempted := map[string]bool{}
	for _, r := range recs {
		if r != nil {
			for _, c := range codesOf(r) {
				attempted[strings.ToUpper(c)] = true
			}
		}
	}
	var taken []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			rows.Close()
			return rep, err
		}
		if attempted[c] && !touched[c] {
			taken = append(taken, c)
		}
	}
	rows.Close()
	sort.Strings(taken)
	for _, c := range taken {
		bad("coupon %s is taken although every redemption of it definitely failed", c)
	}
	return rep, nil
}

// checkCards compares each multi-use card's uses with its count of them:
// neither its SUCCEEDED flows nor the uses acknowledged on it (acked, by
// code) exceed its uses.
func checkCards(ctx context.Context, pool *pgxpool.Pool, acked map[string]int, bad func(string, ...any)) error {
	rows, err := pool.Query(ctx, `SELECT c.code, c.uses_total,
  COUNT(f.id) FILTER (WHERE f.status = 'SUCCEEDED' AND f.operation = 'REDEEM')
FROM coupons c LEFT JOIN redemption_flows f ON f.merchant_id = c.merchant_id AND f.coupon_id = c.id
WHERE c.uses_total > 1 GROUP BY c.id, c.code, c.uses_total`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var code string
		var total, succeeded int
		if err := rows.Scan(&code, &total, &succeeded); err != nil {
			return err
		}
		if succeeded > total {
			bad("card %s has %d succeeded uses but only %d uses", code, succeeded, total)
		}
		if n := acked[strings.ToUpper(code)]; n > total {
			bad("card %s has %d acknowledged uses but only %d uses", code, n, total)
		}
		delete(acked, strings.ToUpper(code))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for code, n := range acked {
		bad("%d uses of %s acknowledged, but it is not a card of the database", n, code)
	}
	return nil
}

// anyReached reports whether any send of the request got past the transport
// or the error-code checks (so a flow may legitimately exist).
func anyReached(rs []*load.Record) bool {
	for _, r := range rs {
		if r.Outcome != load.Fail || strings.HasPrefix(r.Result, "REJECTED") || r.Result == "RELEASED" {
			return true
		}
	}
	return false
}

// codesOf is every code an operation names.
func codesOf(r *load.Record) []string {
	if len(r.Codes) > 0 {
		return r.Codes
	}
	if r.Code != "" {
		return []string{r.Code}
	}
	return nil
}

// checkOrder checks the sends of one several-code order: its flows have
// request ids rid#1, rid#2, ... in the order of its codes.
func checkOrder(rid string, rs []*load.Record, flows map[string]flow, bad func(string, ...any)) {
	for _, r := range rs {
		switch {
		case r.Outcome == load.OK:
			if len(r.GotRedeemNos) != len(r.Codes) {
				bad("order %s acknowledged SUCCEEDED with %d redemptions for %d codes", rid, len(r.GotRedeemNos), len(r.Codes))
				continue
			}
			for i, code := range r.Codes {
				f, has := flows[rid+"#"+strconv.Itoa(i+1)]
				switch {
				case !has || f.status != "SUCCEEDED":
					bad("order %s acknowledged SUCCEEDED but the flow of its code %d is %q", rid, i+1, f.status)
				case f.redeemNo != r.GotRedeemNos[i]:
					bad("order %s acknowledged %s for code %d but the ledger has %s", rid, r.GotRedeemNos[i], i+1, f.redeemNo)
				case !strings.EqualFold(f.code, code):
					bad("order %s's flow %d is of coupon %s, not %s", rid, i+1, f.code, code)
				case f.couponRedeemNo != f.redeemNo || (f.couponStatus != "REDEEMED" && f.couponStatus != "REFUNDED"):
					bad("order %s acknowledged but coupon %s is %s held by %q", rid, f.code, f.couponStatus, f.couponRedeemNo)
				}
			}
		case r.Outcome == load.Fail && (strings.HasPrefix(r.Result, "REJECTED") || r.Result == "RELEASED" || !anyReached(rs)):
			for i := range r.Codes {
				if f, has := flows[rid+"#"+strconv.Itoa(i+1)]; has && f.couponRedeemNo == f.redeemNo && f.couponStatus != "UNUSED" {
					bad("order %s answered %s but its flow %s holds coupon %s (%s)", rid, r.Result, f.redeemNo, f.code, f.couponStatus)
				}
			}
		}
	}
}
