package models

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/libtnb/sqlite"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
)

// Dialect names the database family a *gorm.DB talks to.
type Dialect string

// The dialects coupond runs on.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// DefaultSQLitePath is the embedded database file used when no URL is given.
const DefaultSQLitePath = "coupond.db"

// OpenOptions tunes Open. The zero value is usable.
type OpenOptions struct {
	// MaxOpenConns caps the connection pool; 0 picks a default per dialect.
	MaxOpenConns int
	// Logger receives slow-query and error logs; nil discards them.
	Logger *slog.Logger
	// Warm opens every connection of the pool before Open returns, for a
	// server, whose first burst of requests should not wait for them.
	Warm bool
	// QueryExecMode is pgx's default_query_exec_mode for a PostgreSQL URL
	// that does not set it: "" keeps pgx's default (cache_statement, named
	// prepared statements per connection); cache_describe, describe_exec,
	// exec or simple_protocol use no named prepared statement, as a pooler
	// in transaction mode (pgbouncer 1.18) needs. See QueryExecModes.
	QueryExecMode string
}

// QueryExecModes are the values of pgx's default_query_exec_mode.
var QueryExecModes = []string{"cache_statement", "cache_describe", "describe_exec", "exec", "simple_protocol"}

// withQueryExecMode sets default_query_exec_mode on a PostgreSQL URL that
// does not set it already.
func withQueryExecMode(databaseURL, mode string) (string, error) {
	if mode == "" {
		return databaseURL, nil
	}
	if !slices.Contains(QueryExecModes, mode) {
		return "", fmt.Errorf("query exec mode %q: want one of %s", mode, strings.Join(QueryExecModes, ", "))
	}
	u, err := url.Parse(databaseURL)
	if err != nil {
		return "", fmt.Errorf("database url: %w", err)
	}
	q := u.Query()
	if q.Has("default_query_exec_mode") {
		return databaseURL, nil
	}
	q.Set("default_query_exec_mode", mode)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// DialectOf reports which database a URL selects: a postgres:// or postgresql://
// URL selects PostgreSQL, anything else (a path, a sqlite:// or file: URL, or the
// empty string) the embedded SQLite file.
func DialectOf(databaseURL string) Dialect {
	if strings.HasPrefix(databaseURL, "postgres://") || strings.HasPrefix(databaseURL, "postgresql://") {
		return Postgres
	}
	return SQLite
}

// Open connects to the database named by databaseURL (see DialectOf) with the
// settings coupond relies on: translated errors, no implicit transactions, and for
// SQLite WAL, a busy timeout and BEGIN IMMEDIATE transactions, without which
// concurrent writers fail with SQLITE_BUSY instead of queueing. It fails when the
// database cannot be reached.
func Open(ctx context.Context, databaseURL string, opts OpenOptions) (*gorm.DB, error) {
	cfg := &gorm.Config{
		TranslateError:         true,
		SkipDefaultTransaction: true,
		NowFunc:                func() time.Time { return time.Now().UTC() },
	}
	var (
		dial     gorm.Dialector
		maxConns = opts.MaxOpenConns
	)
	switch DialectOf(databaseURL) {
	case Postgres:
		u, err := withQueryExecMode(databaseURL, opts.QueryExecMode)
		if err != nil {
			return nil, err
		}
		dial = postgres.Open(u)
		if maxConns == 0 {
			// Measured with pgbench on 2 cores: throughput peaks near 8
			// connections and falls beyond 32; size near 4x cores.
			maxConns = 8
		}
	default:
		dsn, err := sqliteDSN(databaseURL)
		if err != nil {
			return nil, err
		}
		dial = sqlite.Open(dsn)
		if maxConns == 0 {
			maxConns = 8
		}
	}
	cfg.Logger = newGormLogger(opts.Logger, dial)
	db, err := gorm.Open(dial, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	sqlDB.SetMaxOpenConns(maxConns)
	sqlDB.SetMaxIdleConns(maxConns)
	// Idle connections are kept: a flash sale after a quiet hour must not
	// start by waiting for PostgreSQL to fork backends. Each is replaced after
	// an hour, so no backend lives on with caches grown for ever.
	sqlDB.SetConnMaxLifetime(time.Hour)
	warmConns := 1
	if opts.Warm {
		warmConns = maxConns
	}
	if err := warm(ctx, sqlDB, warmConns); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("ping database: %w", err)
	}
	return db, nil
}

// warm opens n connections of the pool at once and returns them to it, so
// the first burst of requests finds them connected instead of waiting for
// PostgreSQL to start n backends under load.
func warm(ctx context.Context, db *sql.DB, n int) error {
	conns := make([]*sql.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for range n {
		c, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		conns = append(conns, c)
		if err := c.PingContext(ctx); err != nil {
			return err
		}
	}
	return nil
}

// DialectOfDB reports the dialect of an open connection.
func DialectOfDB(db *gorm.DB) Dialect {
	if db.Dialector.Name() == "postgres" {
		return Postgres
	}
	return SQLite
}

// Close closes the pool behind db.
func Close(db *gorm.DB) error {
	sqlDB, err := db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// sqliteDSN turns a path or sqlite:// URL into a driver DSN with the pragmas
// coupond needs. Parameters given by the caller win over the defaults.
//
// Synchronous is FULL by default: in WAL mode NORMAL skips the sync at each
// commit, so a power loss (not a crash of the process) can roll back
// redemptions the API already acknowledged. A caller who accepts that risk
// for speed asks for it with ?_synchronous=NORMAL.
func sqliteDSN(databaseURL string) (string, error) {
	path := strings.TrimPrefix(databaseURL, "sqlite://")
	if path == "" {
		path = DefaultSQLitePath
	}
	var query string
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path, query = path[:i], path[i+1:]
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		return "", fmt.Errorf("sqlite url %q: %w", databaseURL, err)
	}
	setDefault := func(key, value string) {
		if _, ok := values[key]; !ok {
			values[key] = []string{value}
		}
	}
	setDefault("_txlock", "immediate")
	setDefault("_busy_timeout", "10000")
	setDefault("_journal_mode", "WAL")
	setDefault("_synchronous", "FULL")
	setDefault("_foreign_keys", "1")
	return path + "?" + values.Encode(), nil
}
