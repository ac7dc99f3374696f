package models

import (
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// JobRunStatus is the state of one run of a background job.
type JobRunStatus string

// Job run states. A run left RUNNING belongs to a process that died mid-run.
const (
	JobRunning   JobRunStatus = "RUNNING"
	JobSucceeded JobRunStatus = "SUCCEEDED"
	JobFailed    JobRunStatus = "FAILED"
)

// JobRun records one run of a background job: when it ran, what it did (counts,
// a JSON object of named integers) and how it ended. Singleton jobs carry their
// schedule slot, unique per job.
type JobRun struct {
	ID         int64
	Job        string
	Slot       *string
	Node       string
	Status     JobRunStatus
	Counts     string
	Error      *string
	StartedAt  time.Time
	FinishedAt *time.Time
}

// ClaimJobRun inserts a RUNNING run. A run with a slot claims it: when the job
// already has a run for that slot nothing is written and ClaimJobRun reports
// false.
func ClaimJobRun(tx *gorm.DB, run *JobRun) (bool, error) {
	res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(run)
	return res.RowsAffected == 1, res.Error
}

// FinishJobRun records how a RUNNING run ended.
func FinishJobRun(tx *gorm.DB, id int64, status JobRunStatus, counts string, errText *string, now time.Time) error {
	return tx.Exec(`UPDATE job_runs SET status = ?, counts = ?, error = ?, finished_at = ? WHERE id = ? AND status = 'RUNNING'`,
		string(status), counts, errText, now, id).Error
}
