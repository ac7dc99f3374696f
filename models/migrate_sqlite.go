package models

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/pressly/goose/v3"
)

// sqliteGoMigrations are the SQLite migrations SQL alone cannot write:
// SQLite changes a CHECK constraint only by rebuilding the table, with
// foreign keys off on the connection that does it, which goose's SQL
// migrations (run in a transaction, on any connection of the pool) cannot
// arrange. PostgreSQL has the same versions as SQL files.
func sqliteGoMigrations() []*goose.Migration {
	statuses := func(extra string) string {
		return "'UNUSED', 'REDEEMING', 'REDEEMED', 'REFUNDED', 'EXPIRED'" + extra
	}
	return []*goose.Migration{
		goose.NewGoMigration(10,
			&goose.GoFunc{RunDB: func(ctx context.Context, db *sql.DB) error {
				return rebuildSQLiteTable(ctx, db, "coupons", "("+statuses("")+")", "("+statuses(", 'VOIDED'")+")")
			}},
			&goose.GoFunc{RunDB: func(ctx context.Context, db *sql.DB) error {
				return rebuildSQLiteTable(ctx, db, "coupons", "("+statuses(", 'VOIDED'")+")", "("+statuses("")+")")
			}}),
		// 15: imported codes (campaigns.code_source) and the APP token role,
		// as postgres/00015_imported_codes_app_role.sql; the column is added
		// in the rebuild's transaction, so the version applies whole or not.
		goose.NewGoMigration(15,
			&goose.GoFunc{RunDB: func(ctx context.Context, db *sql.DB) error {
				return rebuildSQLiteTable(ctx, db, "api_tokens", "('ADMIN', 'CLERK', 'FINANCE')", "('ADMIN', 'CLERK', 'FINANCE', 'APP')",
					`ALTER TABLE campaigns ADD COLUMN code_source TEXT NOT NULL DEFAULT 'GENERATED'
    CHECK (code_source IN ('GENERATED', 'IMPORTED'))`)
			}},
			&goose.GoFunc{RunDB: func(ctx context.Context, db *sql.DB) error {
				return rebuildSQLiteTable(ctx, db, "api_tokens", "('ADMIN', 'CLERK', 'FINANCE', 'APP')", "('ADMIN', 'CLERK', 'FINANCE')",
					"ALTER TABLE campaigns DROP COLUMN code_source")
			}}),
	}
}

// rebuildSQLiteTable rewrites table's definition, replacing old by new in
// its CREATE statement, by SQLite's own procedure for schema changes ALTER
// TABLE cannot make (https://sqlite.org/lang_altertable.html, "Making Other
// Kinds Of Table Schema Changes"): on one connection with foreign keys off,
// in one transaction, create the new table, copy the rows, drop the old one,
// rename the new one, recreate the indexes and triggers, and check every
// foreign key before committing. The statements of also run in that
// transaction, after the rebuild.
func rebuildSQLiteTable(ctx context.Context, db *sql.DB, table, old, new string, also ...string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
		return err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA foreign_keys = ON") //nolint:errcheck // the connection closes next
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	var create string
	if err := tx.QueryRowContext(ctx, "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", table).Scan(&create); err != nil {
		return fmt.Errorf("read %s: %w", table, err)
	}
	if !strings.Contains(create, old) {
		return fmt.Errorf("rebuild %s: its definition does not contain %s", table, old)
	}
	tmp := table + "_rebuilt"
	// The name may be quoted, as SQLite writes it after a rename.
	open := strings.IndexByte(create, '(')
	if open < 0 || !strings.HasPrefix(create, "CREATE TABLE ") ||
		strings.Trim(strings.TrimSpace(create[len("CREATE TABLE "):open]), `"`) != table {
		return fmt.Errorf("rebuild %s: unexpected definition %.40q", table, create)
	}
	rows, err := tx.QueryContext(ctx, "SELECT sql FROM sqlite_schema WHERE tbl_name = ? AND type IN ('index', 'trigger') AND sql IS NOT NULL", table)
	if err != nil {
		return err
	}
	var others []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return err
		}
		others = append(others, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	stmts := []string{
		"CREATE TABLE " + tmp + " " + strings.Replace(create[open:], old, new, 1),
		"INSERT INTO " + tmp + " SELECT * FROM " + table,
		"DROP TABLE " + table,
		"ALTER TABLE " + tmp + " RENAME TO " + table,
	}
	stmts = append(stmts, others...)
	stmts = append(stmts, also...)
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("rebuild %s: %s: %w", table, strings.SplitN(s, "(", 2)[0], err)
		}
	}
	var violations int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM pragma_foreign_key_check").Scan(&violations); err != nil {
		return err
	}
	if violations > 0 {
		return fmt.Errorf("rebuild %s: %d foreign keys broken", table, violations)
	}
	return tx.Commit()
}
