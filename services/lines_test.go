package services_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// holdCoupon blocks every write to the coupon until the returned function is
// called: on PostgreSQL by locking its row, on SQLite by holding the write
// lock. It lets a test line requests up behind one that is stuck in the
// database.
func holdCoupon(t *testing.T, db *gorm.DB, couponID int64) (release func()) {
	t.Helper()
	tx := db.Begin()
	must(t, tx.Error)
	if models.DialectOfDB(db) == models.Postgres {
		must(t, tx.Exec("SELECT 1 FROM coupons WHERE id = ? FOR UPDATE", couponID).Error)
	} else {
		must(t, tx.Exec("UPDATE coupons SET updated_at = updated_at WHERE id = ?", couponID).Error)
	}
	return func() { must(t, tx.Commit().Error) }
}

// waitLine waits up to ten seconds until a line is open for code with
// exactly waiting requests waiting in it.
func waitLine(t *testing.T, w *world, code string, waiting int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		open, n := services.LineOf(w.svc.Redemptions, w.merchant.ID, code)
		if open && n == waiting {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("line of %s: open %t with %d waiting, want open with %d", code, open, n, waiting)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

type scan struct {
	name    string
	actor   services.Actor
	in      services.RedeemInput
	ctx     context.Context
	flow    *models.RedemptionFlow
	err     error
	wantErr string // error code, "" for none
}

// A coupon taken for good answers the requests lined up behind the one that
// took it with one batch: each gets the answer the conditional update would
// have given, copies of a request share one flow, and nothing runs twice.
func TestLinedUpScansOfATakenCoupon(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorldWith(t, db, true)
		codes := w.issue(w.campaign, 2)
		code, other := codes[0], codes[1]
		ctx := context.Background()
		if _, err := w.redeem(other, "used-before", 5000); err != nil {
			t.Fatal(err)
		}
		in := func(rid string, amount int64) services.RedeemInput {
			return services.RedeemInput{Code: code, StoreID: w.storeA.ID, RequestID: rid, OrderAmount: amount}
		}
		admin := w.actor(models.RoleAdmin)
		cancelled, cancel := context.WithCancel(ctx)
		var scans []*scan
		for i := range 20 {
			scans = append(scans, &scan{name: "stranger", actor: w.clerkA, in: in(fmt.Sprintf("s-%d", i), 5000)})
		}
		scans = append(scans,
			&scan{name: "copy of the first", actor: w.clerkA, in: in("first", 5000)},
			&scan{name: "copy of the first", actor: w.clerkA, in: in("first", 5000)},
			&scan{name: "first's id, other amount", actor: w.clerkA, in: in("first", 6000), wantErr: "IDEMPOTENCY_KEY_REUSED"},
			&scan{name: "twin", actor: w.clerkA, in: in("twin", 5000)},
			&scan{name: "twin", actor: w.clerkA, in: in("twin", 5000)},
			&scan{name: "id used for another coupon", actor: w.clerkA, in: in("used-before", 5000), wantErr: "IDEMPOTENCY_KEY_REUSED"},
			&scan{name: "admin at an unknown store", actor: admin,
				in: services.RedeemInput{Code: code, StoreID: 999999, RequestID: "ghost-store", OrderAmount: 5000}, wantErr: "NOT_FOUND"},
			&scan{name: "admin at a real store", actor: admin,
				in: services.RedeemInput{Code: code, StoreID: w.storeB.ID, RequestID: "admin-b", OrderAmount: 5000}},
		)
		leaver := &scan{name: "client gone", actor: w.clerkA, in: in("gone", 5000), ctx: cancelled}

		c := w.coupon(code)
		release := holdCoupon(t, db, c.ID)
		var first *models.RedemptionFlow
		var firstErr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			first, firstErr = w.svc.Redemptions.Redeem(ctx, w.clerkA, in("first", 5000))
		}()
		waitLine(t, w, code, 0)
		for _, s := range append(scans, leaver) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sctx := s.ctx
				if sctx == nil {
					sctx = ctx
				}
				s.flow, s.err = w.svc.Redemptions.Redeem(sctx, s.actor, s.in)
			}()
		}
		waitLine(t, w, code, len(scans)+1)
		cancel()
		waitLine(t, w, code, len(scans))
		release()
		wg.Wait()

		must(t, firstErr)
		if first.Status != models.FlowSucceeded {
			t.Fatalf("first scan: %s, want SUCCEEDED", first.Status)
		}
		if !errors.Is(leaver.err, context.Canceled) {
			t.Errorf("client gone: err %v, want context.Canceled", leaver.err)
		}
		twins := map[string]bool{}
		for _, s := range scans {
			if s.wantErr != "" {
				wantCode(t, s.err, s.wantErr)
				continue
			}
			must(t, s.err)
			switch s.name {
			case "copy of the first":
				if s.flow.RedeemNo != first.RedeemNo || s.flow.Status != models.FlowSucceeded {
					t.Errorf("copy of the first: %s %s, want the first's %s SUCCEEDED", s.flow.RedeemNo, s.flow.Status, first.RedeemNo)
				}
			default:
				if s.flow.Status != models.FlowRejected || *s.flow.RejectReason != services.RejectNotAvailable || s.flow.CouponID != c.ID {
					t.Errorf("%s: %s %v coupon %d, want REJECTED COUPON_NOT_AVAILABLE of coupon %d", s.name, s.flow.Status, s.flow.RejectReason, s.flow.CouponID, c.ID)
				}
				if s.name == "twin" {
					twins[s.flow.RedeemNo] = true
				}
			}
		}
		if len(twins) != 1 {
			t.Errorf("the twins got %d redemption numbers, want one", len(twins))
		}
		// 20 strangers, one twin and the admin at a real store were rejected
		// in writing; everything else wrote nothing.
		if got := w.count(&models.RedemptionFlow{}, "coupon_id = ? AND status = 'REJECTED'", c.ID); got != 22 {
			t.Errorf("%d rejected flows, want 22", got)
		}
		if got := w.count(&models.RedemptionFlow{}, "coupon_id = ? AND status = 'SUCCEEDED'", c.ID); got != 1 {
			t.Errorf("%d succeeded flows, want 1", got)
		}
		for _, rid := range []string{"gone", "ghost-store"} {
			if got := w.count(&models.RedemptionFlow{}, "request_id = ?", rid); got != 0 {
				t.Errorf("%d flows of request %s, want none", got, rid)
			}
		}
		if got := w.count(&models.RedemptionFlow{}, "request_id = ?", "used-before"); got != 1 {
			t.Errorf("%d flows of request used-before, want its first only", got)
		}
		if c := w.coupon(code); c.Status != models.CouponRedeemed || c.Version != 2 {
			t.Errorf("coupon %s v%d, want REDEEMED v2", c.Status, c.Version)
		}
		if got := w.svc.Redemptions.Coalesced(); got != int64(len(scans)) {
			t.Errorf("coalesced %d requests, want %d", got, len(scans))
		}
		if open, _ := services.LineOf(w.svc.Redemptions, w.merchant.ID, code); open {
			t.Error("the line is still open")
		}
		// A rejection from the batch is the final answer of its request id.
		again, err := w.redeem(code, "s-3", 5000)
		must(t, err)
		if again.Status != models.FlowRejected || again.RedeemNo != scans[3].flow.RedeemNo {
			t.Errorf("repeat of s-3: %s %s, want the batch's %s", again.Status, again.RedeemNo, scans[3].flow.RedeemNo)
		}
	})
}

// When the first request leaves the coupon able to become available (it was
// too small an order for it, or holds it for a two-phase redemption), the
// requests behind it are not rejected for it: each asks the database itself.
func TestLinedUpScansOfAnAvailableCoupon(t *testing.T) {
	tests := []struct {
		name        string
		firstAmount int64
		reserve     bool
		first       models.FlowStatus
		succeeded   int
	}{
		{"first order below the minimum spend", 1000, false, models.FlowRejected, 1},
		{"first holds it for a two-phase redemption", 5000, true, models.FlowProcessing, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testdb.Each(t, func(t *testing.T, db *gorm.DB) {
				w := newWorldWith(t, db, true)
				code := w.issue(w.campaign, 1)[0]
				ctx := context.Background()
				c := w.coupon(code)
				release := holdCoupon(t, db, c.ID)
				var first *models.RedemptionFlow
				var firstErr error
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					in := services.RedeemInput{Code: code, StoreID: w.storeA.ID, RequestID: "first", OrderAmount: tt.firstAmount}
					if tt.reserve {
						first, firstErr = w.svc.Redemptions.Reserve(ctx, w.clerkA, in)
					} else {
						first, firstErr = w.svc.Redemptions.Redeem(ctx, w.clerkA, in)
					}
				}()
				waitLine(t, w, code, 0)
				n := 10
				flows := make([]*models.RedemptionFlow, n)
				errs := make([]error, n)
				for i := range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						flows[i], errs[i] = w.redeem(code, fmt.Sprintf("next-%d", i), 5000)
					}()
				}
				waitLine(t, w, code, n)
				release()
				wg.Wait()
				must(t, firstErr)
				if first.Status != tt.first {
					t.Fatalf("first: %s, want %s", first.Status, tt.first)
				}
				succeeded := 0
				for i := range n {
					must(t, errs[i])
					switch flows[i].Status {
					case models.FlowSucceeded:
						succeeded++
					case models.FlowRejected:
						if *flows[i].RejectReason != services.RejectNotAvailable {
							t.Errorf("next-%d rejected for %s", i, *flows[i].RejectReason)
						}
					default:
						t.Errorf("next-%d: %s", i, flows[i].Status)
					}
				}
				if succeeded != tt.succeeded {
					t.Errorf("%d of the next scans succeeded, want %d", succeeded, tt.succeeded)
				}
				if got := w.svc.Redemptions.Coalesced(); got != 0 {
					t.Errorf("coalesced %d requests, want none", got)
				}
				if got := w.count(&models.RedemptionFlow{}, "coupon_id = ?", c.ID); got != int64(n+1) {
					t.Errorf("%d flows, want %d", got, n+1)
				}
			})
		})
	}
}

// A retry storm of a request that already succeeded asks the database once:
// the copies behind the first get the stored answer from the line.
func TestLinedUpRetriesOfAFinishedRequest(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorldWith(t, db, true)
		code := w.issue(w.campaign, 1)[0]
		done, err := w.redeem(code, "retry-me", 5000)
		must(t, err)
		release := services.HoldGate(w.svc.Redemptions)
		n := 12
		flows := make([]*models.RedemptionFlow, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := func(i int, amount int64) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				flows[i], errs[i] = w.redeem(code, "retry-me", amount)
			}()
		}
		start(0, 5000)
		waitLine(t, w, code, 0)
		for i := 1; i < n; i++ {
			amount := int64(5000)
			if i == n-1 {
				amount = 7000
			}
			start(i, amount)
		}
		waitLine(t, w, code, n-1)
		release()
		wg.Wait()
		for i := range n - 1 {
			must(t, errs[i])
			if flows[i].RedeemNo != done.RedeemNo || flows[i].Status != models.FlowSucceeded {
				t.Errorf("retry %d: %s %s, want %s SUCCEEDED", i, flows[i].RedeemNo, flows[i].Status, done.RedeemNo)
			}
		}
		wantCode(t, errs[n-1], "IDEMPOTENCY_KEY_REUSED")
		if got := w.svc.Redemptions.Coalesced(); got != int64(n-1) {
			t.Errorf("coalesced %d requests, want %d", got, n-1)
		}
		if got := w.count(&models.RedemptionFlow{}, "request_id = ?", "retry-me"); got != 1 {
			t.Errorf("%d flows of the request, want 1", got)
		}
	})
}
