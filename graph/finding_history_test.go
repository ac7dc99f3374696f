package graph_test

import (
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/graph"
	"coupond/internal/testdb"
)

// A finding resolved while its discrepancy is still there comes back: the
// next runJob counts it as reopened, the finding is OPEN again and its history
// shows it opened, resolved with the note, and reopened.
func TestFindingHistoryOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		a := newAPI(t, db, graph.Options{})
		a.setup(2)
		must(t, db.Exec("UPDATE campaigns SET issued = issued + 1").Error)

		const runJob = `mutation { runJob(input: {job: "reconciliation"}) { status counts { name value } } }`
		run := func(want map[string]int64) {
			t.Helper()
			var r struct {
				RunJob struct {
					Status string
					Counts []struct {
						Name  string
						Value int64
					}
				}
			}
			a.mustDo(t, a.admin, runJob, nil, &r)
			got := map[string]int64{}
			for _, c := range r.RunJob.Counts {
				got[c.Name] = c.Value
			}
			if r.RunJob.Status != "SUCCEEDED" || len(got) != len(want) {
				t.Fatalf("run %+v, want counts %v", r.RunJob, want)
			}
			for k, v := range want {
				if got[k] != v {
					t.Fatalf("run counts %v, want %v", got, want)
				}
			}
		}
		type event struct {
			Action   string
			At       time.Time
			By, Note *string
		}
		var list struct {
			Findings struct {
				Edges []struct {
					Node struct {
						ID, Kind, Status string
						Reopened         int64
						LastSeenAt       *string
						ResolvedBy, Note *string
						History          []event
					}
				}
			}
		}
		const findings = `{ findings { edges { node { id kind status reopened lastSeenAt resolvedBy note
			history { action at by note } } } } }`

		run(map[string]int64{"violations": 1, "opened": 1, "reopened": 0})
		a.mustDo(t, a.finance, findings, nil, &list)
		if len(list.Findings.Edges) != 1 {
			t.Fatalf("%d findings, want 1", len(list.Findings.Edges))
		}
		f := list.Findings.Edges[0].Node
		if f.Kind != "ISSUED_COUNT_MISMATCH" || f.Status != "OPEN" || f.LastSeenAt == nil || len(f.History) != 1 ||
			f.History[0].Action != "OPENED" {
			t.Fatalf("new finding %+v", f)
		}

		const resolve = `mutation($in: ResolveFindingInput!) { resolveFinding(input: $in) { status history { action } } }`
		a.mustDo(t, a.finance, resolve, map[string]any{"in": map[string]any{"findingId": f.ID, "note": "counted twice by hand"}}, nil)
		run(map[string]int64{"violations": 1, "opened": 0, "reopened": 1})
		run(map[string]int64{"violations": 1, "opened": 0, "reopened": 0}) // open again: not reopened twice, not duplicated

		a.mustDo(t, a.finance, findings, nil, &list)
		if len(list.Findings.Edges) != 1 {
			t.Fatalf("%d findings after reopening, want 1", len(list.Findings.Edges))
		}
		f = list.Findings.Edges[0].Node
		if f.Status != "OPEN" || f.Reopened != 1 || f.ResolvedBy != nil || f.Note != nil {
			t.Fatalf("reopened finding %+v", f)
		}
		h := f.History
		if len(h) != 3 || h[0].Action != "OPENED" || h[1].Action != "RESOLVED" || h[2].Action != "REOPENED" {
			t.Fatalf("history %+v, want OPENED, RESOLVED, REOPENED", h)
		}
		if h[1].By == nil || h[1].Note == nil || *h[1].Note != "counted twice by hand" || h[0].By != nil || h[2].By != nil {
			t.Fatalf("history %+v: the resolution must keep who and the note", h)
		}
		if h[1].At.Before(h[0].At) || h[2].At.Before(h[1].At) {
			t.Fatalf("history out of order: %+v", h)
		}

		// The clerk reads no findings, history included.
		if got := a.do(t, a.clerk("SH01"), findings, nil, nil); len(got) == 0 || got[0] != "FORBIDDEN" {
			t.Fatalf("clerk reading findings: %v", got)
		}
		// Every run and the resolution are in the audit log.
		var audit auditPage
		a.mustDo(t, a.finance, auditEvents, map[string]any{"f": map[string]any{"action": "job.run"}}, &audit)
		if n := len(audit.AuditEvents.Edges); n != 3 {
			t.Fatalf("%d job.run events, want 3", n)
		}
		a.mustDo(t, a.finance, auditEvents, map[string]any{"f": map[string]any{"action": "finding.resolve"}}, &audit)
		if evs := audit.events(); len(evs) != 1 || evs[0].Target != "finding:"+f.ID || evs[0].Detail != "counted twice by hand" {
			t.Fatalf("finding.resolve events %+v", evs)
		}
	})
}
