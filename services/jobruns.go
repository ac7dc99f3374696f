package services

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"gorm.io/gorm"

	"coupond/errcode"
	"coupond/models"
)

// Background jobs, by the name their runs are recorded under.
const (
	// JobCompensation resolves redemptions stuck in PROCESSING.
	JobCompensation = "compensation"
	// JobReconciliation runs every reconciliation check and writes findings.
	JobReconciliation = "reconciliation"
	// JobDailyStatement stores the previous day's statements of every merchant
	// and books adjustments against closed days; it is a singleton: each schedule slot runs once across replicas.
	JobDailyStatement = "daily-statement"
	// JobExpiry moves UNUSED coupons whose validity ended to EXPIRED.
	JobExpiry = "expiry"
)

// JobRun is the record of one run of a background job, as services hand it to
// their callers: the scheduler, the API, the console and the CLI. A run
// belongs to one merchant (MerchantID), or to the whole installation (0).
type JobRun struct {
	ID         int64
	Job        string
	Slot       *string
	Node       string
	MerchantID int64
	// ParentID links a merchant's share of an installation run to it.
	ParentID   int64
	Status     models.JobRunStatus
	Counts     string
	Error      *string
	StartedAt  time.Time
	FinishedAt *time.Time
}

func jobRunOf(r *models.JobRun) *JobRun {
	out := &JobRun{ID: r.ID, Job: r.Job, Slot: r.Slot, Node: r.Node, Status: r.Status, Counts: r.Counts,
		Error: r.Error, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt}
	if r.MerchantID != nil {
		out.MerchantID = *r.MerchantID
	}
	if r.ParentID != nil {
		out.ParentID = *r.ParentID
	}
	return out
}

// jobResult is what one run of a job did: its counts over everything it
// touched, and the same counts for each merchant it did something for.
type jobResult struct {
	counts     map[string]int64
	byMerchant map[int64]map[string]int64
}

// JobNames lists the jobs RunJob knows, in a stable order.
func JobNames() []string {
	return []string{JobCompensation, JobExpiry, JobReconciliation, JobDailyStatement}
}

// ErrSlotTaken is returned by RunJob when another run, possibly on another
// replica, already claimed the schedule slot; the job did not run.
var ErrSlotTaken = errors.New("job slot already claimed")

// ErrUnknownJob is returned for a job name not in JobNames.
var ErrUnknownJob = &Error{Code: errcode.BadUserInput, Message: "unknown job", Kind: ErrInvalidInput}

// JobRuns runs background jobs and records each run: start, end, counts and
// error, which the console shows.
type JobRuns struct {
	db *gorm.DB
	// read serves the lists: a read replica when there are any, else db.
	read       *gorm.DB
	now        func() time.Time
	node       string
	log        *slog.Logger
	compensate *Compensator
	reconcile  *Reconciler
	statements *Statements
	expiry     *Expirer
}

func newJobRuns(db, read *gorm.DB, now func() time.Time, log *slog.Logger, c *Compensator, r *Reconciler, s *Statements, e *Expirer) *JobRuns {
	node, _ := os.Hostname()
	return &JobRuns{db: db, read: read, now: now, node: fmt.Sprintf("%s:%d", node, os.Getpid()), log: log,
		compensate: c, reconcile: r, statements: s, expiry: e}
}

// RunJob runs one job now over every merchant and records the run as an
// installation run, visible to the operator (CLI, metrics) and to no
// merchant. Each merchant the run did something for (claimed a stuck
// redemption, found a violation, had a statement line) gets a row of its own
// with its own counts, linked to the run; a quiet run writes no merchant
// rows, so the 30-second compensation tick does not write a row per merchant.
// A non-empty slot claims that schedule slot first: when the job already ran
// (or runs) for it, RunJob returns ErrSlotTaken without running. The run is
// returned whether or not the job failed; the job's own error is returned as
// well.
func (j *JobRuns) RunJob(ctx context.Context, job, slot string) (*JobRun, error) {
	return j.run(ctx, job, slot, 0, nil)
}

// run runs job and records it; started, if set, is called with the run
// once its start is recorded, before the job's work begins.
func (j *JobRuns) run(ctx context.Context, job, slot string, merchantID int64, started func(*JobRun)) (*JobRun, error) {
	work, err := j.work(job)
	if err != nil {
		return nil, err
	}
	run := &models.JobRun{Job: job, Node: j.node, Status: models.JobRunning, Counts: "{}", StartedAt: j.now()}
	if slot != "" {
		run.Slot = &slot
	}
	if merchantID != 0 {
		run.MerchantID = &merchantID
	}
	claimed, err := models.ClaimJobRun(j.db.WithContext(ctx), run)
	if err != nil {
		return nil, fmt.Errorf("record start of job %s: %w", job, err)
	}
	if !claimed {
		return nil, fmt.Errorf("job %s slot %s: %w", job, slot, ErrSlotTaken)
	}
	if started != nil {
		started(jobRunOf(run))
	}
	res, runErr := work(ctx, merchantID)
	if runErr != nil {
		runErr = fmt.Errorf("job %s: %w", job, runErr)
	}
	j.finish(ctx, run, res, runErr)
	return jobRunOf(run), runErr
}

// finish records the end of a run and, for an installation run, the
// merchants' shares. It runs detached from ctx, whose deadline may be what
// ended the run.
func (j *JobRuns) finish(ctx context.Context, run *models.JobRun, res jobResult, runErr error) {
	now := j.now()
	run.Status, run.Counts, run.FinishedAt = models.JobSucceeded, countsJSON(res.counts), &now
	if runErr != nil {
		msg := runErr.Error()
		run.Status, run.Error = models.JobFailed, &msg
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	db := j.db.WithContext(dctx)
	if err := models.FinishJobRun(db, run.ID, run.Status, run.Counts, run.Error, now); err != nil {
		j.log.ErrorContext(ctx, "record end of job run", "job", run.Job, "run", run.ID, "err", err)
	}
	if run.MerchantID != nil {
		return
	}
	merchants := make([]int64, 0, len(res.byMerchant))
	for m := range res.byMerchant {
		merchants = append(merchants, m)
	}
	slices.Sort(merchants)
	shares := make([]models.JobRun, 0, len(merchants))
	for _, m := range merchants {
		shares = append(shares, models.JobRun{Job: run.Job, Node: run.Node, MerchantID: &m, ParentID: &run.ID,
			Status: run.Status, Counts: countsJSON(res.byMerchant[m]), Error: run.Error, StartedAt: run.StartedAt,
			FinishedAt: &now})
	}
	if err := models.InsertJobRuns(db, shares); err != nil {
		j.log.ErrorContext(ctx, "record merchants' shares of job run", "job", run.Job, "run", run.ID, "err", err)
	}
}

func countsJSON(counts map[string]int64) string {
	if counts == nil {
		return "{}"
	}
	b, _ := json.Marshal(counts)
	return string(b)
}

// work is the service call of a job: over every merchant when merchantID is
// 0, else over that merchant only.
func (j *JobRuns) work(job string) (func(ctx context.Context, merchantID int64) (jobResult, error), error) {
	switch job {
	case JobCompensation:
		return func(ctx context.Context, m int64) (jobResult, error) { return resultOf(j.compensate.run(ctx, m)) }, nil
	case JobExpiry:
		return func(ctx context.Context, m int64) (jobResult, error) { return resultOf(j.expiry.run(ctx, m)) }, nil
	case JobReconciliation:
		return func(ctx context.Context, m int64) (jobResult, error) { return resultOf(j.reconcile.reconcile(ctx, m)) }, nil
	case JobDailyStatement:
		return func(ctx context.Context, m int64) (jobResult, error) { return resultOf(j.statements.closeDay(ctx, m)) }, nil
	}
	return nil, fmt.Errorf("job %q: %w", job, ErrUnknownJob)
}

// resultOf is the jobResult of a job's result and its merchants' shares.
func resultOf[R interface{ Counts() map[string]int64 }](r R, byMerchant map[int64]*R, err error) (jobResult, error) {
	out := jobResult{counts: r.Counts(), byMerchant: make(map[int64]map[string]int64, len(byMerchant))}
	for m, mr := range byMerchant {
		out.byMerchant[m] = (*mr).Counts()
	}
	return out, err
}

// Trigger runs a job on demand for an administrator (the runJob mutation),
// over the administrator's merchant only, and records it as that merchant's
// run. It claims no slot, so it never collides with scheduled runs. Every run
// it starts is audited as job.run with the run's status and counts.
func (j *JobRuns) Trigger(ctx context.Context, actor Actor, job string) (*JobRun, error) {
	if err := j.canTrigger(actor, job); err != nil {
		return nil, err
	}
	run, runErr := j.run(ctx, job, "", actor.MerchantID, nil)
	return j.audited(ctx, actor, job, run, runErr)
}

// JobOutcome is how a run that Start began ended: the finished run, or nil
// when it could not record its start, and the job's error.
type JobOutcome struct {
	Run *JobRun
	Err error
}

// Start begins a job on demand as Trigger does, but in the background, on
// ctx: it returns once the run is recorded as started, with the run RUNNING,
// and the run's outcome arrives on the returned channel when it ends (the
// channel has room for it, so nobody needs to read it). A caller whose run
// must outlive its request passes a context detached from it
// (context.WithoutCancel) with a deadline of its own. Role and job name are
// checked at once; when the start cannot be recorded, that error is returned
// and no job runs.
func (j *JobRuns) Start(ctx context.Context, actor Actor, job string) (*JobRun, <-chan JobOutcome, error) {
	if err := j.canTrigger(actor, job); err != nil {
		return nil, nil, err
	}
	started := make(chan *JobRun, 1)
	done := make(chan JobOutcome, 1)
	go func() {
		run, runErr := j.run(ctx, job, "", actor.MerchantID, func(r *JobRun) { started <- r })
		run, runErr = j.audited(ctx, actor, job, run, runErr)
		close(started)
		done <- JobOutcome{Run: run, Err: runErr}
	}()
	if run, ok := <-started; ok {
		return run, done, nil
	}
	// The run ended before it started: its start was not recorded.
	out := <-done
	return nil, nil, out.Err
}

func (j *JobRuns) canTrigger(actor Actor, job string) error {
	if err := actor.require(models.RoleAdmin); err != nil {
		return err
	}
	if !slices.Contains(JobNames(), job) {
		return fmt.Errorf("job %q: %w", job, ErrUnknownJob)
	}
	return nil
}

// audited records a run that Trigger or Start ran as the actor's job.run
// audit event, and returns the run and the job's error as they came.
func (j *JobRuns) audited(ctx context.Context, actor Actor, job string, run *JobRun, runErr error) (*JobRun, error) {
	if run == nil {
		return nil, runErr
	}
	// The run is audited after it finished, in a transaction of its own: a job
	// commits many transactions (a batch of claims, a merchant's findings, a
	// day's statement), so there is no one transaction of the change to join.
	// The event says what the run did; the run's row says the same. The audit
	// service is the one every service shares (Reconciler holds it).
	detail := fmt.Sprintf("%s %s %s", job, run.Status, run.Counts)
	db := j.db.WithContext(context.WithoutCancel(ctx))
	if err := j.reconcile.audit.record(db, actor, "job.run", fmt.Sprintf("job_run:%d", run.ID), detail, nil); err != nil {
		return run, errors.Join(runErr, fmt.Errorf("audit run %d of job %s: %w", run.ID, job, err))
	}
	return run, runErr
}

// JobRunFilter narrows List; zero fields do not filter.
type JobRunFilter struct {
	Job    string
	Status models.JobRunStatus
}

// List returns the actor's merchant's job runs, newest first:
// administrators and finance staff. They are the merchant's own runs (runJob)
// and its shares of installation runs, each with the merchant's counts only.
func (j *JobRuns) List(ctx context.Context, actor Actor, f JobRunFilter, p PageArgs) (Page[JobRun], error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance); err != nil {
		return Page[JobRun]{}, err
	}
	return j.list(ctx, actor.MerchantID, f, p)
}

// ListInstallation returns the installation's runs, newest first, or with
// merchantID other than 0 that merchant's; for the operator's CLI, which has
// no token.
func (j *JobRuns) ListInstallation(ctx context.Context, merchantID int64, f JobRunFilter, p PageArgs) (Page[JobRun], error) {
	return j.list(ctx, merchantID, f, p)
}

func (j *JobRuns) list(ctx context.Context, merchantID int64, f JobRunFilter, p PageArgs) (Page[JobRun], error) {
	q := models.MerchantJobRuns(j.read.WithContext(ctx), merchantID, f.Job, f.Status)
	rows, err := paginate[models.JobRun](q, "job_runs", p)
	if err != nil {
		return Page[JobRun]{}, fmt.Errorf("list job runs: %w", err)
	}
	page := Page[JobRun]{HasNextPage: rows.HasNextPage, Items: make([]JobRun, len(rows.Items))}
	for i := range rows.Items {
		page.Items[i] = *jobRunOf(&rows.Items[i])
	}
	return page, nil
}
