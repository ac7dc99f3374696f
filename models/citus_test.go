package models_test

import (
	"sort"
	"strings"
	"testing"

	"coupond/internal/testdb"
)

// globalTables are the tables that are not distributed by merchant_id when
// the schema moves to Citus (docs/SCALING.md), each with the reason. Every
// other table is a merchant's: its keys must lead with merchant_id so each
// merchant's rows, and every check on them, live on one worker.
var globalTables = map[string]string{
	"merchants": "reference table: the merchant itself, keyed by the id every other table " +
		"distributes on; its code is unique across merchants",
	"api_tokens": "reference table: authentication finds a token by its hash before any merchant " +
		"is known, so the lookup cannot be routed to one worker; tokens are few and written rarely " +
		"(issue, revoke, a throttled last use)",
	"job_runs": "coordinator table: a schedule slot (job, slot) is claimed once for the whole " +
		"deployment, before the run fans out over merchants",
	"goose_db_version": "coordinator table: the migrations' own bookkeeping",
}

// TestKeysLeadWithMerchant reads the catalog and fails when a merchant's
// table has a primary key, a unique index or a foreign key that does not lead
// with merchant_id (a foreign key onto a global table may key on anything:
// Citus allows a distributed table to reference a reference table), or when a
// table appears that is neither a merchant's nor listed in globalTables.
func TestKeysLeadWithMerchant(t *testing.T) {
	db := testdb.Postgres(t)
	var tables []string
	if err := db.Raw(`SELECT relname FROM pg_class
  WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r' ORDER BY relname`).Scan(&tables).Error; err != nil {
		t.Fatal(err)
	}
	if len(tables) < 15 {
		t.Fatalf("tables = %v: the catalog query is wrong", tables)
	}
	// Unique indexes (primary keys and unique constraints included), and
	// foreign keys, with their leading column and what they reference.
	var keys []struct {
		Tbl, Kind, Name, Lead, Ref, Def string
	}
	err := db.Raw(`SELECT t.relname AS tbl, CASE WHEN i.indisprimary THEN 'primary key' ELSE 'unique index' END AS kind,
    ic.relname AS name, a.attname AS lead, '' AS ref, pg_get_indexdef(i.indexrelid) AS def
  FROM pg_index i
  JOIN pg_class ic ON ic.oid = i.indexrelid
  JOIN pg_class t ON t.oid = i.indrelid
  LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
  WHERE t.relnamespace = current_schema()::regnamespace AND i.indisunique
UNION ALL
SELECT t.relname, 'foreign key', c.conname, a.attname, r.relname, pg_get_constraintdef(c.oid)
  FROM pg_constraint c
  JOIN pg_class t ON t.oid = c.conrelid
  JOIN pg_class r ON r.oid = c.confrelid
  JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
  WHERE t.relnamespace = current_schema()::regnamespace AND c.contype = 'f'
ORDER BY 1, 3`).Scan(&keys).Error
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, k := range keys {
		seen[k.Tbl] = true
		if _, global := globalTables[k.Tbl]; global {
			continue
		}
		if k.Kind == "foreign key" {
			if _, global := globalTables[k.Ref]; global {
				continue
			}
		}
		if k.Lead != "merchant_id" {
			t.Errorf("%s: %s %s does not lead with merchant_id (%s): the table cannot be distributed by merchant",
				k.Tbl, k.Kind, k.Name, k.Def)
		}
	}
	var unkeyed []string
	for _, tbl := range tables {
		if _, global := globalTables[tbl]; !global && !seen[tbl] {
			unkeyed = append(unkeyed, tbl)
		}
	}
	if len(unkeyed) > 0 {
		t.Errorf("tables without a primary key: %s", strings.Join(unkeyed, ", "))
	}
	var missing []string
	for tbl := range globalTables {
		found := sort.SearchStrings(tables, tbl)
		if found == len(tables) || tables[found] != tbl {
			missing = append(missing, tbl)
		}
	}
	if len(missing) > 0 {
		t.Errorf("global tables %v are not in the schema: drop them from globalTables", missing)
	}
}
