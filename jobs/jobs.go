// Package jobs schedules coupond's background jobs on robfig/cron: the
// compensation of stuck redemptions, hourly reconciliation and the daily
// statement. It only schedules: each job is one services call, which records
// its run. Jobs are safe on every replica at once: compensation claims rows in
// batches, and singleton jobs claim their schedule slot with a unique row, so
// each slot runs once whichever replica fires first.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"coupond/services"
)

// Config configures the scheduler. The zero value of each field picks a
// default.
type Config struct {
	// CompensateEvery is the compensation interval. Default 30 s.
	CompensateEvery time.Duration
	// ExpireEvery is the expiry interval. Default 1 minute.
	ExpireEvery time.Duration
	// ReconcileSpec is the cron spec of reconciliation. Default "@hourly";
	// Off schedules none (runJob, the console and coupond audit still run it).
	ReconcileSpec string
	// StatementSpec is the cron spec of the daily statement. Default
	// "10 0 * * *" (00:10 every day in Location); Off schedules none.
	StatementSpec string
	// Location is the time zone of the cron specs. Default UTC.
	Location *time.Location
	// Timeout bounds one run of any job. Default 10 minutes.
	Timeout time.Duration
	// RunNowWait is how long RunNow waits for its run to end before it
	// returns the run RUNNING and lets it go on. Default 20 s, well inside
	// the server's write timeout.
	RunNowWait time.Duration
	// Now is the clock that names schedule slots. Default time.Now.
	Now func() time.Time
	// Logger receives one line per run; nil discards them.
	Logger *slog.Logger
	// OnRun, if set, is called after every run that was not skipped, for
	// metrics: the job, how long it took and its error.
	OnRun func(job string, took time.Duration, err error)
}

// Off, as a job's spec, leaves the job off the schedule: an operator who runs
// reconciliation at a quiet hour from another scheduler, or a benchmark that
// measures it in a row of its own, runs it on demand instead.
const Off = "off"

// singletons are the jobs that claim their schedule slot.
var singletons = map[string]bool{services.JobReconciliation: true, services.JobDailyStatement: true}

// Scheduler runs the jobs on their schedules.
type Scheduler struct {
	cfg   Config
	runs  *services.JobRuns
	cron  *cron.Cron
	log   *slog.Logger
	specs map[string]string
	// detached counts RunNow's runs that may outlive their request;
	// abandon ends them when Stop gives up waiting.
	detached sync.WaitGroup
	abandon  context.Context
	giveUp   context.CancelFunc
}

// New returns a scheduler running jobs through runs; Start starts it. It fails on an
// invalid cron spec.
func New(runs *services.JobRuns, cfg Config) (*Scheduler, error) {
	if cfg.CompensateEvery <= 0 {
		cfg.CompensateEvery = 30 * time.Second
	}
	if cfg.ExpireEvery <= 0 {
		cfg.ExpireEvery = time.Minute
	}
	if cfg.ReconcileSpec == "" {
		cfg.ReconcileSpec = "@hourly"
	}
	if cfg.StatementSpec == "" {
		cfg.StatementSpec = "10 0 * * *"
	}
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Minute
	}
	if cfg.RunNowWait <= 0 {
		cfg.RunNowWait = 20 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Scheduler{cfg: cfg, runs: runs, log: cfg.Logger, specs: map[string]string{}}
	s.abandon, s.giveUp = context.WithCancel(context.Background())
	cl := cron.PrintfLogger(slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn))
	s.cron = cron.New(cron.WithLocation(cfg.Location), cron.WithChain(cron.Recover(cl), cron.SkipIfStillRunning(cl)))
	specs := []struct{ job, spec string }{
		{services.JobCompensation, "@every " + cfg.CompensateEvery.String()},
		{services.JobExpiry, "@every " + cfg.ExpireEvery.String()},
		{services.JobReconciliation, cfg.ReconcileSpec},
		{services.JobDailyStatement, cfg.StatementSpec},
	}
	for _, sp := range specs {
		job := sp.job
		if sp.spec == Off {
			continue
		}
		if _, err := s.cron.AddFunc(sp.spec, func() { _, _ = s.Fire(context.Background(), job) }); err != nil {
			return nil, fmt.Errorf("schedule job %s (%q): %w", job, sp.spec, err)
		}
		s.specs[job] = sp.spec
	}
	return s, nil
}

// Schedules returns the cron spec of each scheduled job; a job whose spec is
// Off is not in it.
func (s *Scheduler) Schedules() map[string]string { return maps.Clone(s.specs) }

// Start starts the schedules in the background.
func (s *Scheduler) Start() { s.cron.Start() }

// Stop stops the schedules and waits for running jobs (RunNow's included)
// to finish, or for ctx to end, whichever comes first; it returns ctx's
// error in the second case, after cancelling RunNow's runs and giving them
// a moment to record themselves as failed.
func (s *Scheduler) Stop(ctx context.Context) error {
	cronDone := s.cron.Stop()
	done := make(chan struct{})
	go func() {
		<-cronDone.Done()
		s.detached.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		// Cancelled, RunNow's runs record themselves as failed: give them
		// a moment to, so the list does not show them RUNNING for ever.
		s.giveUp()
		select {
		case <-done:
		case <-time.After(recordGrace):
		}
		return fmt.Errorf("stop jobs: %w", ctx.Err())
	}
}

// recordGrace is how long Stop, having given up on RunNow's runs, waits for
// them to record their end.
const recordGrace = 2 * time.Second

// Slot names the schedule slot of a singleton job fired at t: the minute it
// fired in UTC, which every replica firing the same schedule agrees on.
func Slot(t time.Time) string { return t.UTC().Truncate(time.Minute).Format(time.RFC3339) }

// Fire runs job as its schedule does at this moment: a singleton job first
// claims the current slot and is skipped, returning (nil, nil), when another
// run already has it. The run is bounded by the configured timeout.
func (s *Scheduler) Fire(ctx context.Context, job string) (*services.JobRun, error) {
	slot := ""
	if singletons[job] {
		slot = Slot(s.cfg.Now())
	}
	run, err := s.run(ctx, job, slot)
	if errors.Is(err, services.ErrSlotTaken) {
		s.log.DebugContext(ctx, "job slot taken elsewhere", "job", job, "slot", slot)
		return nil, nil
	}
	return run, err
}

// RunNow runs job immediately for the actor carried by ctx (see
// services.WithActor), who must be an administrator; it claims no slot. It is
// the runJob mutation. It waits for the run to end for at most
// Config.RunNowWait, or until ctx ends: a run still going then is returned
// RUNNING and goes on in the background, bounded by Config.Timeout, whoever
// was waiting for it; the job runs list shows how it ended, and Stop waits
// for it. A reconciliation that yields to the tills over a large ledger
// takes minutes, longer than a request may.
func (s *Scheduler) RunNow(ctx context.Context, job string) (*services.JobRun, error) {
	actor := services.ActorFrom(ctx)
	start := time.Now()
	// The run keeps the request's values (the actor, its trace) but not its
	// end; it ends at the timeout, or when Stop gives up waiting for it.
	jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Timeout)
	unhook := context.AfterFunc(s.abandon, cancel)
	s.detached.Add(1)
	run, done, err := s.runs.Start(jctx, actor, job)
	if err != nil {
		unhook()
		cancel()
		s.detached.Done()
		s.report(ctx, job, nil, start, err)
		return nil, err
	}
	ended := make(chan services.JobOutcome, 1)
	go func() {
		defer s.detached.Done()
		defer cancel()
		defer unhook()
		out := <-done
		s.report(jctx, job, out.Run, start, out.Err)
		ended <- out
	}()
	wait := time.NewTimer(s.cfg.RunNowWait)
	defer wait.Stop()
	select {
	case out := <-ended:
		return out.Run, out.Err
	case <-wait.C:
	case <-ctx.Done():
	}
	s.log.InfoContext(ctx, "job goes on in the background", "job", job, "run", run.ID)
	return run, nil
}

func (s *Scheduler) run(ctx context.Context, job, slot string) (*services.JobRun, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	start := time.Now()
	run, err := s.runs.RunJob(ctx, job, slot)
	if !errors.Is(err, services.ErrSlotTaken) {
		s.report(ctx, job, run, start, err)
	}
	return run, err
}

func (s *Scheduler) report(ctx context.Context, job string, run *services.JobRun, start time.Time, err error) {
	took := time.Since(start)
	if s.cfg.OnRun != nil && run != nil {
		s.cfg.OnRun(job, took, err)
	}
	if err != nil {
		s.log.ErrorContext(ctx, "job failed", "job", job, "took", took, "err", err)
		return
	}
	if run != nil {
		s.log.InfoContext(ctx, "job ran", "job", job, "run", run.ID, "took", took, "counts", run.Counts)
	}
}
