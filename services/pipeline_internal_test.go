package services

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
)

// pipelineWorld is a merchant with one store, a campaign and a clerk, on
// PostgreSQL with the builtin adapter, so one-shot redemptions go through
// the pipeline.
type pipelineWorld struct {
	t     *testing.T
	db    *gorm.DB
	svc   *Services
	clerk Actor
	store int64
	codes []string
	p     *pipeline
}

func newPipelineWorld(t *testing.T, codes int64) *pipelineWorld {
	t.Helper()
	ctx := context.Background()
	db := testdb.Postgres(t)
	now := func() time.Time { return time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC) }
	svc := New(db, Options{Now: now, Fulfiller: NewBuiltinFulfiller(db, now)})
	m, err := svc.Merchants.Create(ctx, "acme", "Acme Noodles", "Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	admin := SystemActor(m.ID)
	st, err := svc.Stores.Create(ctx, admin, CreateStoreInput{Code: "SH01", Name: "Shanghai 1"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := svc.Campaigns.Create(ctx, admin, CreateCampaignInput{Name: "Ten off", Type: models.CampaignCash, Value: 1000,
		TotalQuantity: 10_000, ValidFrom: now().Add(-time.Hour), ValidTo: now().Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	issued, err := svc.Campaigns.IssueCoupons(ctx, admin, IssueInput{CampaignID: c.ID, Count: codes})
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := svc.Tokens.Create(ctx, CreateTokenInput{MerchantID: m.ID, Role: models.RoleClerk, StoreCodes: []string{"SH01"}})
	if err != nil {
		t.Fatal(err)
	}
	clerk, err := svc.Tokens.Authenticate(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	st2, ok := svc.Redemptions.oneShot.(statementTake)
	if !ok {
		t.Fatalf("one-shot redemptions on PostgreSQL with the builtin adapter take %T, want statementTake", svc.Redemptions.oneShot)
	}
	return &pipelineWorld{t: t, db: db, svc: svc, clerk: clerk, store: st.ID, codes: issued.Codes, p: st2.pipeline}
}

func (w *pipelineWorld) redeem(ctx context.Context, code, requestID string) (*models.RedemptionFlow, error) {
	return w.svc.Redemptions.Redeem(ctx, w.clerk, RedeemInput{Code: code, StoreID: w.store, RequestID: requestID, OrderAmount: 5000})
}

// queueBehindOne starts first, holds it at the gate until every one of rest
// has queued in the pipeline behind it, then lets them all go and waits for
// them. With one lane the first runs alone and rest as one batch.
// meanwhile, if given, runs while they are queued.
func (w *pipelineWorld) queueBehindOne(first func(), rest []func(), meanwhile ...func()) {
	w.t.Helper()
	g := w.svc.Redemptions.gate.slots
	for range cap(g) {
		g <- struct{}{}
	}
	var wg sync.WaitGroup
	wg.Go(first)
	w.waitQueue(0, func() bool { return w.p.busy == 1 })
	for _, f := range rest {
		wg.Go(f)
	}
	w.waitQueue(len(rest), nil)
	for _, f := range meanwhile {
		f()
	}
	for range cap(g) {
		<-g
	}
	wg.Wait()
}

// waitQueue waits until n requests queue in the pipeline and cond, if any,
// holds.
func (w *pipelineWorld) waitQueue(n int, cond func() bool) {
	w.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		w.p.mu.Lock()
		ok := len(w.p.queue) == n && (cond == nil || cond())
		w.p.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("%d requests never queued in the pipeline", n)
		}
		time.Sleep(time.Millisecond)
	}
}

// distinctXmin counts the transactions that wrote the flows of requestIDs.
func (w *pipelineWorld) distinctXmin(requestIDs []string) int {
	w.t.Helper()
	var n int
	if err := w.db.Raw("SELECT count(DISTINCT xmin::text) FROM redemption_flows WHERE request_id IN ?", requestIDs).
		Scan(&n).Error; err != nil {
		w.t.Fatal(err)
	}
	return n
}

func (w *pipelineWorld) count(table, where string, args ...any) int64 {
	w.t.Helper()
	var n int64
	if err := w.db.Table(table).Where(where, args...).Count(&n).Error; err != nil {
		w.t.Fatal(err)
	}
	return n
}

// wantDefaultPlans checks that every open connection of the pool plans as
// PostgreSQL's default does: the generic plan a batch asks for
// (models.RedeemOnceAll) lasts until its commit and no longer, so the
// statements that run on its connection afterwards are planned as usual.
func (w *pipelineWorld) wantDefaultPlans() {
	w.t.Helper()
	ctx := context.Background()
	sqlDB, err := w.db.DB()
	if err != nil {
		w.t.Fatal(err)
	}
	open := sqlDB.Stats().OpenConnections
	if open == 0 {
		w.t.Fatal("no connection open after the batch")
	}
	// Holding every connection at once makes each one a different one.
	for i := range open {
		conn, err := sqlDB.Conn(ctx)
		if err != nil {
			w.t.Fatal(err)
		}
		defer conn.Close()
		var mode string
		if err := conn.QueryRowContext(ctx, "SHOW plan_cache_mode").Scan(&mode); err != nil {
			w.t.Fatal(err)
		}
		if mode != "auto" {
			w.t.Fatalf("connection %d of %d plans with plan_cache_mode %q after the batch, want auto", i+1, open, mode)
		}
	}
}

// Forty-eight redemptions queue while the first waits for a connection:
// they commit together, in one transaction, and each is answered with its
// own flow, order and event. A forty-ninth whose request ends while it is
// queued is answered with its context's error and writes nothing.
func TestPipelineCommitsQueuedRedemptionsTogether(t *testing.T) {
	w := newPipelineWorld(t, 50)
	w.p.lanes, w.p.max = 1, 64
	const n = 48
	flows := make([]*models.RedemptionFlow, n)
	errs := make([]error, n)
	ids := make([]string, n)
	rest := make([]func(), 0, n+1)
	for i := range n {
		ids[i] = fmt.Sprintf("req-%d", i)
		rest = append(rest, func() { flows[i], errs[i] = w.redeem(context.Background(), w.codes[i+1], ids[i]) })
	}
	cancelled, cancel := context.WithCancel(context.Background())
	var cancelledErr error
	rest = append(rest, func() { _, cancelledErr = w.redeem(cancelled, w.codes[n+1], "req-cancelled") })
	var firstErr error
	first := func() { _, firstErr = w.redeem(context.Background(), w.codes[0], "req-first") }
	// The cancelled request leaves the queue before the others run.
	w.queueBehindOne(first, rest, func() {
		cancel()
		w.waitQueue(n, nil)
	})

	if firstErr != nil {
		t.Fatal(firstErr)
	}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("redemption %d: %v", i, errs[i])
		}
		if flows[i].Status != models.FlowSucceeded || flows[i].ID == 0 ||
			flows[i].OrderRef == nil || flows[i].DiscountAmount != 1000 {
			t.Fatalf("redemption %d answered %+v", i, flows[i])
		}
	}
	if !errors.Is(cancelledErr, context.Canceled) {
		t.Fatalf("the cancelled request: %v, want context.Canceled", cancelledErr)
	}
	if got := w.distinctXmin(ids); got != 1 {
		t.Fatalf("the %d queued redemptions committed in %d transactions, want 1", n, got)
	}
	w.wantDefaultPlans()
	for _, c := range []struct {
		table, where string
		want         int64
	}{
		{"redemption_flows", "status = 'SUCCEEDED'", n + 1},
		{"redemption_flows", "request_id = 'req-cancelled'", 0},
		{"orders", "1 = 1", n + 1},
		{"coupons", "status = 'REDEEMED'", n + 1},
		{"outbox_events", "type = 'redemption.succeeded'", n + 1},
		{"coupon_transitions", "1 = 1", 2 * (n + 1)},
	} {
		if got := w.count(c.table, c.where); got != c.want {
			t.Errorf("%s where %s: %d rows, want %d", c.table, c.where, got, c.want)
		}
	}
}

// A batch that fails is written by none of its statements: here one request
// reuses a committed request id for another coupon, so its flow's insert
// violates the unique index. Every request of the batch then runs alone:
// the others succeed, each in its own transaction, and the reuse is
// IDEMPOTENCY_KEY_REUSED with its coupon untouched.
func TestPipelineBatchThatFailsRunsEachAlone(t *testing.T) {
	w := newPipelineWorld(t, 40)
	w.p.lanes, w.p.max = 1, 64
	if _, err := w.redeem(context.Background(), w.codes[0], "req-reused"); err != nil {
		t.Fatal(err)
	}
	const n = 30
	errs := make([]error, n)
	ids := make([]string, n)
	rest := make([]func(), 0, n+1)
	for i := range n {
		ids[i] = fmt.Sprintf("req-%d", i)
		rest = append(rest, func() { _, errs[i] = w.redeem(context.Background(), w.codes[i+2], ids[i]) })
	}
	var reusedErr error
	rest = append(rest[:n/2], append([]func(){func() { _, reusedErr = w.redeem(context.Background(), w.codes[n+2], "req-reused") }},
		rest[n/2:]...)...)
	var firstErr error
	w.queueBehindOne(func() { _, firstErr = w.redeem(context.Background(), w.codes[1], "req-first") }, rest)

	if firstErr != nil {
		t.Fatal(firstErr)
	}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("redemption %d: %v", i, errs[i])
		}
	}
	if !errors.Is(reusedErr, ErrIdempotencyKeyReused) {
		t.Fatalf("the reused request id: %v, want %v", reusedErr, ErrIdempotencyKeyReused)
	}
	if got := w.distinctXmin(ids); got != n {
		t.Fatalf("after the batch failed, the %d redemptions committed in %d transactions, want %d", n, got, n)
	}
	if got := w.count("coupons", "code = ? AND status = 'UNUSED'", w.codes[n+2]); got != 1 {
		t.Fatalf("the reused request's coupon: %d UNUSED rows, want 1", got)
	}
	if got := w.count("redemption_flows", "status = 'SUCCEEDED'"); got != n+2 {
		t.Fatalf("%d SUCCEEDED flows, want %d", got, n+2)
	}
	if got := w.count("outbox_events", "type = 'redemption.succeeded'"); got != n+2 {
		t.Fatalf("%d redemption.succeeded events, want %d", got, n+2)
	}
}

// Two calls of one batch for the same coupon: the first takes it, the
// second finds it taken, as if it had run after the first alone. Only the
// first's rows are written.
func TestRedeemOnceAllSameCouponTwice(t *testing.T) {
	w := newPipelineWorld(t, 2)
	ctx := context.Background()
	calls := []*models.OnceCall{w.onceCall(w.codes[0], "RD-1"), w.onceCall(w.codes[0], "RD-2"), w.onceCall(w.codes[1], "RD-3")}
	if err := models.RedeemOnceAll(w.db.WithContext(ctx), calls); err != nil {
		t.Fatal(err)
	}
	if !calls[0].Taken || calls[1].Taken || !calls[2].Taken {
		t.Fatalf("taken: %t %t %t, want true false true", calls[0].Taken, calls[1].Taken, calls[2].Taken)
	}
	if calls[0].Flow.Status != models.FlowSucceeded || calls[0].Flow.ID == 0 || calls[1].Flow.ID != 0 {
		t.Fatalf("flows: %+v, %+v", calls[0].Flow, calls[1].Flow)
	}
	if got := w.count("redemption_flows", "redeem_no IN ?", []string{"RD-1", "RD-2", "RD-3"}); got != 2 {
		t.Fatalf("%d flows, want 2", got)
	}
	if got := w.count("orders", "redeem_no = 'RD-2'"); got != 0 {
		t.Fatalf("%d orders for the statement that found the coupon taken", got)
	}
}

// Requests that wait for the batch under way are how the pipeline batches,
// not a sign that the tills fall behind: Waiting stays false while the
// queue fits in the next batch, and turns true once a request queues behind
// a full one. The first request waits at the gate the test holds, a sign of
// its own, which is forgotten before the queue forms.
func TestPipelineWaitingOnlyBehindAFullBatch(t *testing.T) {
	w := newPipelineWorld(t, 8)
	w.p.lanes, w.p.max = 1, 4
	tills := w.svc.Redemptions.tills
	g := w.svc.Redemptions.gate.slots
	for range cap(g) {
		g <- struct{}{}
	}
	errs := make([]error, w.p.max+2)
	var wg sync.WaitGroup
	redeem := func(i int) {
		wg.Go(func() { _, errs[i] = w.redeem(context.Background(), w.codes[i], fmt.Sprintf("wait-%d", i)) })
	}
	redeem(0)
	deadline := time.Now().Add(10 * time.Second)
	for tills.queued.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the first request never waited at the gate")
		}
		time.Sleep(time.Millisecond)
	}
	tills.queued.Store(0)
	for i := 1; i <= w.p.max; i++ {
		redeem(i)
		w.waitQueue(i, nil)
	}
	if w.svc.Redemptions.Waiting() {
		t.Error("Waiting with a queue that fits in the next batch")
	}
	redeem(w.p.max + 1)
	w.waitQueue(w.p.max+1, nil)
	if !w.svc.Redemptions.Waiting() {
		t.Error("not Waiting with a request queued behind a full batch")
	}
	for range cap(g) {
		<-g
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("redemption %d: %v", i, err)
		}
	}
}

// A multi-use card named by three calls of one batch gives each its own
// use, in the calls' order, as if each had run alone after the one before:
// the calls go into successive statements of the batch's transaction.
func TestRedeemOnceAllMultiUseCardThrice(t *testing.T) {
	w := newPipelineWorld(t, 1)
	ctx := context.Background()
	uses := int64(3)
	admin := SystemActor(w.clerk.MerchantID)
	c, err := w.svc.Campaigns.Create(ctx, admin, CreateCampaignInput{Name: "Three bowls", Type: models.CampaignCash, Value: 1000,
		TotalQuantity: 10, ValidFrom: batchNow.Add(-time.Hour), ValidTo: batchNow.Add(24 * time.Hour), UsesPerCoupon: &uses})
	if err != nil {
		t.Fatal(err)
	}
	issued, err := w.svc.Campaigns.IssueCoupons(ctx, admin, IssueInput{CampaignID: c.ID, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	card := issued.Codes[0]
	calls := []*models.OnceCall{w.onceCall(card, "RD-1"), w.onceCall(w.codes[0], "RD-2"), w.onceCall(card, "RD-3"),
		w.onceCall(card, "RD-4"), w.onceCall(card, "RD-5")}
	if err := models.RedeemOnceAll(w.db.WithContext(ctx), calls); err != nil {
		t.Fatal(err)
	}
	want := []bool{true, true, true, true, false}
	for i, c := range calls {
		if c.Taken != want[i] {
			t.Fatalf("call %d (%s) taken %t, want %t", i, c.Args.RedeemNo, c.Taken, want[i])
		}
	}
	for i, c := range []*models.OnceCall{calls[0], calls[2], calls[3]} {
		if c.Flow.UseNo != int64(i+1) {
			t.Fatalf("%s: use %d, want %d", c.Args.RedeemNo, c.Flow.UseNo, i+1)
		}
	}
	if calls[3].Flow.CouponAfter != models.CouponRedeemed || calls[2].Flow.CouponAfter != models.CouponUnused {
		t.Fatalf("card after the third use %s, after the second %s", calls[3].Flow.CouponAfter, calls[2].Flow.CouponAfter)
	}
	if got := w.count("redemption_flows", "redeem_no IN ?", []string{"RD-1", "RD-3", "RD-4", "RD-5"}); got != 3 {
		t.Fatalf("%d flows of the card, want 3", got)
	}
}

// batchNow is the clock of the tests that call models.RedeemOnceAll
// directly: newPipelineWorld's.
var batchNow = time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)

// onceCall is a one-shot redemption of code, as Redeem would hand it to
// models.RedeemOnceAll, with redemption number rn and request id "r-"+rn.
func (w *pipelineWorld) onceCall(code, rn string) *models.OnceCall {
	w.t.Helper()
	var mid int64
	if err := w.db.Raw("SELECT merchant_id FROM coupons WHERE code = ?", code).Scan(&mid).Error; err != nil {
		w.t.Fatal(err)
	}
	now, hold := batchNow, batchNow.Add(time.Minute)
	return &models.OnceCall{
		Args: models.ReserveArgs{MerchantID: mid, Code: code, RedeemNo: rn, StoreID: w.store, OrderAmount: 5000,
			Clock: models.ClockOf(now), Now: now},
		Flow: &models.RedemptionFlow{MerchantID: mid, RedeemNo: rn, Operation: models.OpRedeem, RequestID: "r-" + rn,
			Fingerprint: "fp", StoreID: w.store, OrderAmount: 5000, CreatedAt: now, UpdatedAt: now, HoldUntil: &hold},
		Actor: "test",
	}
}
