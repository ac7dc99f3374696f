package services_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/internal/testredis"
	"coupond/models"
	"coupond/services"
)

// redisCache is a Cache over srv, closed when the test ends.
func redisCache(t *testing.T, srv *testredis.Server) services.Cache {
	t.Helper()
	c, err := services.NewRedisCache(srv.URL())
	must(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// heldOrders holds every order until its gate is closed.
type heldOrders struct {
	services.Fulfiller
	gate chan struct{}
}

func (g heldOrders) Fulfil(ctx context.Context, req services.FulfilRequest) (string, error) {
	<-g.gate
	return g.Fulfiller.Fulfil(ctx, req)
}

// replicas are three coupond processes in one: services over one database,
// each with its own client of one Redis.
type replicas struct {
	w   *world
	svc [3]*services.Services
}

func newReplicas(t *testing.T, db *gorm.DB, srv *testredis.Server, fulfiller func(w *world) services.Fulfiller) *replicas {
	t.Helper()
	w := newWorldWith(t, db, false, func(o *services.Options) { o.Cache = redisCache(t, srv) })
	r := &replicas{w: w, svc: [3]*services.Services{w.svc}}
	f := services.Fulfiller(w.ful)
	if fulfiller != nil {
		f = fulfiller(w)
	}
	for i := range r.svc {
		r.svc[i] = services.New(db, services.Options{Now: w.clock.Now, Fulfiller: f, Cache: redisCache(t, srv)})
	}
	return r
}

func (r *replicas) stats() services.RedisStats {
	var s services.RedisStats
	for _, svc := range r.svc {
		x := svc.Redemptions.RedisStats()
		s.Hits += x.Hits
		s.Misses += x.Misses
		s.Waits += x.Waits
		s.Errors += x.Errors
		s.Fallbacks += x.Fallbacks
	}
	return s
}

func (r *replicas) redeem(i int, code, requestID string, amount int64) (*models.RedemptionFlow, error) {
	return r.svc[i].Redemptions.Redeem(context.Background(), r.w.clerkA,
		services.RedeemInput{Code: code, StoreID: r.w.storeA.ID, RequestID: requestID, OrderAmount: amount})
}

// storm sends n copies of one request to the replicas in turn, all released
// together, and returns the answers; between is called when half of them
// have been sent.
func (r *replicas) storm(n int, code, requestID string, between func()) ([]*models.RedemptionFlow, []error) {
	flows, errs := make([]*models.RedemptionFlow, n), make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		if i == n/2 && between != nil {
			close(start)
			between()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			flows[i], errs[i] = r.redeem(i%3, code, requestID, 5000)
		}()
	}
	if between == nil {
		close(start)
	}
	wg.Wait()
	return flows, errs
}

// A hundred copies of one request id across three replicas sharing a
// database and a Redis: one execution, and every copy gets the same answer,
// the duplicates by reading the first flow, not by running.
func TestRedisOneExecutionAcrossReplicas(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		r := newReplicas(t, db, testredis.New(t), nil)
		code := r.w.issue(r.w.campaign, 1)[0]
		flows, errs := r.storm(100, code, "storm", nil)
		for i := range flows {
			must(t, errs[i])
			if flows[i].Status != models.FlowSucceeded || flows[i].RedeemNo != flows[0].RedeemNo || flows[i].ID != flows[0].ID {
				t.Fatalf("answer %d: %s %s, want SUCCEEDED %s", i, flows[i].Status, flows[i].RedeemNo, flows[0].RedeemNo)
			}
		}
		if n := r.w.count(&models.RedemptionFlow{}, "request_id = ?", "storm"); n != 1 {
			t.Fatalf("%d flows, want 1", n)
		}
		if r.w.ful.fulfils != 1 {
			t.Fatalf("%d orders made, want 1", r.w.ful.fulfils)
		}
		if s := r.stats(); s.Misses != 1 || s.Hits != 99 || s.Errors != 0 || s.Fallbacks != 0 {
			t.Fatalf("redis stats %+v: want 1 miss and 99 hits", s)
		}
	})
}

// Redis dies while the first request of an id is making its order and half
// of its copies wait for it: the waiting copies and the later ones go on to
// the database, whose unique index still allows one execution. A copy that
// reaches the database while the first is in flight gets the in-flight flow,
// as without Redis; once the first has finished, every copy gets its answer.
func TestRedisKilledHalfway(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		srv := testredis.New(t)
		gate := make(chan struct{})
		r := newReplicas(t, db, srv, func(w *world) services.Fulfiller { return heldOrders{Fulfiller: w.ful, gate: gate} })
		code := r.w.issue(r.w.campaign, 1)[0]
		flows, errs := r.storm(100, code, "storm", func() {
			for deadline := time.Now().Add(10 * time.Second); r.stats().Waits < 49; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("copies did not wait for the first: %+v", r.stats())
				}
			}
			srv.Stop()
			time.AfterFunc(100*time.Millisecond, func() { close(gate) })
		})
		for i := range flows {
			must(t, errs[i])
			if flows[i].RedeemNo != flows[0].RedeemNo || (flows[i].Status != models.FlowSucceeded && flows[i].Status != models.FlowProcessing) {
				t.Fatalf("answer %d: %s %s, want %s, SUCCEEDED or in flight", i, flows[i].Status, flows[i].RedeemNo, flows[0].RedeemNo)
			}
		}
		if n := r.w.count(&models.RedemptionFlow{}, "request_id = ?", "storm"); n != 1 {
			t.Fatalf("%d flows, want 1", n)
		}
		if r.w.ful.fulfils != 1 {
			t.Fatalf("%d orders made, want 1", r.w.ful.fulfils)
		}
		if s := r.stats(); s.Errors == 0 || s.Fallbacks == 0 {
			t.Fatalf("redis stats %+v: want errors and fallbacks after the kill", s)
		}
		again, err := r.redeem(1, code, "storm", 5000)
		must(t, err)
		if again.Status != models.FlowSucceeded || again.RedeemNo != flows[0].RedeemNo {
			t.Fatalf("retry after the storm: %s %s", again.Status, again.RedeemNo)
		}
	})
}

// A cached answer is only a hint to read the flow: where it disagrees with
// the database, or names a request the database does not know, the database
// wins. PROCESSING is never cached as final.
func TestRedisCachedAnswerLosesToDatabase(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		srv := testredis.New(t)
		r := newReplicas(t, db, srv, nil)
		codes := r.w.issue(r.w.campaign, 3)
		rc := srv.Client()
		defer rc.Close()
		ctx := context.Background()
		m := r.w.merchant.ID

		first, err := r.redeem(0, codes[0], "real", 5000)
		must(t, err)
		must(t, rc.Set(ctx, services.RequestKey(m, models.OpRedeem, "real"),
			`{"redeemNo":"RDPLANTED","status":"REJECTED","fp":"x"}`, time.Minute).Err())
		got, err := r.redeem(1, codes[0], "real", 5000)
		must(t, err)
		if got.RedeemNo != first.RedeemNo || got.Status != models.FlowSucceeded {
			t.Fatalf("planted answer won: %s %s, want %s SUCCEEDED", got.Status, got.RedeemNo, first.RedeemNo)
		}

		must(t, rc.Set(ctx, services.RequestKey(m, models.OpRedeem, "ghost"),
			`{"redeemNo":"RDGHOST","status":"SUCCEEDED","fp":"x"}`, time.Minute).Err())
		ghost, err := r.redeem(2, codes[1], "ghost", 5000)
		must(t, err)
		if ghost.RedeemNo == "RDGHOST" || ghost.Status != models.FlowSucceeded || r.w.coupon(codes[1]).Status != models.CouponRedeemed {
			t.Fatalf("request with a planted answer and no flow: %s %s, want it run", ghost.Status, ghost.RedeemNo)
		}
		if s := r.stats(); s.Fallbacks != 2 {
			t.Fatalf("redis stats %+v: want 2 fallbacks", s)
		}

		held, err := r.svc[0].Redemptions.Reserve(ctx, r.w.clerkA,
			services.RedeemInput{Code: codes[2], StoreID: r.w.storeA.ID, RequestID: "held", OrderAmount: 5000})
		must(t, err)
		if v := rc.Get(ctx, services.RequestKey(m, models.OpReserve, "held")).Val(); held.Status != models.FlowProcessing || v != "db" {
			t.Fatalf("reserve %s left %q in Redis, want PROCESSING and \"db\"", held.Status, v)
		}
	})
}

// With Redis on, a request id reused for other parameters is still
// IDEMPOTENCY_KEY_REUSED, on any replica.
func TestRedisKeyReuse(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		r := newReplicas(t, db, testredis.New(t), nil)
		codes := r.w.issue(r.w.campaign, 2)
		_, err := r.redeem(0, codes[0], "k", 5000)
		must(t, err)
		for i := range 3 {
			_, err = r.redeem(i, codes[0], "k", 6000)
			wantCode(t, err, "IDEMPOTENCY_KEY_REUSED")
			_, err = r.redeem(i, codes[1], "k", 5000)
			wantCode(t, err, "IDEMPOTENCY_KEY_REUSED")
		}
		if s := r.stats(); s.Hits != 6 {
			t.Fatalf("redis stats %+v: want 6 hits", s)
		}
	})
}

// A coupon one replica saw taken for good is marked, and the other replicas
// reject its scans in their lines' batches, without a take; a marker the
// database does not confirm is ignored.
func TestRedisTakenMarker(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		srv := testredis.New(t)
		r := newReplicas(t, db, srv, nil)
		codes := r.w.issue(r.w.campaign, 2)
		rc := srv.Client()
		defer rc.Close()
		ctx := context.Background()
		m := r.w.merchant.ID

		_, err := r.redeem(0, codes[0], "winner", 5000)
		must(t, err)
		if v := rc.Get(ctx, services.TakenKey(m, codes[0])).Val(); v != string(models.CouponRedeemed) {
			t.Fatalf("marker %q, want REDEEMED", v)
		}
		for i := 1; i < 3; i++ {
			before := r.svc[i].Redemptions.Coalesced()
			f, err := r.redeem(i, codes[0], fmt.Sprintf("late-%d", i), 5000)
			must(t, err)
			if f.Status != models.FlowRejected || *f.RejectReason != services.RejectNotAvailable {
				t.Fatalf("late scan at replica %d: %s", i, f.Status)
			}
			if n := r.svc[i].Redemptions.Coalesced() - before; n != 1 {
				t.Fatalf("replica %d answered %d scans without a take, want 1", i, n)
			}
		}

		must(t, rc.Set(ctx, services.TakenKey(m, codes[1]), "REDEEMED", time.Minute).Err())
		f, err := r.redeem(1, codes[1], "planted", 5000)
		must(t, err)
		if f.Status != models.FlowSucceeded {
			t.Fatalf("planted marker on an unused coupon: %s, want SUCCEEDED", f.Status)
		}
		if s := r.stats(); s.Hits != 2 || s.Fallbacks != 1 {
			t.Fatalf("redis stats %+v: want 2 hits and 1 fallback", s)
		}
	})
}

// Redis down when coupond starts: requests are answered without it, and
// once it is up it is used.
func TestRedisDownAtStart(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		srv := testredis.Reserve(t)
		w := newWorldWith(t, db, true, func(o *services.Options) { o.Cache = redisCache(t, srv) })
		codes := w.issue(w.campaign, 2)
		f, err := w.redeem(codes[0], "down", 5000)
		must(t, err)
		if f.Status != models.FlowSucceeded {
			t.Fatalf("redeem with Redis down: %s", f.Status)
		}
		down := w.svc.Redemptions.RedisStats()
		if down.Errors == 0 || down.Fallbacks == 0 || down.Misses != 0 {
			t.Fatalf("redis stats %+v: want errors and fallbacks", down)
		}
		srv.Start()
		_, err = w.redeem(codes[1], "up", 5000)
		must(t, err)
		_, err = w.redeem(codes[1], "up", 5000)
		must(t, err)
		up := w.svc.Redemptions.RedisStats()
		if up.Errors != down.Errors || up.Misses != 1 || up.Hits != 1 {
			t.Fatalf("redis stats %+v after it came up (before %+v): want a miss, a hit and no new errors", up, down)
		}
	})
}
