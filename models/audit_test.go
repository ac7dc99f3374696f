package models_test

import (
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
)

// The audit log is append-only in the database itself: inserts work, and
// every UPDATE and DELETE is refused and changes nothing.
func TestAuditEventsAppendOnly(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		m := &models.Merchant{Code: "m", Name: "M", Timezone: "UTC", CreatedAt: time.Now().UTC()}
		if err := models.InsertMerchant(db, m); err != nil {
			t.Fatal(err)
		}
		ev := &models.AuditEvent{MerchantID: m.ID, Actor: "system", Action: "test", Target: "x", Detail: "first",
			CreatedAt: time.Now().UTC()}
		if err := db.Create(ev).Error; err != nil {
			t.Fatalf("insert: %v", err)
		}
		tests := []struct {
			name string
			sql  string
		}{
			{"update", "UPDATE audit_events SET detail = 'rewritten' WHERE id = ?"},
			{"delete", "DELETE FROM audit_events WHERE id = ?"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := db.Exec(tt.sql, ev.ID).Error; err == nil {
					t.Fatalf("%s of an audit event was accepted", tt.name)
				}
				var got models.AuditEvent
				if err := db.Take(&got, ev.ID).Error; err != nil || got.Detail != "first" {
					t.Fatalf("event after refused %s: %+v, %v", tt.name, got, err)
				}
			})
		}
		if models.DialectOfDB(db) == models.Postgres {
			if err := db.Exec("TRUNCATE audit_events").Error; err == nil {
				t.Fatal("TRUNCATE of the audit log was accepted")
			}
		}
	})
}
