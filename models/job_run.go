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
// a JSON object of named integers) and how it ended. A run belongs to one
// merchant (MerchantID), or to the whole installation (nil). An installation
// run writes a child row (ParentID) for each merchant it did something for,
// with that merchant's counts. Singleton jobs carry their schedule slot,
// unique per job.
type JobRun struct {
	ID         int64
	Job        string
	Slot       *string
	Node       string
	MerchantID *int64
	ParentID   *int64
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

// InsertJobRuns writes finished runs (the merchant rows of an installation
// run) with one statement.
func InsertJobRuns(tx *gorm.DB, runs []JobRun) error {
	if len(runs) == 0 {
		return nil
	}
	return tx.Create(&runs).Error
}

// MerchantJobRuns is the query of one merchant's runs, or the
// installation's when merchantID is 0, of job and in status when those are
// not empty, for paging.
func MerchantJobRuns(db *gorm.DB, merchantID int64, job string, status JobRunStatus) *gorm.DB {
	q := db.Model(&JobRun{})
	if merchantID == 0 {
		q = q.Where("merchant_id IS NULL")
	} else {
		q = q.Where("merchant_id = ?", merchantID)
	}
	if job != "" {
		q = q.Where("job = ?", job)
	}
	if status != "" {
		q = q.Where("status = ?", string(status))
	}
	return q
}
