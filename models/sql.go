package models

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
)

// placeholders is a parenthesised list of n "?" placeholders.
func placeholders(n int) string {
	return "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
}

// translate maps a driver error to GORM's (gorm.ErrDuplicatedKey, ...), which
// TranslateError does for Exec and Create but not for Raw(...).Scan.
func translate(tx *gorm.DB, err error) error {
	if t, ok := tx.Dialector.(gorm.ErrorTranslator); ok {
		return t.Translate(err)
	}
	return err
}

// scanRows runs the query tx and scans its rows into dest, as tx.Scan(dest)
// does, with the same errors and RowsAffected, less one cost: GORM's Scan logs
// through a recorder that renders every statement with its arguments
// (logger.ExplainSQL, a regexp pass over the statement and one formatted
// value per argument) whether or not anything is logged. For a batch of 200
// rejected flows that is 4,600 arguments, and in bursts of 1,000 redemptions
// of one coupon it took a tenth of the server's CPU. Through scanRows the
// statement reaches the database's logger like any other, which renders only
// what it writes: a slow statement or an error. Every Scan of models goes
// through it.
func scanRows(tx *gorm.DB, dest any) *gorm.DB {
	rows, err := tx.Rows()
	if err != nil {
		return tx
	}
	defer func() {
		if err := rows.Close(); err != nil {
			_ = tx.AddError(err)
		}
	}()
	if rows.Next() {
		_ = tx.ScanRows(rows, dest)
	} else {
		tx.RowsAffected = 0
		_ = tx.AddError(rows.Err())
	}
	return tx
}

// scanRaw is scanRows of the raw statement q with args on db: what
// db.Raw(q, args...).Scan(dest) answers.
func scanRaw(db *gorm.DB, dest any, q string, args ...any) *gorm.DB {
	return scanRows(db.Raw(q, args...), dest)
}

// IDRangeTables are the tables IDRange walks: a merchant's coupons, orders
// and campaigns, each keyed by (merchant_id, id).
var IDRangeTables = map[string]bool{"coupons": true, "orders": true, "campaigns": true}

// IDRange returns the smallest id of merchantID's rows in table and one past
// the largest, from the table's (merchant_id, id) key; ok is false when the
// merchant has none. table must be one of IDRangeTables.
func IDRange(db *gorm.DB, table string, merchantID int64) (lo, hi int64, ok bool, err error) {
	if !IDRangeTables[table] {
		return 0, 0, false, fmt.Errorf("id range of %q: not a merchant table", table)
	}
	var r struct{ Lo, Hi *int64 }
	if err := scanRaw(db, &r, "SELECT MIN(id) AS lo, MAX(id) AS hi FROM "+table+" WHERE merchant_id = ?", merchantID).Error; err != nil {
		return 0, 0, false, fmt.Errorf("id range of %s: %w", table, err)
	}
	if r.Lo == nil || r.Hi == nil {
		return 0, 0, false, nil
	}
	return *r.Lo, *r.Hi + 1, true, nil
}

// IDAfter returns the id n rows past from among merchantID's rows of table
// in id order: [from, id) holds n of them. ok is false when n or fewer
// remain at or after from. It walks the table's (merchant_id, id) key, so a
// batch of n rows costs the same whether the merchant's ids are dense or
// spread among other merchants'. table must be one of IDRangeTables.
func IDAfter(db *gorm.DB, table string, merchantID, from int64, n int) (id int64, ok bool, err error) {
	if !IDRangeTables[table] {
		return 0, false, fmt.Errorf("id after in %q: not a merchant table", table)
	}
	var ids []int64
	if err := scanRaw(db, &ids, "SELECT id FROM "+table+" WHERE merchant_id = ? AND id >= ? ORDER BY merchant_id, id LIMIT 1 OFFSET ?",
		merchantID, from, n).Error; err != nil {
		return 0, false, fmt.Errorf("id after in %s: %w", table, err)
	}
	if len(ids) == 0 {
		return 0, false, nil
	}
	return ids[0], true, nil
}

// AnalyzeStale runs ANALYZE on each of tables (PostgreSQL) whose rows changed
// since it was last analyzed exceed share of its live rows, and 1,000, as
// pg_stat_user_tables counts them. The share is cast to double precision:
// a bare parameter times a bigint is typed bigint, which lost any share
// under one and made every 1,000 changes stale. Autovacuum waits for 10% of
// a table to change; a merchant that grew by less than that since (a flash sale on a
// large ledger) is still estimated at a handful of rows, and plans that
// filter by merchant go wrong. Each ANALYZE is paced (analyzeCostDelay).
// Without the privilege to analyze a table
// PostgreSQL warns and skips it. A table that a vacuum holds (autovacuum
// analyzes it then too) is skipped after analyzeLockWait rather than waited
// for; skipped returns those.
func AnalyzeStale(db *gorm.DB, tables []string, share float64) (skipped []string, err error) {
	var stale []string
	if err := scanRaw(db, &stale, `SELECT relname FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname IN ?
  AND n_mod_since_analyze > GREATEST(1000, CAST(? AS double precision) * n_live_tup) ORDER BY relname`, tables, share).Error; err != nil {
		return nil, fmt.Errorf("stale statistics: %w", err)
	}
	for _, t := range stale {
		err := db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec("SET LOCAL lock_timeout = " + analyzeLockWait).Error; err != nil {
				return err
			}
			if err := tx.Exec("SET LOCAL vacuum_cost_delay = " + analyzeCostDelay).Error; err != nil {
				return err
			}
			return tx.Exec(`ANALYZE "` + strings.ReplaceAll(t, `"`, `""`) + `"`).Error
		})
		var pgErr *pgconn.PgError
		switch {
		case errors.As(err, &pgErr) && pgErr.Code == "55P03": // lock_not_available
			skipped = append(skipped, t)
		case err != nil:
			return skipped, fmt.Errorf("analyze %s: %w", t, err)
		}
	}
	return skipped, nil
}

// analyzeLockWait bounds how long AnalyzeStale waits for a table's lock.
const analyzeLockWait = "'2s'"

// analyzeCostDelay paces AnalyzeStale's ANALYZEs as autovacuum paces its
// own: a rest of 2 ms after each vacuum_cost_limit's worth of pages read.
// Unpaced, the ANALYZEs of a ledger of millions of rows held a core of the
// database for a second, 150-300 ms a table, and the tills beside them
// lost their p99 for that second (docs/TUNING.md).
const analyzeCostDelay = "'2ms'"

// BatchSize tells a batched read how many rows its next query reads; it is
// asked before every query, so a reader may change pace as it goes.
type BatchSize func() int

// Fixed is the BatchSize of n rows every time.
func Fixed(n int) BatchSize { return func() int { return n } }

// ReadSerial runs fn, a read, in a read-only transaction of db in which
// PostgreSQL plans no parallel query (on SQLite fn runs on db as it is). For
// the batches of exports and of reconciliation beside the tills: the planner
// prices a LIMIT over a large keyset range as a slice of the whole scan and
// often picks a Gather Merge of two workers for it. On a ledger of a million
// rows an export's 10,000-row batch then took 120 ms and three processes
// instead of 40 ms and one, which on a small machine takes the cores the
// tills run on. SET LOCAL ends with the transaction, so no setting outlives
// it on a pooled connection (or, through pgbouncer, on a server connection
// another client gets next).
func ReadSerial(db *gorm.DB, fn func(tx *gorm.DB) error) error {
	if DialectOfDB(db) != Postgres {
		return fn(db)
	}
	return db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SET LOCAL max_parallel_workers_per_gather = 0").Error; err != nil {
			return err
		}
		return fn(tx)
	}, &sql.TxOptions{ReadOnly: true})
}
