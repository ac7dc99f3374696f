package models

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"
)

// CouponBatch describes the coupons of one issuance; coupon i of the batch
// belongs to refs[i/perRef] when refs are given.
type CouponBatch struct {
	MerchantID, CampaignID  int64
	ValidFrom, ValidTo, Now time.Time
	Refs                    []string
	PerRef                  int64
	// Uses is how many uses each coupon gives (the campaign's
	// uses per coupon); 0 counts as 1.
	Uses int64
	// Fill draws fresh codes.
	Fill func([]string)
}

// Ref is the customer of coupon i of the batch, or nil.
func (b *CouponBatch) Ref(i int64) *string {
	if len(b.Refs) == 0 {
		return nil
	}
	return &b.Refs[i/b.PerRef]
}

// uses is the uses each coupon of the batch gives.
func (b *CouponBatch) uses() int64 { return max(b.Uses, 1) }

// codeAttempts bounds how often one chunk is redone after code collisions; a
// collision is about as likely as the chunk size times the merchant's codes
// over 2^60, so a second attempt is already rare.
const codeAttempts = 5

// InsertCouponRange inserts coupons start to start+len(codes)-1 of b with
// fresh codes, written to codes, in batches of multi-row INSERTs inside one
// savepoint. It is the portable path: SQLite, or PostgreSQL through a driver
// other than pgx.
func InsertCouponRange(tx *gorm.DB, b *CouponBatch, start int64, codes []string) error {
	const perInsert = 1000
	rows := make([]Coupon, 0, min(len(codes), perInsert))
	var err error
	for attempt := 0; attempt < codeAttempts; attempt++ {
		b.Fill(codes)
		err = tx.Transaction(func(sp *gorm.DB) error {
			for i := 0; i < len(codes); i += perInsert {
				rows = rows[:0]
				for j := i; j < min(i+perInsert, len(codes)); j++ {
					rows = append(rows, Coupon{MerchantID: b.MerchantID, CampaignID: b.CampaignID, Code: codes[j],
						Status: CouponUnused, ValidFrom: b.ValidFrom, ValidTo: b.ValidTo,
						CustomerRef: b.Ref(start + int64(j)), UsesTotal: b.uses(), UsesLeft: b.uses(),
						CreatedAt: b.Now, UpdatedAt: b.Now})
				}
				if err := sp.Create(&rows).Error; err != nil {
					return err
				}
			}
			return nil
		})
		if !errors.Is(err, gorm.ErrDuplicatedKey) {
			return err
		}
	}
	return fmt.Errorf("insert coupons: codes kept colliding: %w", err)
}

// SpeaksPgx reports whether conn is a pgx connection, which CopyCoupons needs.
func SpeaksPgx(conn *sql.Conn) bool {
	return conn.Raw(func(dc any) error {
		if _, ok := dc.(*stdlib.Conn); !ok {
			return errors.ErrUnsupported
		}
		return nil
	}) == nil
}

// couponColumns are the columns CopyCoupons fills; the others keep their
// defaults (id from the sequence, version 0, no redemption, not a reissue).
var couponColumns = []string{"merchant_id", "campaign_id", "code", "status", "valid_from", "valid_to",
	"customer_ref", "created_at", "updated_at", "uses_total", "uses_left"}

// CopyCoupons is InsertCouponRange with COPY on PostgreSQL: conn is the
// connection tx runs on, and the rows are streamed to it in binary while
// they are generated. A unique violation on coupons can only be a code drawn
// twice or one the merchant already has (ids come from the sequence): the
// savepoint is rolled back and the chunk redone with fresh codes.
func CopyCoupons(tx *gorm.DB, conn *sql.Conn, b *CouponBatch, start int64, codes []string) error {
	ctx := tx.Statement.Context
	var err error
	for attempt := 0; attempt < codeAttempts; attempt++ {
		b.Fill(codes)
		err = tx.Transaction(func(*gorm.DB) error {
			return conn.Raw(func(dc any) error {
				n, err := dc.(*stdlib.Conn).Conn().CopyFrom(ctx, pgx.Identifier{"coupons"}, couponColumns,
					&couponRows{b: b, start: start, codes: codes, i: -1})
				if err == nil && n != int64(len(codes)) {
					err = fmt.Errorf("copied %d coupons, want %d", n, len(codes))
				}
				return err
			})
		})
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != uniqueViolation || pgErr.TableName != "coupons" {
			return err
		}
	}
	return fmt.Errorf("copy coupons: codes kept colliding: %w", err)
}

// uniqueViolation is PostgreSQL's SQLSTATE for a duplicate key.
const uniqueViolation = "23505"

// couponRows is the pgx.CopyFromSource of one chunk. Values reuses one slice:
// pgx encodes a row before asking for the next.
type couponRows struct {
	b     *CouponBatch
	start int64
	codes []string
	i     int
	vals  []any
}

func (r *couponRows) Next() bool {
	r.i++
	return r.i < len(r.codes)
}

func (r *couponRows) Values() ([]any, error) {
	if r.vals == nil {
		r.vals = []any{r.b.MerchantID, r.b.CampaignID, "", string(CouponUnused), r.b.ValidFrom, r.b.ValidTo,
			nil, r.b.Now, r.b.Now, r.b.uses(), r.b.uses()}
	}
	r.vals[2] = r.codes[r.i]
	if ref := r.b.Ref(r.start + int64(r.i)); ref != nil {
		r.vals[6] = *ref
	}
	return r.vals, nil
}

func (r *couponRows) Err() error { return nil }

// InsertCoupons gives each coupon a fresh code from newCode and inserts them
// in a savepoint; on the rare code collision they are retried with new codes.
func InsertCoupons(tx *gorm.DB, batch []Coupon, newCode func() string) error {
	var err error
	for attempt := 0; attempt < codeAttempts; attempt++ {
		for i := range batch {
			batch[i].ID = 0
			batch[i].Code = newCode()
		}
		err = tx.Transaction(func(sp *gorm.DB) error { return sp.CreateInBatches(batch, len(batch)).Error })
		if !errors.Is(err, gorm.ErrDuplicatedKey) {
			return err
		}
	}
	return fmt.Errorf("insert coupons: codes kept colliding: %w", err)
}

// ImportedCoupon is one code of an import and the customer it is bound to.
type ImportedCoupon struct {
	Code        string
	CustomerRef *string
}

// importRowsPerStatement bounds one INSERT of imported codes: two parameters
// a row stay far below either database's limit on parameters.
const importRowsPerStatement = 2000

// InsertImportedCoupons inserts the coupons of b's campaign with the given
// codes, leaving out every code the merchant already has (ON CONFLICT DO
// NOTHING on the merchant's unique code index, so a concurrent import of the
// same code waits for it and then leaves it out too), and returns the codes
// it inserted. Rows should be sorted by code, so that concurrent imports
// lock the index entries in one order.
func InsertImportedCoupons(tx *gorm.DB, b *CouponBatch, rows []ImportedCoupon) (map[string]bool, error) {
	// PostgreSQL infers a parameter's type from its context, which an
	// INSERT ... SELECT does not give; SQLite has no :: casts and needs none.
	head := `INSERT INTO coupons (merchant_id, campaign_id, code, status, valid_from, valid_to, customer_ref, created_at, updated_at)
SELECT ?, ?, v.column1, 'UNUSED', ?, ?, v.column2, ?, ? FROM (VALUES `
	row := "(?, ?)"
	if DialectOfDB(tx) == Postgres {
		head = `INSERT INTO coupons (merchant_id, campaign_id, code, status, valid_from, valid_to, customer_ref, created_at, updated_at)
SELECT ?::bigint, ?::bigint, v.column1, 'UNUSED', ?::timestamptz, ?::timestamptz, v.column2, ?::timestamptz, ?::timestamptz FROM (VALUES `
		row = "(?::text, ?::text)"
	}
	// SQLite reads an upsert after a SELECT only with a WHERE clause.
	const tail = `) AS v WHERE true ON CONFLICT (merchant_id, code) DO NOTHING RETURNING code`
	inserted := make(map[string]bool, len(rows))
	for i := 0; i < len(rows); i += importRowsPerStatement {
		part := rows[i:min(i+importRowsPerStatement, len(rows))]
		var sql strings.Builder
		sql.WriteString(head)
		args := make([]any, 0, 6+2*len(part))
		args = append(args, b.MerchantID, b.CampaignID, b.ValidFrom, b.ValidTo, b.Now, b.Now)
		for j, r := range part {
			if j > 0 {
				sql.WriteString(", ")
			}
			sql.WriteString(row)
			args = append(args, r.Code, r.CustomerRef)
		}
		sql.WriteString(tail)
		var codes []string
		if err := scanRaw(tx, &codes, sql.String(), args...).Error; err != nil {
			return nil, fmt.Errorf("import coupons: %w", err)
		}
		for _, c := range codes {
			inserted[c] = true
		}
	}
	return inserted, nil
}

// CopyImportedCoupons is InsertImportedCoupons with COPY on PostgreSQL: conn
// is the connection tx runs on. The rows are copied in binary into a
// temporary table dropped at commit, then inserted from it, in code order, by
// one INSERT ... SELECT with the same ON CONFLICT DO NOTHING; a statement
// with thousands of parameters costs more to plan and send than the rows
// themselves.
func CopyImportedCoupons(tx *gorm.DB, conn *sql.Conn, b *CouponBatch, rows []ImportedCoupon) (map[string]bool, error) {
	ctx := tx.Statement.Context
	if err := tx.Exec(`CREATE TEMPORARY TABLE import_codes (code TEXT NOT NULL, customer_ref TEXT) ON COMMIT DROP`).Error; err != nil {
		return nil, fmt.Errorf("import coupons: %w", err)
	}
	err := conn.Raw(func(dc any) error {
		src := pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) { return []any{rows[i].Code, rows[i].CustomerRef}, nil })
		_, err := dc.(*stdlib.Conn).Conn().CopyFrom(ctx, pgx.Identifier{"import_codes"}, []string{"code", "customer_ref"}, src)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("import coupons: copy: %w", err)
	}
	var codes []string
	err = scanRaw(tx, &codes, `INSERT INTO coupons (merchant_id, campaign_id, code, status, valid_from, valid_to, customer_ref, created_at, updated_at)
SELECT ?::bigint, ?::bigint, i.code, 'UNUSED', ?::timestamptz, ?::timestamptz, i.customer_ref, ?::timestamptz, ?::timestamptz
FROM import_codes i ORDER BY i.code
ON CONFLICT (merchant_id, code) DO NOTHING RETURNING code`,
		b.MerchantID, b.CampaignID, b.ValidFrom, b.ValidTo, b.Now, b.Now).Error
	if err != nil {
		return nil, fmt.Errorf("import coupons: %w", err)
	}
	inserted := make(map[string]bool, len(codes))
	for _, c := range codes {
		inserted[c] = true
	}
	if err := tx.Exec(`DROP TABLE import_codes`).Error; err != nil {
		return nil, fmt.Errorf("import coupons: %w", err)
	}
	return inserted, nil
}
