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

// holdTimeout is the services' default hold timeout, which the worlds use.
const holdTimeout = 2 * time.Minute

var errUnknownOutcome = errors.New("fulfilment timed out")

// stuck redeems a coupon whose fulfilment outcome is lost, leaving the flow
// PROCESSING and the coupon REDEEMING. With created set, the order exists at
// the business system, as if the answer was lost after the order was made.
func (w *world) stuck(code, requestID string, created bool) *models.RedemptionFlow {
	w.t.Helper()
	w.ful.failWith(errUnknownOutcome)
	defer w.ful.failWith(nil)
	f, err := w.redeem(code, requestID, 5000)
	must(w.t, err)
	if f.Status != models.FlowProcessing {
		w.t.Fatalf("redeem %s, want PROCESSING", f.Status)
	}
	if created {
		_, err := services.NewBuiltinFulfiller(w.db, w.clock.Now).Fulfil(context.Background(), services.FulfilRequest{
			MerchantID: f.MerchantID, RedeemNo: f.RedeemNo, CouponID: f.CouponID, StoreID: f.StoreID, OrderAmount: f.OrderAmount})
		must(w.t, err)
	}
	return f
}

func (w *world) flow(redeemNo string) models.RedemptionFlow {
	w.t.Helper()
	var f models.RedemptionFlow
	must(w.t, w.db.Where("redeem_no = ?", redeemNo).Take(&f).Error)
	return f
}

// consistent advances the clock past every grace period and fails the test on
// any violation Check reports.
func (w *world) consistent() {
	w.t.Helper()
	w.clock.Advance(time.Minute)
	vs, err := w.svc.Reconciliation.Check(context.Background())
	must(w.t, err)
	for _, v := range vs {
		w.t.Errorf("violation: %s", v)
	}
	if len(vs) > 0 {
		w.t.FailNow()
	}
}

func TestCompensationReleasesCrashAfterReserve(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		code := w.issue(w.campaign, 1)[0]
		f := w.stuck(code, "crash-1", false)

		res, err := w.svc.Compensation.Run(ctx)
		must(t, err)
		if res.Claimed != 0 || w.coupon(code).Status != models.CouponRedeeming {
			t.Fatalf("within the hold: %+v, coupon %s", res, w.coupon(code).Status)
		}

		w.clock.Advance(holdTimeout + time.Second)
		res, err = w.svc.Compensation.Run(ctx)
		must(t, err)
		if res != (services.CompensationResult{Claimed: 1, Released: 1}) {
			t.Fatalf("compensation %+v, want one release", res)
		}
		got := w.flow(f.RedeemNo)
		if got.Status != models.FlowReleased || *got.ReleaseReason != services.ReleaseHoldTimeout {
			t.Fatalf("flow %s %v", got.Status, got.ReleaseReason)
		}
		if c := w.coupon(code); c.Status != models.CouponUnused || c.Version != 2 {
			t.Fatalf("coupon %s v%d, want UNUSED v2", c.Status, c.Version)
		}

		// The original request's fulfilment arrives late: fenced.
		_, err = w.svc.Fulfiller.Fulfil(ctx, services.FulfilRequest{MerchantID: f.MerchantID, RedeemNo: f.RedeemNo,
			CouponID: f.CouponID, StoreID: f.StoreID, OrderAmount: f.OrderAmount})
		if !errors.Is(err, services.ErrFenced) {
			t.Fatalf("late fulfil: %v, want ErrFenced", err)
		}
		if n := w.count(&models.Order{}, "status = 'CREATED'"); n != 0 {
			t.Fatalf("%d live orders, want 0", n)
		}
		// A replay of the original request answers with the final flow.
		replayed, err := w.redeem(code, "crash-1", 5000)
		must(t, err)
		if replayed.Status != models.FlowReleased {
			t.Fatalf("replay %s", replayed.Status)
		}
		// The customer can use the coupon again.
		again, err := w.redeem(code, "crash-2", 5000)
		must(t, err)
		if again.Status != models.FlowSucceeded {
			t.Fatalf("redeem again: %s", again.Status)
		}
		// Nothing is left for the next run.
		w.clock.Advance(holdTimeout)
		res, err = w.svc.Compensation.Run(ctx)
		must(t, err)
		if res.Claimed != 0 {
			t.Fatalf("second run %+v", res)
		}
		w.consistent()
	})
}

func TestCompensationRollsForwardCrashAfterOrder(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		code := w.issue(w.campaign, 1)[0]
		f := w.stuck(code, "lost-answer", true)
		w.clock.Advance(holdTimeout + time.Second)
		res, err := w.svc.Compensation.Run(ctx)
		must(t, err)
		if res != (services.CompensationResult{Claimed: 1, RolledForward: 1}) {
			t.Fatalf("compensation %+v, want one roll forward", res)
		}
		got := w.flow(f.RedeemNo)
		var order models.Order
		must(t, db.Where("redeem_no = ?", f.RedeemNo).Take(&order).Error)
		if got.Status != models.FlowSucceeded || got.OrderRef == nil || *got.OrderRef != fmt.Sprintf("ORD%d", order.ID) {
			t.Fatalf("flow %s ref %v, want SUCCEEDED with ORD%d", got.Status, got.OrderRef, order.ID)
		}
		if c := w.coupon(code); c.Status != models.CouponRedeemed || c.Version != 2 {
			t.Fatalf("coupon %s v%d, want REDEEMED v2", c.Status, c.Version)
		}
		if n := w.count(&models.Order{}, "redeem_no = ?", f.RedeemNo); n != 1 {
			t.Fatalf("%d orders, want exactly 1", n)
		}
		if n := w.count(&models.CouponTransition{}, "coupon_id = ? AND to_status = 'UNUSED'", got.CouponID); n != 0 {
			t.Fatalf("coupon was released %d times", n)
		}
		w.consistent()
	})
}

func TestCompensationReleasesExpiredReservation(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		code := w.issue(w.campaign, 1)[0]
		f, err := w.svc.Redemptions.Reserve(ctx, w.clerkA, services.RedeemInput{Code: code, StoreID: w.storeA.ID,
			RequestID: "mp-1", OrderAmount: 5000})
		must(t, err)
		w.clock.Advance(holdTimeout + time.Second)
		res, err := w.svc.Compensation.Run(ctx)
		must(t, err)
		if res != (services.CompensationResult{Claimed: 1, Released: 1}) {
			t.Fatalf("compensation %+v", res)
		}
		_, err = w.svc.Redemptions.Confirm(ctx, w.clerkA, services.ConfirmInput{RedeemNo: f.RedeemNo, OrderRef: "POS-1"})
		wantCode(t, err, "INVALID_STATE")
		if c := w.coupon(code); c.Status != models.CouponUnused || c.Version != 2 {
			t.Fatalf("coupon %s v%d", c.Status, c.Version)
		}
		// Two-phase orders are the client's: the builtin adapter was not asked.
		if n := w.count(&models.Order{}, "redeem_no = ?", f.RedeemNo); n != 0 {
			t.Fatalf("%d order rows for a reservation", n)
		}
		w.consistent()
	})
}

// gatedFulfiller holds Fulfil until its gate opens.
type gatedFulfiller struct {
	services.Fulfiller
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedFulfiller) Fulfil(ctx context.Context, req services.FulfilRequest) (string, error) {
	close(g.entered)
	<-g.gate
	return g.Fulfiller.Fulfil(ctx, req)
}

// Pitfall 5, one-shot: the original request's fulfil and confirm race the
// compensation that found the flow past its hold. Exactly one finishes the
// flow, and the end state is consistent every time.
func TestCompensationRacesOriginalRedeem(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		const rounds = 25
		codes := w.issue(w.campaign, rounds)
		builtin := w.ful.Fulfiller
		outcomes := map[string]int{}
		for i, code := range codes {
			g := &gatedFulfiller{Fulfiller: builtin, entered: make(chan struct{}), gate: make(chan struct{})}
			w.ful.Fulfiller = g
			var (
				wg     sync.WaitGroup
				flow   *models.RedemptionFlow
				redErr error
				res    services.CompensationResult
				resErr error
			)
			wg.Add(3)
			go func() {
				defer wg.Done()
				flow, redErr = w.redeem(code, fmt.Sprintf("race-%d", i), 5000)
			}()
			<-g.entered
			w.clock.Advance(holdTimeout + time.Second)
			start := make(chan struct{})
			go func() { defer wg.Done(); <-start; close(g.gate) }()
			go func() { defer wg.Done(); <-start; res, resErr = w.svc.Compensation.Run(ctx) }()
			close(start)
			wg.Wait()
			must(t, redErr)
			must(t, resErr)
			final := w.flow(flow.RedeemNo)
			c := w.coupon(code)
			if n := w.count(&models.CouponTransition{}, "coupon_id = ?", c.ID); n != 2 || c.Version != 2 {
				t.Fatalf("round %d: %d transitions, version %d: want exactly one finish", i, n, c.Version)
			}
			if res.RolledForward+res.Released > 1 {
				t.Fatalf("round %d: compensation resolved twice: %+v", i, res)
			}
			live := w.count(&models.Order{}, "redeem_no = ? AND status = 'CREATED'", final.RedeemNo)
			switch final.Status {
			case models.FlowSucceeded:
				if c.Status != models.CouponRedeemed || live != 1 || res.Released != 0 {
					t.Fatalf("round %d: succeeded with coupon %s, %d live orders, %+v", i, c.Status, live, res)
				}
			case models.FlowReleased:
				if c.Status != models.CouponUnused || live != 0 || res.RolledForward != 0 {
					t.Fatalf("round %d: released with coupon %s, %d live orders, %+v", i, c.Status, live, res)
				}
			default:
				t.Fatalf("round %d: flow left %s", i, final.Status)
			}
			winner := "original"
			if res.RolledForward+res.Released == 1 {
				winner = "compensation"
			}
			outcomes[winner+"/"+string(final.Status)]++
		}
		w.ful.Fulfiller = builtin
		t.Logf("outcomes: %v", outcomes)
		w.consistent()
	})
}

// Pitfall 5, two-phase: a confirm arriving at the hold deadline races the
// compensation release.
func TestCompensationRacesConfirm(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		const rounds = 25
		codes := w.issue(w.campaign, rounds)
		for i, code := range codes {
			f, err := w.svc.Redemptions.Reserve(ctx, w.clerkA, services.RedeemInput{Code: code, StoreID: w.storeA.ID,
				RequestID: fmt.Sprintf("mp-%d", i), OrderAmount: 5000})
			must(t, err)
			w.clock.Advance(holdTimeout + time.Second)
			var (
				wg      sync.WaitGroup
				confErr error
				res     services.CompensationResult
				resErr  error
			)
			start := make(chan struct{})
			wg.Add(2)
			go func() {
				defer wg.Done()
				<-start
				_, confErr = w.svc.Redemptions.Confirm(ctx, w.clerkA, services.ConfirmInput{RedeemNo: f.RedeemNo, OrderRef: "POS"})
			}()
			go func() { defer wg.Done(); <-start; res, resErr = w.svc.Compensation.Run(ctx) }()
			close(start)
			wg.Wait()
			must(t, resErr)
			c := w.coupon(code)
			if (confErr == nil) == (res.Released == 1) {
				t.Fatalf("round %d: confirm err %v, compensation %+v: want exactly one winner", i, confErr, res)
			}
			want := models.CouponRedeemed
			if confErr != nil {
				wantCode(t, confErr, "INVALID_STATE")
				want = models.CouponUnused
			}
			if c.Status != want || c.Version != 2 {
				t.Fatalf("round %d: coupon %s v%d, want %s v2", i, c.Status, c.Version, want)
			}
		}
		w.consistent()
	})
}

// Two compensation workers (two processes' services on one database) at once
// never resolve a flow twice.
func TestTwoCompensationWorkers(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		const n = 40
		codes := w.issue(w.campaign, n)
		for i, code := range codes {
			w.stuck(code, fmt.Sprintf("stuck-%d", i), i%2 == 0)
		}
		w.clock.Advance(holdTimeout + time.Second)
		other := services.New(db, services.Options{Now: w.clock.Now, Fulfiller: w.ful})
		workers := []*services.Compensator{w.svc.Compensation, other.Compensation}
		results := make([]services.CompensationResult, len(workers))
		errs := make([]error, len(workers))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, c := range workers {
			wg.Add(1)
			go func() { defer wg.Done(); <-start; results[i], errs[i] = c.Run(ctx) }()
		}
		close(start)
		wg.Wait()
		var rolled, released int
		for i := range workers {
			must(t, errs[i])
			rolled += results[i].RolledForward
			released += results[i].Released
		}
		t.Logf("workers: %+v", results)
		if rolled != n/2 || released != n/2 {
			t.Fatalf("rolled forward %d, released %d, want %d each", rolled, released, n/2)
		}
		if got := w.count(&models.CouponTransition{}, "1 = 1"); got != 2*n {
			t.Fatalf("%d transitions, want %d", got, 2*n)
		}
		w.consistent()
	})
}

// lookupDown fails every Lookup.
type lookupDown struct{ services.Fulfiller }

func (lookupDown) Lookup(context.Context, int64, string) (services.LookupResult, error) {
	return services.LookupResult{}, errors.New("order system unreachable")
}

func TestCompensationOpensFindingAfterFailedLookups(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		code := w.issue(w.campaign, 1)[0]
		f := w.stuck(code, "dark", false)
		builtin := w.ful.Fulfiller
		w.ful.Fulfiller = lookupDown{builtin}
		w.clock.Advance(holdTimeout + time.Second)
		for try := 1; try <= 6; try++ {
			res, err := w.svc.Compensation.Run(ctx)
			must(t, err)
			wantOpened := 0
			if try == 5 {
				wantOpened = 1
			}
			if res != (services.CompensationResult{Claimed: 1, Failed: 1, FindingsOpened: wantOpened}) {
				t.Fatalf("try %d: %+v", try, res)
			}
			w.clock.Advance(30 * time.Second)
		}
		if got := w.flow(f.RedeemNo); got.Status != models.FlowProcessing || got.Attempts != 6 {
			t.Fatalf("flow %s after %d attempts", got.Status, got.Attempts)
		}
		page, err := w.svc.Reconciliation.Findings(ctx, w.finance, services.FindingFilter{Kind: models.FindingLookupFailing}, services.PageArgs{})
		must(t, err)
		if len(page.Items) != 1 || *page.Items[0].RedeemNo != f.RedeemNo || page.Items[0].Status != models.FindingOpen {
			t.Fatalf("findings %+v", page.Items)
		}
		// The order system comes back: the next run releases.
		w.ful.Fulfiller = builtin
		res, err := w.svc.Compensation.Run(ctx)
		must(t, err)
		if res.Released != 1 {
			t.Fatalf("after recovery %+v", res)
		}
	})
}

// Compensation's fence and release carry the coupon version it read, as
// well as the holder's redemption number: against a coupon that moved on,
// neither writes anything.
func TestCompensationChecksTheCouponVersion(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		code := w.issue(w.campaign, 1)[0]
		f := w.stuck(code, "versioned", false)
		c := w.coupon(code)
		now := w.clock.Now()
		ok, err := models.FenceFlow(db, f.ID, c.Version+1, now)
		must(t, err)
		if ok {
			t.Fatal("fenced at a version the coupon does not have")
		}
		_, ok, err = models.MoveCouponAt(db, c.ID, f.RedeemNo, models.CouponRedeeming, models.CouponUnused, c.Version+5, now)
		must(t, err)
		if ok {
			t.Fatal("released at a stale version")
		}
		if got := w.coupon(code); got.Status != models.CouponRedeeming || got.Version != c.Version {
			t.Fatalf("coupon moved: %s v%d", got.Status, got.Version)
		}
		ok, err = models.FenceFlow(db, f.ID, c.Version, now)
		must(t, err)
		if !ok {
			t.Fatal("not fenced at the coupon's version")
		}
		w.clock.Advance(holdTimeout + time.Second)
		res, err := w.svc.Compensation.Run(context.Background())
		must(t, err)
		if res != (services.CompensationResult{Claimed: 1, Released: 1}) {
			t.Fatalf("compensation %+v", res)
		}
		w.consistent()
	})
}
