package models

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"sync/atomic"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/plugin/dbresolver"
)

// readResolver names the dbresolver configuration that holds the read
// replicas. It is no table's name, so dbresolver selects it only for a
// statement that asks for it by name (Reading); every other statement uses
// the global configuration, which has no replicas: reads that are not marked
// go to the primary, whatever dbresolver's default for a SELECT is.
const readResolver = "coupond:read-replicas"

// ReadReplica is a streaming replica of the primary that serves the reads
// marked by Reading.
type ReadReplica struct {
	// Name identifies the replica in logs, metrics and the console:
	// host:port/database, without credentials.
	Name string
	// DB is a pool on the replica alone, for its status.
	DB *gorm.DB
	// serving says whether reads are sent to the replica; shared with the
	// resolver's policy.
	serving *atomic.Bool
}

// Serving reports whether reads marked by Reading may go to the replica.
// A replica serves from OpenReadReplicas on, until SetServing(false).
func (r ReadReplica) Serving() bool { return r.serving == nil || r.serving.Load() }

// SetServing takes the replica out of the reads marked by Reading (false)
// or puts it back (true); with no replica serving, those reads go to the
// primary. The health check of the services calls it.
func (r ReadReplica) SetServing(ok bool) {
	if r.serving != nil {
		r.serving.Store(ok)
	}
}

// servingPolicy is the read resolver's choice of a connection pool: one of
// the serving replicas at random, or the primary's pool, the last of pools,
// when none serves.
type servingPolicy struct{ serving []*atomic.Bool }

// Resolve picks the pool of a marked read.
func (p servingPolicy) Resolve(pools []gorm.ConnPool) gorm.ConnPool {
	var up [8]int
	ids := up[:0]
	for i, s := range p.serving {
		if s.Load() {
			ids = append(ids, i)
		}
	}
	if len(ids) == 0 {
		return pools[len(pools)-1]
	}
	return pools[ids[rand.IntN(len(ids))]]
}

// OpenReadReplicas opens the PostgreSQL replicas at urls, checks each against
// the primary and registers them for the reads marked by Reading. A replica
// that cannot be reached or whose schema is at another migration version than
// the primary's (after waitVersion for it to replay the primary's migrations)
// is an error; one that is not in recovery, and so is no replica of anything,
// is returned in warnings. The caller closes the replicas' pools.
func OpenReadReplicas(ctx context.Context, primary *gorm.DB, urls []string, opts OpenOptions, waitVersion time.Duration) (replicas []ReadReplica, warnings []string, err error) {
	if len(urls) == 0 {
		return nil, nil, nil
	}
	if DialectOfDB(primary) != Postgres {
		return nil, nil, fmt.Errorf("read replicas need a PostgreSQL primary")
	}
	want, err := SchemaVersion(primary.WithContext(ctx))
	if err != nil {
		return nil, nil, fmt.Errorf("primary schema version: %w", err)
	}
	defer func() {
		if err != nil {
			for _, r := range replicas {
				_ = Close(r.DB)
			}
			replicas = nil
		}
	}()
	dialectors := make([]gorm.Dialector, 0, len(urls)+1)
	var policy servingPolicy
	for _, u := range urls {
		name := ReplicaName(u)
		if DialectOf(u) != Postgres {
			return replicas, nil, fmt.Errorf("read replica %s: not a postgres:// URL", name)
		}
		db, err := Open(ctx, u, opts)
		if err != nil {
			return replicas, nil, fmt.Errorf("read replica %s: %w", name, err)
		}
		serving := new(atomic.Bool)
		serving.Store(true)
		policy.serving = append(policy.serving, serving)
		replicas = append(replicas, ReadReplica{Name: name, DB: db, serving: serving})
		got, err := waitSchemaVersion(ctx, db, want, waitVersion)
		if err != nil {
			return replicas, nil, fmt.Errorf("read replica %s: schema version: %w", name, err)
		}
		if got != want {
			return replicas, nil, fmt.Errorf("read replica %s is at schema version %d, the primary at %d: it does not replicate this primary, or has not replayed its migrations yet", name, got, want)
		}
		st, err := ReplicaStatusOf(db.WithContext(ctx))
		if err != nil {
			return replicas, nil, fmt.Errorf("read replica %s: %w", name, err)
		}
		if !st.InRecovery {
			warnings = append(warnings, fmt.Sprintf("read replica %s is not in recovery: it is a primary of its own, and what it serves is not this primary's data", name))
		}
		sqlDB, err := db.DB()
		if err != nil {
			return replicas, nil, err
		}
		dialectors = append(dialectors, postgres.New(postgres.Config{Conn: sqlDB}))
	}
	// The primary's own pool comes last: the policy falls back to it when no
	// replica serves.
	primarySQL, err := primary.DB()
	if err != nil {
		return replicas, nil, err
	}
	dialectors = append(dialectors, postgres.New(postgres.Config{Conn: primarySQL}))
	// The global configuration keeps every statement on the primary; the
	// named one sends the statements marked by Reading to a serving replica.
	resolver := dbresolver.Register(dbresolver.Config{}).
		Register(dbresolver.Config{Replicas: dialectors, Policy: policy}, readResolver)
	if err := primary.Use(resolver); err != nil {
		return replicas, nil, fmt.Errorf("register read replicas: %w", err)
	}
	return replicas, warnings, nil
}

// Reading returns db with its reads sent to a read replica, chosen at random
// per statement among those serving, when OpenReadReplicas registered any,
// and to the primary otherwise or when none serves. Only reads that may be
// stale by the replicas' lag go through it: nothing that decides (a take, an
// idempotency lookup, a quote, an authentication) ever does. It must not start a transaction: the
// transaction would run on a replica.
func Reading(db *gorm.DB) *gorm.DB {
	return db.Clauses(dbresolver.Use(readResolver), dbresolver.Read).Session(&gorm.Session{})
}

// ReplicaName is the host:port/database of a PostgreSQL URL, without
// credentials or parameters.
func ReplicaName(databaseURL string) string {
	u, err := url.Parse(databaseURL)
	if err != nil || u.Host == "" {
		return "replica"
	}
	return u.Host + u.Path
}

// SchemaVersion is the highest migration version applied to the PostgreSQL
// database, 0 when it was never migrated.
func SchemaVersion(db *gorm.DB) (int64, error) {
	var exists bool
	if err := scanRaw(db, &exists, `SELECT to_regclass('goose_db_version') IS NOT NULL`).Error; err != nil || !exists {
		return 0, err
	}
	var v *int64
	if err := scanRaw(db, &v, `SELECT MAX(version_id) FROM goose_db_version WHERE is_applied`).Error; err != nil {
		return 0, err
	}
	if v == nil {
		return 0, nil
	}
	return *v, nil
}

// waitSchemaVersion reads db's schema version until it is want or wait has
// passed, since a replica replays the migrations a primary has just applied
// a moment later.
func waitSchemaVersion(ctx context.Context, db *gorm.DB, want int64, wait time.Duration) (int64, error) {
	deadline := time.Now().Add(wait)
	for {
		got, err := SchemaVersion(db.WithContext(ctx))
		if err != nil || got == want || time.Now().After(deadline) {
			return got, err
		}
		select {
		case <-ctx.Done():
			return got, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ReplicaStatus is what a PostgreSQL server says of its replication.
type ReplicaStatus struct {
	// InRecovery is false on a primary.
	InRecovery bool
	// ReplayPaused is true while replay is paused (pg_wal_replay_pause).
	ReplayPaused bool
	// LagSeconds bounds how old the replica's data may be: 0 when it has
	// replayed all the WAL it received, and otherwise the time since the
	// last transaction it replayed committed on the primary.
	LagSeconds float64
	// LagBytes is the WAL received and not yet replayed.
	LagBytes int64
}

// ReplicaStatusOf asks the server behind db for its replication status.
func ReplicaStatusOf(db *gorm.DB) (ReplicaStatus, error) {
	var st ReplicaStatus
	err := scanRaw(db, &st, `SELECT pg_is_in_recovery() AS in_recovery,
  CASE WHEN pg_is_in_recovery() THEN pg_get_wal_replay_pause_state() <> 'not paused' ELSE false END AS replay_paused,
  CASE WHEN NOT pg_is_in_recovery() OR pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
       ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 0) END::float8 AS lag_seconds,
  CASE WHEN pg_is_in_recovery() THEN COALESCE(pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()), 0)
       ELSE 0 END::bigint AS lag_bytes`).Error
	if err != nil {
		return ReplicaStatus{}, fmt.Errorf("replica status: %w", err)
	}
	return st, nil
}
