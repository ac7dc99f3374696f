package services

import (
	"database/sql"
	"math/rand/v2"
	"testing"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
)

// couponCode computes the check symbol as it draws the symbols; it must agree
// with luhnCheck, which NormalizeCouponCode uses.
func TestCouponCodeCheckMatchesLuhn(t *testing.T) {
	for _, n := range append([]uint64{0, 1<<60 - 1, 1 << 63}, randomUint64s(10_000)...) {
		code := couponCode(n)
		if len(code) != couponCodeLen || luhnCheck([]byte(code[:codeRandomLen])) != code[codeRandomLen] {
			t.Fatalf("couponCode(%#x) = %q: check symbol disagrees with luhnCheck", n, code)
		}
	}
}

func randomUint64s(n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = rand.Uint64()
	}
	return out
}

// The PostgreSQL pool hands out pgx connections, so issuance takes the COPY
// path there rather than falling back to INSERTs.
func TestIssuanceCopiesOnPostgres(t *testing.T) {
	db := testdb.Postgres(t)
	err := db.Connection(func(c *gorm.DB) error {
		conn, ok := c.Statement.ConnPool.(*sql.Conn)
		if !ok || !models.SpeaksPgx(conn) {
			t.Fatalf("connection %T does not speak pgx", c.Statement.ConnPool)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
