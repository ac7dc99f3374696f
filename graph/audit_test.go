package graph_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/graph"
	"coupond/internal/testdb"
	"coupond/models"
	"coupond/services"
)

const auditEvents = `query($f: AuditEventFilter, $first: Int, $after: String) {
	auditEvents(filter: $f, first: $first, after: $after) {
		edges { cursor node { id action actor actorId target detail requestId createdAt } }
		pageInfo { hasNextPage endCursor } } }`

type auditEvent struct {
	ID, Action, Actor, Target, Detail string
	ActorID                           *string
	RequestID                         *string
	CreatedAt                         time.Time
}

type auditPage struct {
	AuditEvents struct {
		Edges []struct {
			Cursor string
			Node   auditEvent
		}
		PageInfo struct {
			HasNextPage bool
			EndCursor   *string
		}
	}
}

func (p auditPage) events() []auditEvent {
	out := make([]auditEvent, len(p.AuditEvents.Edges))
	for i, e := range p.AuditEvents.Edges {
		out[i] = e.Node
	}
	return out
}

// The audit log over GraphQL: administrators and finance staff read their own
// merchant's events only, newest first, filtered by action, token and time
// (a time or a local date); clerks are refused; a runJob is audited.
func TestAuditEventsOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		a := newAPI(t, db, graph.Options{})
		a.setup(1)
		clerk := a.clerk("SH01")
		const runJob = `mutation($job: String!) { runJob(input: {job: $job}) { id job status } }`
		var run struct {
			RunJob struct{ ID, Job, Status string }
		}
		a.mustDo(t, a.admin, runJob, map[string]any{"job": "reconciliation"}, &run)

		// A second merchant with its own tokens and its own store.
		mb, err := a.svc.Merchants.Create(ctx, "beta", "Beta", "Europe/Paris")
		must(t, err)
		adminB, _, err := a.svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: mb.ID, Role: models.RoleAdmin})
		must(t, err)
		financeB, _, err := a.svc.Tokens.Create(ctx, services.CreateTokenInput{MerchantID: mb.ID, Role: models.RoleFinance})
		must(t, err)
		a.mustDo(t, adminB, createStore, map[string]any{"in": map[string]any{"code": "PA01", "name": "Paris 1"}}, nil)

		var acme models.Merchant
		must(t, db.Where("code = 'acme'").Take(&acme).Error)
		var adminA models.APIToken
		must(t, db.Where("merchant_id = ? AND role = 'ADMIN'", acme.ID).Take(&adminA).Error)
		adminAID := strconv.FormatInt(adminA.ID, 10)

		list := func(t *testing.T, token string, f map[string]any) []auditEvent {
			t.Helper()
			var p auditPage
			a.mustDo(t, token, auditEvents, map[string]any{"f": f, "first": 100}, &p)
			return p.events()
		}
		actions := func(evs []auditEvent) string {
			s := make([]string, len(evs))
			for i, e := range evs {
				s[i] = e.Action
			}
			return strings.Join(s, ",")
		}

		all := list(t, a.finance, nil)
		// Newest first: the run, the clerk's token, the coupons, the campaign, the
		// store, the admin's and finance's tokens.
		if got := actions(all); got != "job.run,token.create,campaign.issue,campaign.create,store.create,token.create,token.create" {
			t.Fatalf("acme's audit log: %s", got)
		}
		for i := 1; i < len(all); i++ {
			if id, prev := mustInt(t, all[i].ID), mustInt(t, all[i-1].ID); id >= prev {
				t.Fatalf("events not newest first: %s after %s", all[i].ID, all[i-1].ID)
			}
		}
		job := all[0]
		if job.ActorID == nil || *job.ActorID != adminAID || job.Actor != "token:"+adminAID ||
			job.Target != "job_run:"+run.RunJob.ID || !strings.HasPrefix(job.Detail, "reconciliation SUCCEEDED {") ||
			!strings.Contains(job.Detail, `"violations":0`) {
			t.Fatalf("job.run event %+v, want the admin's run %s with its counts", job, run.RunJob.ID)
		}
		for _, e := range all {
			if e.Action == "token.create" && (e.ActorID != nil || e.Actor != "system") {
				t.Fatalf("a token made by the CLI is audited as %q/%v, want system and no actor id", e.Actor, e.ActorID)
			}
		}

		tests := []struct {
			name  string
			token string
			give  map[string]any
			want  string
		}{
			{"by action", a.admin, map[string]any{"action": "store.create"}, "store.create"},
			{"by actor", a.finance, map[string]any{"actorId": adminAID}, "job.run,campaign.issue,campaign.create,store.create"},
			{"by actor and action", a.finance, map[string]any{"actorId": adminAID, "action": "campaign.create"}, "campaign.create"},
			{"unknown action", a.finance, map[string]any{"action": "nothing"}, ""},
			{"today, local dates", a.finance, map[string]any{"from": today("Asia/Shanghai"), "to": today("Asia/Shanghai"), "action": "job.run"}, "job.run"},
			{"until yesterday", a.finance, map[string]any{"to": day("Asia/Shanghai", -1)}, ""},
			{"from tomorrow", a.finance, map[string]any{"from": day("Asia/Shanghai", 1)}, ""},
			{"times around the run", a.finance, map[string]any{"action": "job.run",
				"from": job.CreatedAt.Add(-time.Second).Format(time.RFC3339), "to": job.CreatedAt.Add(time.Second).Format(time.RFC3339Nano)}, "job.run"},
			{"up to the run", a.finance, map[string]any{"action": "job.run", "to": job.CreatedAt.Format(time.RFC3339Nano)}, ""},
			{"from after the run", a.finance, map[string]any{"from": job.CreatedAt.Add(time.Second).Format(time.RFC3339)}, ""},
			// Beta sees its own events only, whatever it asks for.
			{"beta, everything", adminB, nil, "store.create,token.create,token.create"},
			{"beta, acme's action", financeB, map[string]any{"action": "job.run"}, ""},
			{"beta, acme's admin", financeB, map[string]any{"actorId": adminAID}, ""},
			{"beta, acme's day", adminB, map[string]any{"from": today("Asia/Shanghai"), "action": "campaign.create"}, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if got := actions(list(t, tt.token, tt.give)); got != tt.want {
					t.Fatalf("actions %q, want %q", got, tt.want)
				}
			})
		}

		for _, f := range []map[string]any{{"from": "yesterday"}, {"to": "2026-13-01"}, {"from": "2026-01-01 10:00"}} {
			if got := a.do(t, a.admin, auditEvents, map[string]any{"f": f}, nil); len(got) != 1 || got[0] != "BAD_USER_INPUT" {
				t.Fatalf("filter %v: %v, want BAD_USER_INPUT", f, got)
			}
		}
		if got := a.do(t, clerk, auditEvents, nil, nil); len(got) != 1 || got[0] != "FORBIDDEN" {
			t.Fatalf("clerk reading the audit log: %v", got)
		}
		if got := a.do(t, "", auditEvents, nil, nil); len(got) != 1 || got[0] != "UNAUTHENTICATED" {
			t.Fatalf("anonymous reading the audit log: %v", got)
		}

		// Pages of two visit every event once, newest first.
		var seen []auditEvent
		var after any
		for {
			var p auditPage
			a.mustDo(t, a.admin, auditEvents, map[string]any{"first": 2, "after": after}, &p)
			seen = append(seen, p.events()...)
			if !p.AuditEvents.PageInfo.HasNextPage {
				break
			}
			after = *p.AuditEvents.PageInfo.EndCursor
		}
		// The clerk's refusal above is audited too, newest of all.
		if got, want := actions(seen), "request.refused,"+actions(all); got != want {
			t.Fatalf("paged actions %q, want %q", got, want)
		}
	})
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	must(t, err)
	return n
}

func day(zone string, offset int) string {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		panic(err)
	}
	return time.Now().In(loc).AddDate(0, 0, offset).Format(time.DateOnly)
}

func today(zone string) string { return day(zone, 0) }
