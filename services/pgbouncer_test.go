package services_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"coupond/internal/testpgbouncer"
	"coupond/models"
	"coupond/services"
)

// TestRedemptionThroughPgBouncer runs redemptions through a real pgbouncer in
// transaction mode, which (in Debian's 1.18) keeps no prepared statements
// across server connections, with each pgx query mode that needs none:
// concurrent scans of one coupon take it once, distinct coupons are each
// taken, same-id retries replay, and reconciliation finds nothing.
func TestRedemptionThroughPgBouncer(t *testing.T) {
	for _, mode := range []string{"cache_describe", "exec", "simple_protocol"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			bnc := testpgbouncer.Start(t, 4)
			direct, err := models.Open(ctx, bnc.DirectURL, models.OpenOptions{MaxOpenConns: 1})
			must(t, err)
			_, err = models.Migrate(ctx, direct)
			must(t, err)
			must(t, models.Close(direct))

			db, err := models.Open(ctx, bnc.URL, models.OpenOptions{MaxOpenConns: 16, QueryExecMode: mode, Warm: true})
			must(t, err)
			t.Cleanup(func() { _ = models.Close(db) })
			// Nothing is pending, so this takes no session lock through the pooler.
			applied, err := models.Migrate(ctx, db)
			must(t, err)
			if len(applied) != 0 {
				t.Fatalf("migrated through pgbouncer: %v", applied)
			}
			w := newWorldWith(t, db, true, func(o *services.Options) { o.NoCouponLines = true })
			codes := w.issue(w.campaign, 21)

			const scans = 40
			var (
				wg        sync.WaitGroup
				mu        sync.Mutex
				succeeded int
				rejected  int
				errs      []error
			)
			start := make(chan struct{})
			for i := range scans + 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					code, rid := codes[0], fmt.Sprintf("scan-%d", i)
					if i >= scans {
						code, rid = codes[1+i-scans], fmt.Sprintf("own-%d", i)
					}
					f, err := w.redeem(code, rid, 5000)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err != nil:
						errs = append(errs, err)
					case f.Status == models.FlowSucceeded:
						succeeded++
					case f.Status == models.FlowRejected:
						rejected++
					}
				}()
			}
			close(start)
			wg.Wait()
			if len(errs) > 0 {
				t.Fatalf("%d errors through pgbouncer, first: %v", len(errs), errs[0])
			}
			if succeeded != 1+20 || rejected != scans-1 {
				t.Fatalf("succeeded %d, rejected %d; want 21 and %d", succeeded, rejected, scans-1)
			}
			again, err := w.redeem(codes[1], fmt.Sprintf("own-%d", scans), 5000)
			must(t, err)
			if again.Status != models.FlowSucceeded {
				t.Fatalf("same-id retry: %s", again.Status)
			}
			if n := w.count(&models.Coupon{}, "status = ?", models.CouponRedeemed); n != 21 {
				t.Fatalf("%d coupons redeemed, want 21", n)
			}
			vs, err := w.svc.Reconciliation.Check(ctx)
			must(t, err)
			if len(vs) != 0 {
				t.Fatalf("violations: %v", vs)
			}
		})
	}
}
