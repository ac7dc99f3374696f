package services_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

// A resolved finding whose discrepancy reconciliation finds again is reopened,
// once, with its history kept; an open finding found again is only marked
// seen; a fixed discrepancy leaves its resolved finding alone.
func TestFindingReopensWhenFoundAgain(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		w := newWorld(t, db)
		ctx := context.Background()
		w.issue(w.campaign, 2)
		// Plant a discrepancy: the issued counter one ahead of the coupons.
		must(t, db.Exec("UPDATE campaigns SET issued = issued + 1 WHERE id = ?", w.campaign.ID).Error)

		reconcile := func(want services.ReconcileResult) {
			t.Helper()
			w.clock.Advance(time.Minute)
			got, err := w.svc.Reconciliation.ReconcileMerchant(ctx, w.merchant.ID)
			must(t, err)
			if got != want {
				t.Fatalf("reconcile %+v, want %+v", got, want)
			}
		}
		finding := func() models.Finding {
			t.Helper()
			var fs []models.Finding
			must(t, db.Where("merchant_id = ?", w.merchant.ID).Find(&fs).Error)
			if len(fs) != 1 || fs[0].Kind != models.FindingIssuedCountMismatch {
				t.Fatalf("findings %+v, want one ISSUED_COUNT_MISMATCH", fs)
			}
			return fs[0]
		}
		history := func(id int64) []models.FindingEvent {
			t.Helper()
			evs, err := w.svc.Reconciliation.FindingHistory(ctx, w.finance, []int64{id})
			must(t, err)
			return evs
		}
		resolve := func(id int64, note string) {
			t.Helper()
			w.clock.Advance(time.Minute)
			_, err := w.svc.Reconciliation.ResolveFinding(ctx, w.finance, id, note)
			must(t, err)
		}

		// openedEvents is the finding.opened events' data, oldest first.
		openedEvents := func() []map[string]any {
			t.Helper()
			var evs []models.OutboxEvent
			must(t, db.Where("merchant_id = ? AND type = ?", w.merchant.ID, models.EventFindingOpened).Order("id").Find(&evs).Error)
			out := make([]map[string]any, len(evs))
			for i, ev := range evs {
				must(t, json.Unmarshal([]byte(ev.Data), &out[i]))
				out[i]["_createdAt"] = ev.CreatedAt
			}
			return out
		}

		reconcile(services.ReconcileResult{Violations: 1, Opened: 1})
		f := finding()
		if evs := openedEvents(); len(evs) != 1 || evs[0]["reopened"] != false || evs[0]["findingId"] != strconv.FormatInt(f.ID, 10) {
			t.Fatalf("finding.opened after the first run: %v", evs)
		}
		opened := w.clock.Now()
		if f.Status != models.FindingOpen || f.Reopened != 0 || f.LastSeenAt == nil || !f.LastSeenAt.Equal(opened) {
			t.Fatalf("new finding %+v", f)
		}

		// Still open and found again: seen, not duplicated, not reopened.
		reconcile(services.ReconcileResult{Violations: 1})
		if f = finding(); f.Status != models.FindingOpen || f.Reopened != 0 || !f.LastSeenAt.Equal(w.clock.Now()) {
			t.Fatalf("open finding found again %+v, last seen %v, want %v", f, f.LastSeenAt, w.clock.Now())
		}

		resolve(f.ID, "counter fixed in the old system")
		resolvedAt := w.clock.Now()

		// A reopening that rolls back writes no event (nor anything else).
		rollback := errors.New("roll back")
		err := db.Transaction(func(tx *gorm.DB) error {
			ok, err := models.ReopenFinding(tx, w.merchant.ID, f.DedupeKey, w.clock.Now(), w.clock.Now())
			if err != nil || !ok {
				t.Fatalf("reopen in a transaction: %v, %v", ok, err)
			}
			return rollback
		})
		if !errors.Is(err, rollback) || len(openedEvents()) != 1 || finding().Status != models.FindingResolved {
			t.Fatalf("rolled-back reopening: %v, events %v", err, openedEvents())
		}

		reconcile(services.ReconcileResult{Violations: 1, Reopened: 1})
		reopenedAt := w.clock.Now()
		// The reopening wrote finding.opened again, in its transaction, marked
		// reopened, at the time of the reopening.
		if evs := openedEvents(); len(evs) != 2 || evs[1]["reopened"] != true || evs[1]["findingId"] != evs[0]["findingId"] ||
			evs[1]["kind"] != string(models.FindingIssuedCountMismatch) || !evs[1]["_createdAt"].(time.Time).Equal(reopenedAt) {
			t.Fatalf("finding.opened after the reopening: %v", evs)
		}
		f = finding()
		if f.Status != models.FindingOpen || f.Reopened != 1 || f.ResolvedBy != nil || f.Note != nil || f.ResolvedAt != nil ||
			!f.LastSeenAt.Equal(reopenedAt) {
			t.Fatalf("reopened finding %+v", f)
		}
		// Open again: the next run does not reopen it a second time.
		reconcile(services.ReconcileResult{Violations: 1})
		if evs := openedEvents(); len(evs) != 2 {
			t.Fatalf("finding.opened written again for an open finding: %v", evs)
		}
		if f = finding(); f.Reopened != 1 {
			t.Fatalf("finding reopened %d times, want 1", f.Reopened)
		}

		by := w.finance.Label()
		note := "counter fixed in the old system"
		want := []models.FindingEvent{
			{Action: models.FindingEventOpened, CreatedAt: opened},
			{Action: models.FindingEventResolved, Actor: &by, Note: &note, CreatedAt: resolvedAt},
			{Action: models.FindingEventReopened, CreatedAt: reopenedAt},
		}
		checkHistory(t, history(f.ID), want)

		// Resolved for good: the discrepancy is fixed, the finding stays resolved.
		resolve(f.ID, "really fixed")
		must(t, db.Exec("UPDATE campaigns SET issued = issued - 1 WHERE id = ?", w.campaign.ID).Error)
		reconcile(services.ReconcileResult{})
		if f = finding(); f.Status != models.FindingResolved || f.Reopened != 1 || f.Note == nil || *f.Note != "really fixed" {
			t.Fatalf("finding after the fix %+v", f)
		}
		if got := history(f.ID); len(got) != 4 || got[3].Action != models.FindingEventResolved {
			t.Fatalf("history after the second resolution: %+v", got)
		}

		// Another merchant's finance sees no history of this finding; a clerk none at all.
		other, err := w.svc.Merchants.Create(ctx, "other", "Other", "")
		must(t, err)
		if evs, err := w.svc.Reconciliation.FindingHistory(ctx, services.Actor{MerchantID: other.ID, TokenID: 999,
			Role: models.RoleFinance}, []int64{f.ID}); err != nil || len(evs) != 0 {
			t.Fatalf("another merchant's view of the history: %v, %v", evs, err)
		}
		_, err = w.svc.Reconciliation.FindingHistory(ctx, w.clerkA, []int64{f.ID})
		wantCode(t, err, "FORBIDDEN")
	})
}

func checkHistory(t *testing.T, got, want []models.FindingEvent) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("history %+v, want %d events", got, len(want))
	}
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Action != w.Action || !g.CreatedAt.Equal(w.CreatedAt) || str(g.Actor) != str(w.Actor) || str(g.Note) != str(w.Note) {
			t.Fatalf("history event %d: %s at %v by %s (%s), want %s at %v by %s (%s)", i, g.Action, g.CreatedAt,
				str(g.Actor), str(g.Note), w.Action, w.CreatedAt, str(w.Actor), str(w.Note))
		}
	}
}
