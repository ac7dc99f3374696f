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
	// JobDailyStatement closes the previous day's statements of every merchant;
	// it is a singleton: each schedule slot runs once across replicas.
	JobDailyStatement = "daily-statement"
)

// JobRun is the record of one run of a background job that services hand to
// their callers: the scheduler, the API and the console. It is the job_runs
// row itself, named here so that callers need not know models: jobs only
// schedules service calls and must not depend on the storage layer.
type JobRun = models.JobRun

// JobNames lists the jobs RunJob knows, in a stable order.
func JobNames() []string {
	return []string{JobCompensation, JobReconciliation, JobDailyStatement}
}

// ErrSlotTaken is returned by RunJob when another run, possibly on another
// replica, already claimed the schedule slot; the job did not run.
var ErrSlotTaken = errors.New("job slot already claimed")

// ErrUnknownJob is returned for a job name not in JobNames.
var ErrUnknownJob = &Error{Code: errcode.BadUserInput, Message: "unknown job", Kind: ErrInvalidInput}

// JobRuns runs background jobs and records each run: start, end, counts and
// error, which the console shows.
type JobRuns struct {
	db         *gorm.DB
	now        func() time.Time
	node       string
	log        *slog.Logger
	compensate *Compensator
	reconcile  *Reconciler
	statements *Statements
}

func newJobRuns(db *gorm.DB, now func() time.Time, log *slog.Logger, c *Compensator, r *Reconciler, s *Statements) *JobRuns {
	node, _ := os.Hostname()
	return &JobRuns{db: db, now: now, node: fmt.Sprintf("%s:%d", node, os.Getpid()), log: log,
		compensate: c, reconcile: r, statements: s}
}

// RunJob runs one job now and records the run. A non-empty slot claims that
// schedule slot first: when the job already ran (or runs) for it, RunJob returns
// ErrSlotTaken without running. The run row is returned whether or not the job
// failed; the job's own error is returned as well.
func (j *JobRuns) RunJob(ctx context.Context, job, slot string) (*JobRun, error) {
	work, err := j.work(job)
	if err != nil {
		return nil, err
	}
	run := &JobRun{Job: job, Node: j.node, Status: models.JobRunning, Counts: "{}", StartedAt: j.now()}
	if slot != "" {
		run.Slot = &slot
	}
	claimed, err := models.ClaimJobRun(j.db.WithContext(ctx), run)
	if err != nil {
		return nil, fmt.Errorf("record start of job %s: %w", job, err)
	}
	if !claimed {
		return nil, fmt.Errorf("job %s slot %s: %w", job, slot, ErrSlotTaken)
	}
	counts, runErr := work(ctx)
	if runErr != nil {
		runErr = fmt.Errorf("job %s: %w", job, runErr)
	}
	j.finish(ctx, run, counts, runErr)
	return run, runErr
}

// finish records the end of a run. It runs detached from ctx, whose deadline
// may be what ended the run.
func (j *JobRuns) finish(ctx context.Context, run *JobRun, counts map[string]int64, runErr error) {
	b, _ := json.Marshal(counts)
	if counts == nil {
		b = []byte("{}")
	}
	now := j.now()
	run.Status, run.Counts, run.FinishedAt = models.JobSucceeded, string(b), &now
	if runErr != nil {
		msg := runErr.Error()
		run.Status, run.Error = models.JobFailed, &msg
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := models.FinishJobRun(j.db.WithContext(dctx), run.ID, run.Status, run.Counts, run.Error, now); err != nil {
		j.log.ErrorContext(ctx, "record end of job run", "job", run.Job, "run", run.ID, "err", err)
	}
}

func (j *JobRuns) work(job string) (func(context.Context) (map[string]int64, error), error) {
	switch job {
	case JobCompensation:
		return func(ctx context.Context) (map[string]int64, error) {
			r, err := j.compensate.Run(ctx)
			return r.Counts(), err
		}, nil
	case JobReconciliation:
		return func(ctx context.Context) (map[string]int64, error) {
			r, err := j.reconcile.Reconcile(ctx)
			return r.Counts(), err
		}, nil
	case JobDailyStatement:
		return func(ctx context.Context) (map[string]int64, error) {
			r, err := j.statements.CloseDay(ctx)
			return r.Counts(), err
		}, nil
	}
	return nil, fmt.Errorf("job %q: %w", job, ErrUnknownJob)
}

// Trigger runs a job on demand for an administrator (the runJob mutation). It
// claims no slot, so it never collides with scheduled runs.
func (j *JobRuns) Trigger(ctx context.Context, actor Actor, job string) (*JobRun, error) {
	if err := actor.require(models.RoleAdmin); err != nil {
		return nil, err
	}
	if !slices.Contains(JobNames(), job) {
		return nil, fmt.Errorf("job %q: %w", job, ErrUnknownJob)
	}
	return j.RunJob(ctx, job, "")
}

// JobRunFilter narrows List; zero fields do not filter.
type JobRunFilter struct {
	Job    string
	Status models.JobRunStatus
}

// List returns job runs, newest first; administrators and finance staff. Runs
// are not per merchant: the jobs work across all merchants and record counts
// only.
func (j *JobRuns) List(ctx context.Context, actor Actor, f JobRunFilter, p PageArgs) (Page[JobRun], error) {
	if err := actor.require(models.RoleAdmin, models.RoleFinance); err != nil {
		return Page[JobRun]{}, err
	}
	q := j.db.WithContext(ctx).Model(&JobRun{})
	if f.Job != "" {
		q = q.Where("job = ?", f.Job)
	}
	if f.Status != "" {
		q = q.Where("status = ?", string(f.Status))
	}
	page, err := paginate[JobRun](q, "job_runs", p)
	if err != nil {
		return page, fmt.Errorf("list job runs: %w", err)
	}
	return page, nil
}
