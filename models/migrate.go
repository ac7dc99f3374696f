package models

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"gorm.io/gorm"
)

//go:embed migrations
var migrations embed.FS

func migrationProvider(db *gorm.DB) (*goose.Provider, error) {
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	dialect := DialectOfDB(db)
	dir, err := fs.Sub(migrations, "migrations/"+string(dialect))
	if err != nil {
		return nil, err
	}
	var opts []goose.ProviderOption
	gooseDialect := goose.DialectSQLite3
	if dialect == Postgres {
		gooseDialect = goose.DialectPostgres
		// Several replicas may start at once; only one migrates.
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	if dialect == SQLite {
		opts = append(opts, goose.WithGoMigrations(sqliteGoMigrations()...))
	}
	return goose.NewProvider(gooseDialect, sqlDB, dir, opts...)
}

// Migrate applies every pending embedded migration and returns the versions it
// applied. It is safe to call from several processes at once on PostgreSQL.
// When nothing is pending it takes no lock: the migration lock is a
// session-level advisory lock, which a pooler in transaction mode (pgbouncer)
// may take and release on different server connections, so a server started
// through one only migrates when it must (and the operator runs coupond
// migrate directly against PostgreSQL before an upgrade).
func Migrate(ctx context.Context, db *gorm.DB) ([]int64, error) {
	p, err := migrationProvider(db)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	if pending, err := p.HasPending(ctx); err == nil && !pending {
		return nil, nil
	}
	results, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	applied := make([]int64, 0, len(results))
	for _, r := range results {
		applied = append(applied, r.Source.Version)
	}
	return applied, nil
}

// MigrationsPending reports whether the database is behind the binary's
// migrations; readiness checks use it.
func MigrationsPending(ctx context.Context, db *gorm.DB) (bool, error) {
	p, err := migrationProvider(db)
	if err != nil {
		return false, err
	}
	return p.HasPending(ctx)
}
