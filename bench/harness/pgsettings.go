package harness

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// PGSetting is one PostgreSQL server setting, as ALTER SYSTEM takes it.
type PGSetting struct{ Name, Value string }

// WriteHeavySettings are the settings the benchmark runs PostgreSQL with, the
// ones docs/operations.md ("PostgreSQL for a write-heavy till") gives
// operators. PostgreSQL's defaults start a checkpoint after about 540 MB of
// WAL (max_wal_size 1 GB); a redemption writes about 4.7 kB, so at 2,900
// redemptions a second one began every 40 s, and for a few seconds after each
// start every first change of a page writes the whole page to the WAL again:
// the commits of those seconds wait for several times the WAL, and the tills'
// p99 rose 5-fold (docs/TUNING.md, "Checkpoints inside a run"). A larger
// max_wal_size leaves checkpoints to checkpoint_timeout, and compressing the
// full pages makes each one's surge smaller. Each is changed with a reload;
// none needs a restart.
var WriteHeavySettings = []PGSetting{
	{"max_wal_size", "8GB"},
	{"wal_compression", "lz4"},
}

// SetPG applies settings to the server with ALTER SYSTEM and a reload, and
// returns restore, which puts back what the server had before: a value set
// by an earlier ALTER SYSTEM, or else the configuration file's. Call restore
// on every path out, failures included; it is idempotent.
func (e Env) SetPG(ctx context.Context, settings []PGSetting) (restore func(context.Context) error, err error) {
	pool, err := pgxpool.New(ctx, e.DBURL(e.AdminDB, 0))
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	// What ALTER SYSTEM had set before, to set again on restore.
	prior := map[string]string{}
	for _, s := range settings {
		var v string
		var auto bool
		err := pool.QueryRow(ctx, `SELECT setting || coalesce(unit, ''), coalesce(sourcefile LIKE '%postgresql.auto.conf', false)
FROM pg_settings WHERE name = $1`, s.Name).Scan(&v, &auto)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", s.Name, err)
		}
		if auto {
			prior[s.Name] = v
		}
	}
	done := false
	restore = func(ctx context.Context) error {
		if done {
			return nil
		}
		pool, err := pgxpool.New(ctx, e.DBURL(e.AdminDB, 0))
		if err != nil {
			return err
		}
		defer pool.Close()
		var q []string
		for _, s := range settings {
			if v, ok := prior[s.Name]; ok {
				q = append(q, fmt.Sprintf("ALTER SYSTEM SET %s = '%s'", s.Name, v))
			} else {
				q = append(q, "ALTER SYSTEM RESET "+s.Name)
			}
		}
		if err := alterSystem(ctx, pool, q); err != nil {
			return err
		}
		done = true
		return nil
	}
	var q []string
	for _, s := range settings {
		q = append(q, fmt.Sprintf("ALTER SYSTEM SET %s = '%s'", s.Name, s.Value))
	}
	if err := alterSystem(ctx, pool, q); err != nil {
		_ = restore(context.WithoutCancel(ctx))
		return nil, err
	}
	return restore, nil
}

// alterSystem runs each ALTER SYSTEM statement of q on its own (none may run
// in a transaction block) and reloads the configuration.
func alterSystem(ctx context.Context, pool *pgxpool.Pool, q []string) error {
	for _, s := range append(q, "SELECT pg_reload_conf()") {
		if _, err := pool.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// PGSettingsText reads settings' values as the server now has them, for a
// report: "max_wal_size=8GB, wal_compression=lz4".
func (e Env) PGSettingsText(ctx context.Context, names ...string) string {
	pool, err := pgxpool.New(ctx, e.DBURL(e.AdminDB, 0))
	if err != nil {
		return ""
	}
	defer pool.Close()
	var out []string
	for _, n := range names {
		var v string
		if pool.QueryRow(ctx, "SELECT current_setting($1)", n).Scan(&v) == nil {
			out = append(out, n+"="+v)
		}
	}
	return strings.Join(out, ", ")
}
