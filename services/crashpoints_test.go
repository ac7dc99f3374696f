package services_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// crashed is what a crash-point hook panics with to stop a request where a
// crashing process would stop.
type crashed struct{ point services.CrashPoint }

// moment is the committed state of one redemption, read from the database
// while the request is stopped at a crash point.
type moment struct {
	Flow   models.FlowStatus
	Coupon models.CouponStatus
	Orders int64 // live orders for the redemption number
}

// crashWorld is a world whose redemptions call a crash-point hook: it records
// every point reached and, at the armed one, reads the state and panics.
type crashWorld struct {
	*world
	red     *services.Redemptions
	armed   services.CrashPoint
	reached []services.CrashPoint
	at      moment
	redeem  string // the redemption number passed to the hook at the armed point
}

func newCrashWorld(t *testing.T, db *gorm.DB, oneCommit bool) *crashWorld {
	w := &crashWorld{world: newWorldWith(t, db, oneCommit)}
	var f services.Fulfiller = w.ful
	if oneCommit {
		f = w.svc.Fulfiller
	}
	w.red = services.New(db, services.Options{Now: w.clock.Now, Fulfiller: f, CrashPoint: w.hook}).Redemptions
	return w
}

func (w *crashWorld) hook(point services.CrashPoint, redeemNo string) {
	w.reached = append(w.reached, point)
	if point != w.armed {
		return
	}
	// A query through the pool runs on a connection outside any open
	// transaction, so it sees only what was committed.
	var f models.RedemptionFlow
	must(w.t, w.db.Where("redeem_no = ?", redeemNo).Take(&f).Error)
	var c models.Coupon
	must(w.t, w.db.Where("id = ?", f.CouponID).Take(&c).Error)
	w.at = moment{Flow: f.Status, Coupon: c.Status,
		Orders: w.count(&models.Order{}, "redeem_no = ? AND status = 'CREATED'", redeemNo)}
	w.redeem = redeemNo
	panic(crashed{point})
}

// crash runs fn with the hook armed at point and reports whether fn stopped
// there.
func (w *crashWorld) crash(point services.CrashPoint, fn func()) (stopped bool) {
	w.armed, w.reached, w.at, w.redeem = point, nil, moment{}, ""
	defer func() {
		if r := recover(); r != nil {
			c, ok := r.(crashed)
			if !ok || c.point != point {
				panic(r)
			}
			stopped = true
		}
	}()
	fn()
	return false
}

// Each crash point fires at the moment its name says, and the state a crash
// there leaves behind is resolved by compensation and same-id retries into a
// consistent ledger.
func TestCrashPoints(t *testing.T) {
	tests := []struct {
		name      string
		oneCommit bool
		point     services.CrashPoint
		// the committed state at the point
		want moment
		// after compensation, a retry with the same request id answers
		wantFinal models.FlowStatus
		wantAfter models.CouponStatus
	}{
		{"two transactions, after the reserve commit", false, services.CrashAfterReserveCommit,
			moment{models.FlowProcessing, models.CouponRedeeming, 0}, models.FlowReleased, models.CouponUnused},
		{"two transactions, after the order is created", false, services.CrashAfterOrderCreated,
			moment{models.FlowProcessing, models.CouponRedeeming, 1}, models.FlowSucceeded, models.CouponRedeemed},
		{"two transactions, after the confirm commit", false, services.CrashAfterConfirmCommit,
			moment{models.FlowSucceeded, models.CouponRedeemed, 1}, models.FlowSucceeded, models.CouponRedeemed},
		{"one commit, after the confirm commit", true, services.CrashAfterConfirmCommit,
			moment{models.FlowSucceeded, models.CouponRedeemed, 1}, models.FlowSucceeded, models.CouponRedeemed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testdb.Each(t, func(t *testing.T, db *gorm.DB) {
				w := newCrashWorld(t, db, tt.oneCommit)
				ctx := context.Background()
				code := w.issue(w.campaign, 1)[0]
				in := services.RedeemInput{Code: code, StoreID: w.storeA.ID, RequestID: "crash-" + string(tt.point), OrderAmount: 5000}
				if !w.crash(tt.point, func() { _, _ = w.red.Redeem(ctx, w.clerkA, in) }) {
					t.Fatalf("redeem did not reach %s (reached %v)", tt.point, w.reached)
				}
				if w.at != tt.want {
					t.Fatalf("at %s: %+v, want %+v", tt.point, w.at, tt.want)
				}
				// The process restarts: compensation runs past the hold, then the
				// client retries with its request id.
				w.clock.Advance(holdTimeout + time.Second)
				_, err := w.svc.Compensation.Run(ctx)
				must(t, err)
				got, err := w.svc.Redemptions.Redeem(ctx, w.clerkA, in)
				must(t, err)
				if got.RedeemNo != w.redeem || got.Status != tt.wantFinal {
					t.Fatalf("retry: %s %s, want %s %s", got.RedeemNo, got.Status, w.redeem, tt.wantFinal)
				}
				if c := w.coupon(code); c.Status != tt.wantAfter || c.Version != 2 {
					t.Fatalf("coupon %s v%d, want %s v2", c.Status, c.Version, tt.wantAfter)
				}
				fenced := w.count(&models.RedemptionFlow{}, "redeem_no = ? AND fenced_at IS NOT NULL", got.RedeemNo)
				if want := tt.wantFinal == models.FlowReleased; (fenced == 1) != want {
					t.Fatalf("fenced %t, want %t", fenced == 1, want)
				}
				w.consistent()
			})
		})
	}
}

// A redemption that runs to its end passes the crash points in protocol
// order, each once; on the builtin adapter's single commit only the last one
// exists. A confirm passes the last point when it commits, and not when it is
// replayed.
func TestCrashPointsInOrder(t *testing.T) {
	for _, oneCommit := range []bool{false, true} {
		t.Run(fmt.Sprintf("one-commit=%t", oneCommit), func(t *testing.T) {
			testdb.Each(t, func(t *testing.T, db *gorm.DB) {
				ctx := context.Background()
				w := newCrashWorld(t, db, oneCommit)
				code := w.issue(w.campaign, 1)[0]
				in := services.RedeemInput{Code: code, StoreID: w.storeA.ID, RequestID: "r", OrderAmount: 5000}
				want := services.CrashPoints
				if oneCommit {
					want = []services.CrashPoint{services.CrashAfterConfirmCommit}
				}
				w.crash("", func() {
					f, err := w.red.Redeem(ctx, w.clerkA, in)
					must(t, err)
					if f.Status != models.FlowSucceeded {
						t.Fatalf("redeem %s", f.Status)
					}
				})
				if !slices.Equal(w.reached, want) {
					t.Fatalf("reached %v, want %v", w.reached, want)
				}
				w.crash("", func() { _, err := w.red.Redeem(ctx, w.clerkA, in); must(t, err) })
				if len(w.reached) != 0 {
					t.Fatalf("a replayed redeem reached %v", w.reached)
				}
			})
		})
	}
}

// A two-phase confirm stops after its commit with the coupon REDEEMED; the
// client's repeat of the confirm answers SUCCEEDED without committing again.
func TestCrashAfterConfirm(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newCrashWorld(t, db, false)
		ctx := context.Background()
		code := w.issue(w.campaign, 1)[0]
		f, err := w.red.Reserve(ctx, w.clerkA, services.RedeemInput{Code: code, StoreID: w.storeA.ID, RequestID: "mp-1", OrderAmount: 5000})
		must(t, err)
		confirm := services.ConfirmInput{RedeemNo: f.RedeemNo, OrderRef: "POS-1"}
		if !w.crash(services.CrashAfterConfirmCommit, func() { _, _ = w.red.Confirm(ctx, w.clerkA, confirm) }) {
			t.Fatalf("confirm did not reach %s (reached %v)", services.CrashAfterConfirmCommit, w.reached)
		}
		if want := (moment{models.FlowSucceeded, models.CouponRedeemed, 0}); w.at != want || w.redeem != f.RedeemNo {
			t.Fatalf("after the confirm commit: %+v of %s, want %+v of %s", w.at, w.redeem, want, f.RedeemNo)
		}
		var again *models.RedemptionFlow
		w.crash(services.CrashAfterConfirmCommit, func() { again, err = w.red.Confirm(ctx, w.clerkA, confirm) })
		must(t, err)
		if again == nil || again.Status != models.FlowSucceeded || len(w.reached) != 0 {
			t.Fatalf("confirm replay: %v, reached %v", again, w.reached)
		}
		w.consistent()
	})
}
