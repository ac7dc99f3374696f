package services_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"coupond/internal/testdb"
	"coupond/internal/testreplica"
	"coupond/models"
	"coupond/services"
)

// TestReadReplicaDecidesNothing runs the services on a PostgreSQL primary
// with a real streaming replica whose replay is paused: every decision made
// after the pause (redemption, retry, quote, refund, reservation, a new
// token) is the primary's, while the lists read through the replica show the
// data as it was when replay stopped, as docs/operations.md says they may.
func TestReadReplicaDecidesNothing(t *testing.T) {
	ctx := context.Background()
	u, _ := testdb.PostgresURL(t)
	primary, err := models.Open(ctx, u, models.OpenOptions{MaxOpenConns: 8})
	must(t, err)
	t.Cleanup(func() { _ = models.Close(primary) })
	_, err = models.Migrate(ctx, primary)
	must(t, err)

	rep := testreplica.Start(t, u)
	replicas, warnings, err := models.OpenReadReplicas(ctx, primary, []string{rep.URL}, models.OpenOptions{MaxOpenConns: 4}, 10*time.Second)
	must(t, err)
	t.Cleanup(func() {
		for _, r := range replicas {
			_ = models.Close(r.DB)
		}
	})
	if len(warnings) != 0 {
		t.Fatalf("a streaming replica drew warnings: %v", warnings)
	}

	w := newWorldWith(t, primary, true, func(o *services.Options) { o.ReadReplicas = replicas })
	codes := w.issue(w.campaign, 4)
	before, err := w.redeem(codes[0], "before-pause", 5000)
	must(t, err)
	rep.WaitCaughtUp(t, primary, 10*time.Second)

	// Only reads marked for the replica go there; unmarked ones, whatever
	// dbresolver would do with a SELECT by default, stay on the primary.
	var inRecovery bool
	must(t, primary.Raw("SELECT pg_is_in_recovery()").Scan(&inRecovery).Error)
	if inRecovery {
		t.Fatal("an unmarked raw SELECT ran on the replica")
	}
	must(t, models.Reading(primary).Raw("SELECT pg_is_in_recovery()").Scan(&inRecovery).Error)
	if !inRecovery {
		t.Fatal("a read marked by models.Reading ran on the primary")
	}

	rep.Exec(t, "SELECT pg_wal_replay_pause()")
	waitPaused(t, w.svc)

	// Decisions after the pause: the replica still sees codes[1] UNUSED.
	first, err := w.redeem(codes[1], "after-pause", 5000)
	must(t, err)
	if first.Status != models.FlowSucceeded {
		t.Fatalf("redeem after pause: %s", first.Status)
	}
	again, err := w.redeem(codes[1], "after-pause-2", 5000)
	must(t, err)
	if again.Status != models.FlowRejected || again.RejectReason == nil || *again.RejectReason != services.RejectNotAvailable {
		t.Fatalf("second redemption of a redeemed coupon: %s %v, want REJECTED %s", again.Status, again.RejectReason, services.RejectNotAvailable)
	}
	retry, err := w.redeem(codes[1], "after-pause", 5000)
	must(t, err)
	if retry.RedeemNo != first.RedeemNo || retry.Status != models.FlowSucceeded {
		t.Fatalf("same-id retry: %s %s, want the first %s SUCCEEDED", retry.RedeemNo, retry.Status, first.RedeemNo)
	}
	q, err := w.svc.Redemptions.Quote(ctx, w.clerkA, services.QuoteInput{Code: codes[1], StoreID: w.storeA.ID, OrderAmount: 5000})
	must(t, err)
	if q.Eligible() || q.Coupon.Status != models.CouponRedeemed {
		t.Fatalf("quote of the coupon redeemed after the pause: eligible %v, status %s", q.Eligible(), q.Coupon.Status)
	}
	q, err = w.svc.Redemptions.Quote(ctx, w.clerkA, services.QuoteInput{Code: codes[2], StoreID: w.storeA.ID, OrderAmount: 5000})
	must(t, err)
	if !q.Eligible() || q.DiscountAmount != 1000 {
		t.Fatalf("quote of an unused coupon: %q %d", q.RejectReason, q.DiscountAmount)
	}
	refund, err := w.svc.Redemptions.Refund(ctx, w.clerkA, services.RefundInput{RedeemNo: first.RedeemNo, RequestID: "refund-after-pause", Reason: "test"})
	must(t, err)
	if refund.Status != models.FlowSucceeded {
		t.Fatalf("refund of a redemption the replica has not seen: %s", refund.Status)
	}
	held, err := w.svc.Redemptions.Reserve(ctx, w.clerkA, services.RedeemInput{Code: codes[2], StoreID: w.storeA.ID, RequestID: "reserve-after-pause", OrderAmount: 5000})
	must(t, err)
	confirmed, err := w.svc.Redemptions.Confirm(ctx, w.clerkA, services.ConfirmInput{RedeemNo: held.RedeemNo, OrderRef: "POS-1"})
	must(t, err)
	if confirmed.Status != models.FlowSucceeded {
		t.Fatalf("confirm after pause: %s", confirmed.Status)
	}
	// A token minted after the pause exists only on the primary.
	clerk := w.actor(models.RoleClerk, "SH01")
	if clerk.MerchantID != w.merchant.ID {
		t.Fatalf("token minted after the pause authenticated as merchant %d", clerk.MerchantID)
	}
	var status []models.CouponStatus
	must(t, primary.Model(&models.Coupon{}).Where("code = ?", w.coupon(codes[1]).Code).Pluck("status", &status).Error)
	if len(status) != 1 || status[0] != models.CouponRefunded {
		t.Fatalf("unmarked query read %s, want the primary's REFUNDED", status)
	}

	// Reads through the replica are stale by the pause, as documented.
	ledger, err := w.svc.Coupons.Redemptions(ctx, w.admin, services.RedemptionFilter{}, services.PageArgs{First: 100})
	must(t, err)
	nos := redeemNos(ledger.Items)
	if !slices.Contains(nos, before.RedeemNo) || slices.Contains(nos, first.RedeemNo) || slices.Contains(nos, held.RedeemNo) {
		t.Fatalf("ledger through the paused replica: %v, want %s and none of the later %s, %s", nos, before.RedeemNo, first.RedeemNo, held.RedeemNo)
	}
	// The ledger export reads its batches in transactions (no parallel
	// plans): they run on the replica too, not on the primary.
	stream, err := w.svc.Coupons.RedemptionExport(ctx, w.admin, services.RedemptionExportFilter{})
	must(t, err)
	var exported []string
	must(t, stream(func(r models.FlowExportRow) error {
		exported = append(exported, r.RedeemNo)
		return nil
	}))
	if !slices.Contains(exported, before.RedeemNo) || slices.Contains(exported, first.RedeemNo) || slices.Contains(exported, held.RedeemNo) {
		t.Fatalf("ledger export through the paused replica: %v, want %s and none of the later %s, %s", exported, before.RedeemNo, first.RedeemNo, held.RedeemNo)
	}
	list, err := w.svc.Coupons.List(ctx, w.admin, services.CouponFilter{}, services.PageArgs{First: 100})
	must(t, err)
	for _, c := range list.Items {
		if c.Code == w.coupon(codes[1]).Code && c.Status != models.CouponUnused {
			t.Fatalf("coupon list through the paused replica shows %s, want the stale UNUSED", c.Status)
		}
	}
	st := w.svc.Replicas.States(ctx)
	if len(st) != 1 || !st[0].Up || !st[0].ReplayPaused || st[0].LagBytes <= 0 || st[0].LagSeconds <= 0 {
		t.Fatalf("replica state while paused: %+v", st)
	}
	// Reconciliation reads one consistent, older snapshot: nothing to report.
	res, err := w.svc.Reconciliation.Reconcile(ctx)
	must(t, err)
	if res.Violations != 0 {
		t.Fatalf("reconciliation on the paused replica found %d violations", res.Violations)
	}

	rep.Exec(t, "SELECT pg_wal_replay_resume()")
	rep.WaitCaughtUp(t, primary, 10*time.Second)
	ledger, err = w.svc.Coupons.Redemptions(ctx, w.admin, services.RedemptionFilter{}, services.PageArgs{First: 100})
	must(t, err)
	if nos := redeemNos(ledger.Items); !slices.Contains(nos, first.RedeemNo) || !slices.Contains(nos, held.RedeemNo) {
		t.Fatalf("ledger after the replica caught up: %v", nos)
	}
	// Other databases of the cluster keep writing, so the replica may be a
	// moment behind again; it is streaming and not seconds behind.
	if st := w.svc.Replicas.States(ctx); st[0].ReplayPaused || !st[0].InRecovery || st[0].LagSeconds > 5 {
		t.Fatalf("replica state after catching up: %+v", st)
	}
}

// TestReadReplicaHealth: a replica that stops answering, or lags by more
// than the allowed lag, serves no reads until it is healthy again; with no
// replica serving, the reads marked for replicas go to the primary and the
// console's lists keep working.
func TestReadReplicaHealth(t *testing.T) {
	ctx := context.Background()
	u, _ := testdb.PostgresURL(t)
	primary, err := models.Open(ctx, u, models.OpenOptions{MaxOpenConns: 8})
	must(t, err)
	t.Cleanup(func() { _ = models.Close(primary) })
	_, err = models.Migrate(ctx, primary)
	must(t, err)
	rep := testreplica.Start(t, u)
	replicas, _, err := models.OpenReadReplicas(ctx, primary, []string{rep.URL}, models.OpenOptions{MaxOpenConns: 4}, 10*time.Second)
	must(t, err)
	t.Cleanup(func() {
		for _, r := range replicas {
			_ = models.Close(r.DB)
		}
	})
	w := newWorldWith(t, primary, true, func(o *services.Options) { o.ReadReplicas = replicas })
	codes := w.issue(w.campaign, 2)
	rep.WaitCaughtUp(t, primary, 10*time.Second)

	readsReplica := func() bool {
		t.Helper()
		var inRecovery bool
		must(t, models.Reading(primary).Raw("SELECT pg_is_in_recovery()").Scan(&inRecovery).Error)
		return inRecovery
	}
	var changes []string
	check := func(maxLag time.Duration) services.ReplicaState {
		t.Helper()
		st := w.svc.Replicas.CheckHealth(ctx, maxLag, func(s services.ReplicaState, why string) {
			changes = append(changes, fmt.Sprintf("%v: %s", s.Serving, why))
		})
		if len(st) != 1 {
			t.Fatalf("%d replica states", len(st))
		}
		return st[0]
	}
	if st := check(time.Minute); !st.Serving || !readsReplica() || len(changes) != 0 {
		t.Fatalf("healthy replica: %+v, reads it %v, changes %v", st, readsReplica(), changes)
	}

	// Down: reads go to the primary, and lists still answer.
	rep.Halt(t)
	if st := check(time.Minute); st.Up || st.Serving {
		t.Fatalf("halted replica: %+v", st)
	}
	if readsReplica() {
		t.Fatal("a read marked for replicas went to the halted replica")
	}
	redeemed, err := w.redeem(codes[0], "while-down", 5000)
	must(t, err)
	ledger, err := w.svc.Coupons.Redemptions(ctx, w.admin, services.RedemptionFilter{}, services.PageArgs{First: 100})
	must(t, err)
	if !slices.Contains(redeemNos(ledger.Items), redeemed.RedeemNo) {
		t.Fatalf("ledger with the replica down: %v, want the primary's %s", redeemNos(ledger.Items), redeemed.RedeemNo)
	}
	if len(changes) != 1 || !strings.HasPrefix(changes[0], "false: it does not answer") {
		t.Fatalf("changes after the halt: %v", changes)
	}

	// Back and caught up: it serves again.
	rep.Resume(t)
	rep.WaitCaughtUp(t, primary, 30*time.Second)
	if st := check(time.Minute); !st.Serving || !readsReplica() {
		t.Fatalf("resumed replica: %+v", st)
	}

	// Lagging past the limit: paused replay with writes behind it.
	rep.Exec(t, "SELECT pg_wal_replay_pause()")
	waitPaused(t, w.svc)
	_, err = w.redeem(codes[1], "while-paused", 5000)
	must(t, err)
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := check(50 * time.Millisecond)
		if !st.Serving {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a replica lagging past 50 ms kept serving: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if readsReplica() {
		t.Fatal("a read marked for replicas went to the lagging replica")
	}
	if last := changes[len(changes)-1]; !strings.HasPrefix(last, "false: it lags by") {
		t.Fatalf("changes after the lag: %v", changes)
	}
	rep.Exec(t, "SELECT pg_wal_replay_resume()")
	rep.WaitCaughtUp(t, primary, 10*time.Second)
	if st := check(time.Minute); !st.Serving || !readsReplica() {
		t.Fatalf("caught-up replica: %+v", st)
	}
}

func waitPaused(t *testing.T, svc *services.Services) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := svc.Replicas.States(context.Background())
		if len(st) == 1 && st[0].ReplayPaused {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replay did not pause: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func redeemNos(flows []models.RedemptionFlow) []string {
	out := make([]string, len(flows))
	for i, f := range flows {
		out[i] = f.RedeemNo
	}
	return out
}

// TestReadReplicaStartChecks: a replica URL that is not reachable or is at
// another schema version is an error; a server that is not in recovery is
// a warning.
func TestReadReplicaStartChecks(t *testing.T) {
	ctx := context.Background()
	u, _ := testdb.PostgresURL(t)
	primary, err := models.Open(ctx, u, models.OpenOptions{MaxOpenConns: 2})
	must(t, err)
	t.Cleanup(func() { _ = models.Close(primary) })
	_, err = models.Migrate(ctx, primary)
	must(t, err)
	empty, _ := testdb.PostgresURL(t) // a fresh schema, never migrated

	open := func(url string) ([]string, error) {
		reps, warnings, err := models.OpenReadReplicas(ctx, primary, []string{url}, models.OpenOptions{MaxOpenConns: 1}, 0)
		for _, r := range reps {
			_ = models.Close(r.DB)
		}
		return warnings, err
	}
	if _, err := open("postgres://postgres@127.0.0.1:1/test?connect_timeout=2"); err == nil {
		t.Fatal("an unreachable replica was accepted")
	}
	_, err = open(empty)
	if err == nil || !strings.Contains(err.Error(), "schema version 0") {
		t.Fatalf("a replica at another schema version: %v", err)
	}
	warnings, err := open(u)
	must(t, err)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "not in recovery") {
		t.Fatalf("the primary itself as a replica: warnings %v", warnings)
	}
}
