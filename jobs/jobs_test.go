package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/jobs"
	"coupond/models"
	"coupond/services"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// lostAnswers fails every Fulfil with an unknown outcome, before creating.
type lostAnswers struct{ services.Fulfiller }

func (lostAnswers) Fulfil(context.Context, services.FulfilRequest) (string, error) {
	return "", errors.New("timeout")
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// replica is one coupond process: its services and its scheduler.
type replica struct {
	svc   *services.Services
	sched *jobs.Scheduler
}

func newReplica(t *testing.T, db *gorm.DB, clk *clock) replica {
	t.Helper()
	svc := services.New(db, services.Options{Now: clk.Now,
		Fulfiller: lostAnswers{services.NewBuiltinFulfiller(db, clk.Now)}})
	sched, err := jobs.New(svc.JobRuns, jobs.Config{Now: clk.Now})
	must(t, err)
	return replica{svc: svc, sched: sched}
}

// runs lists the installation's runs of job: the scheduler's runs cover
// every merchant, so they are the operator's, not a merchant's.
func runs(t *testing.T, svc *services.Services, job string) []services.JobRun {
	t.Helper()
	p, err := svc.JobRuns.ListInstallation(context.Background(), 0, services.JobRunFilter{Job: job}, services.PageArgs{First: 100})
	must(t, err)
	return p.Items
}

// Two schedulers on one database: each singleton slot runs once, whichever
// fires first; work jobs run on both.
func TestTwoSchedulersRunEachSlotOnce(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		clk := &clock{t: time.Date(2026, 12, 1, 0, 10, 0, 0, time.UTC)}
		a, b := newReplica(t, db, clk), newReplica(t, db, clk)
		_, err := a.svc.Merchants.Create(ctx, "acme", "Acme", "Asia/Shanghai")
		must(t, err)
		const slots = 5
		for _, job := range []string{services.JobReconciliation, services.JobDailyStatement} {
			for i := range slots {
				var (
					wg   sync.WaitGroup
					got  [2]*services.JobRun
					errs [2]error
				)
				start := make(chan struct{})
				for k, r := range []replica{a, b} {
					wg.Add(1)
					go func() { defer wg.Done(); <-start; got[k], errs[k] = r.sched.Fire(ctx, job) }()
				}
				close(start)
				wg.Wait()
				must(t, errs[0])
				must(t, errs[1])
				if (got[0] == nil) == (got[1] == nil) {
					t.Fatalf("%s slot %d: runs %v and %v, want exactly one", job, i, got[0], got[1])
				}
				clk.Advance(time.Minute)
			}
			rs := runs(t, a.svc, job)
			if len(rs) != slots {
				t.Fatalf("%s: %d runs, want %d", job, len(rs), slots)
			}
			for _, r := range rs {
				if r.Status != models.JobSucceeded || r.Slot == nil || r.FinishedAt == nil {
					t.Fatalf("%s run %+v", job, r)
				}
			}
		}
		for _, r := range []replica{a, b} {
			run, err := r.sched.Fire(ctx, services.JobCompensation)
			must(t, err)
			if run == nil || run.Slot != nil {
				t.Fatalf("compensation run %+v", run)
			}
		}
		if n := len(runs(t, a.svc, services.JobCompensation)); n != 2 {
			t.Fatalf("%d compensation runs, want 2", n)
		}
	})
}

func TestCompensationJobReleasesAndRecordsCounts(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		clk := &clock{t: time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)}
		r := newReplica(t, db, clk)
		admin, code := stuckRedemption(t, r.svc, clk, "acme")
		run, err := r.sched.Fire(ctx, services.JobCompensation)
		must(t, err)
		var counts map[string]int64
		must(t, json.Unmarshal([]byte(run.Counts), &counts))
		if run.Status != models.JobSucceeded || counts["released"] != 1 || counts["claimed"] != 1 {
			t.Fatalf("run %s counts %v", run.Status, counts)
		}
		c, err := r.svc.Coupons.ByCode(ctx, admin, code)
		must(t, err)
		if c.Status != models.CouponUnused {
			t.Fatalf("coupon %s", c.Status)
		}
	})
}

func TestRunNow(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		clk := &clock{t: time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)}
		r := newReplica(t, db, clk)
		m, err := r.svc.Merchants.Create(context.Background(), "acme", "Acme", "")
		must(t, err)
		admin := services.WithActor(context.Background(), services.SystemActor(m.ID))
		for _, job := range services.JobNames() {
			run, err := r.sched.RunNow(admin, job)
			must(t, err)
			if run.Status != models.JobSucceeded || run.Slot != nil {
				t.Fatalf("%s: %+v", job, run)
			}
		}
		// Manual runs never take a scheduled slot.
		run, err := r.sched.Fire(context.Background(), services.JobReconciliation)
		must(t, err)
		if run == nil {
			t.Fatal("scheduled run skipped after a manual one")
		}
		finance := services.WithActor(context.Background(), services.Actor{MerchantID: m.ID, Role: models.RoleFinance})
		_, err = r.sched.RunNow(finance, services.JobCompensation)
		wantCode(t, err, "FORBIDDEN")
		_, err = r.sched.RunNow(context.Background(), services.JobCompensation)
		wantCode(t, err, "UNAUTHENTICATED")
		_, err = r.sched.RunNow(admin, "reindex")
		wantCode(t, err, "BAD_USER_INPUT")
	})
}

func TestSchedulerStartStop(t *testing.T) {
	db := testdb.SQLite(t)
	clk := &clock{t: time.Now()}
	svc := services.New(db, services.Options{Now: clk.Now})
	sched, err := jobs.New(svc.JobRuns, jobs.Config{CompensateEvery: time.Hour})
	must(t, err)
	sched.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	must(t, sched.Stop(ctx))
	if _, err := jobs.New(svc.JobRuns, jobs.Config{ReconcileSpec: "not a spec"}); err == nil {
		t.Fatal("bad spec accepted")
	}
}

// A job whose spec is Off is not scheduled; the others keep theirs, and the
// defaults fill the specs left empty.
func TestSchedulesOff(t *testing.T) {
	svc := services.New(testdb.SQLite(t), services.Options{})
	tests := []struct {
		name string
		give jobs.Config
		want map[string]string
	}{
		{"defaults", jobs.Config{}, map[string]string{services.JobCompensation: "@every 30s", services.JobExpiry: "@every 1m0s",
			services.JobReconciliation: "@hourly", services.JobDailyStatement: "10 0 * * *"}},
		{"reconciliation off", jobs.Config{ReconcileSpec: jobs.Off, StatementSpec: "5 1 * * *"}, map[string]string{
			services.JobCompensation: "@every 30s", services.JobExpiry: "@every 1m0s", services.JobDailyStatement: "5 1 * * *"}},
		{"both off", jobs.Config{ReconcileSpec: jobs.Off, StatementSpec: jobs.Off}, map[string]string{
			services.JobCompensation: "@every 30s", services.JobExpiry: "@every 1m0s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sched, err := jobs.New(svc.JobRuns, tt.give)
			must(t, err)
			if got := sched.Schedules(); !maps.Equal(got, tt.want) {
				t.Fatalf("schedules %v, want %v", got, tt.want)
			}
		})
	}
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	var se *services.Error
	if !errors.As(err, &se) || se.Code != code {
		t.Fatalf("want error %s, got %v", code, err)
	}
}

// slowLookups loses every Fulfil's answer, as lostAnswers does, and holds
// each Lookup until release is closed or its context ends, so a
// compensation run lasts as long as a test wants.
type slowLookups struct {
	lostAnswers
	entered chan struct{}
	release chan struct{}
}

func (s slowLookups) Lookup(ctx context.Context, merchantID int64, redeemNo string) (services.LookupResult, error) {
	s.entered <- struct{}{}
	select {
	case <-s.release:
		return s.lostAnswers.Lookup(ctx, merchantID, redeemNo)
	case <-ctx.Done():
		return services.LookupResult{}, ctx.Err()
	}
}

// stuckRedemption leaves one redemption of a new merchant PROCESSING past
// its hold (the services' fulfiller must lose its answer), for compensation
// to resolve, and returns the merchant's administrator and the coupon's code.
func stuckRedemption(t *testing.T, svc *services.Services, clk *clock, merchant string) (services.Actor, string) {
	t.Helper()
	ctx := context.Background()
	m, err := svc.Merchants.Create(ctx, merchant, merchant, "")
	must(t, err)
	admin := services.SystemActor(m.ID)
	st, err := svc.Stores.Create(ctx, admin, services.CreateStoreInput{Code: "S1", Name: "One"})
	must(t, err)
	camp, err := svc.Campaigns.Create(ctx, admin, services.CreateCampaignInput{Name: "c", Type: models.CampaignCash,
		Value: 100, TotalQuantity: 10, ValidFrom: clk.Now().Add(-time.Hour), ValidTo: clk.Now().Add(time.Hour * 24)})
	must(t, err)
	issued, err := svc.Campaigns.IssueCoupons(ctx, admin, services.IssueInput{CampaignID: camp.ID, Count: 1})
	must(t, err)
	f, err := svc.Redemptions.Redeem(ctx, admin, services.RedeemInput{Code: issued.Codes[0], StoreID: st.ID,
		RequestID: "lost", OrderAmount: 500})
	must(t, err)
	if f.Status != models.FlowProcessing {
		t.Fatalf("redeem %s", f.Status)
	}
	clk.Advance(3 * time.Minute)
	return admin, issued.Codes[0]
}

// A run that RunNow started outlives the request that started it: RunNow
// returns it RUNNING after its wait, the request's end does not cancel it,
// it records how it ended, and Stop waits for it; when Stop gives up
// waiting, the run is cancelled and recorded as failed.
func TestRunNowOutlivesItsRequest(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		for _, giveUp := range []bool{false, true} {
			clk := &clock{t: time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)}
			slow := slowLookups{entered: make(chan struct{}, 1), release: make(chan struct{})}
			slow.lostAnswers = lostAnswers{services.NewBuiltinFulfiller(db, clk.Now)}
			svc := services.New(db, services.Options{Now: clk.Now, Fulfiller: slow})
			sched, err := jobs.New(svc.JobRuns, jobs.Config{Now: clk.Now, RunNowWait: 10 * time.Millisecond})
			must(t, err)
			admin, _ := stuckRedemption(t, svc, clk, fmt.Sprintf("m%v", giveUp))
			req, endRequest := context.WithCancel(services.WithActor(context.Background(), admin))
			run, err := sched.RunNow(req, services.JobCompensation)
			must(t, err)
			if run.Status != models.JobRunning || run.FinishedAt != nil {
				t.Fatalf("RunNow returned %+v before the run ended", run)
			}
			<-slow.entered
			endRequest()
			stopped := make(chan error, 1)
			stopCtx, cancelStop := context.WithCancel(context.Background())
			go func() { stopped <- sched.Stop(stopCtx) }()
			select {
			case err := <-stopped:
				t.Fatalf("Stop returned %v while a run was going", err)
			case <-time.After(50 * time.Millisecond):
			}
			want, counts := models.JobSucceeded, map[string]int64{"claimed": 1, "released": 1}
			if giveUp {
				cancelStop()
				if err := <-stopped; !errors.Is(err, context.Canceled) {
					t.Fatalf("Stop after giving up: %v", err)
				}
				want, counts = models.JobFailed, nil
			} else {
				close(slow.release)
				must(t, <-stopped)
			}
			cancelStop()
			// Stop returns once the run recorded its end (it waits for the
			// run to record it, and after giving up, gives it a moment to).
			got := finishedRun(t, svc, admin, run.ID)
			if got.Status != want {
				t.Fatalf("giveUp %v: run ended %s (%v)", giveUp, got.Status, got.Error)
			}
			if counts != nil {
				var c map[string]int64
				must(t, json.Unmarshal([]byte(got.Counts), &c))
				for k, v := range counts {
					if c[k] != v {
						t.Fatalf("counts %v, want %s %d", c, k, v)
					}
				}
			}
		}
	})
}

// finishedRun returns the actor's compensation run id, which must have
// recorded its end.
func finishedRun(t *testing.T, svc *services.Services, admin services.Actor, id int64) services.JobRun {
	t.Helper()
	p, err := svc.JobRuns.List(context.Background(), admin, services.JobRunFilter{Job: services.JobCompensation}, services.PageArgs{First: 10})
	must(t, err)
	for _, r := range p.Items {
		if r.ID == id && r.FinishedAt != nil {
			return r
		}
	}
	t.Fatalf("run %d has not recorded its end when Stop returned: %+v", id, p.Items)
	return services.JobRun{}
}
