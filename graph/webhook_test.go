package graph_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/graph"
	"coupond/internal/testdb"
)

const (
	createHook = `mutation($in: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $in) { endpoint { id url events enabled } secret } }`
	updateHook = `mutation($in: UpdateWebhookEndpointInput!) { updateWebhookEndpoint(input: $in) { id enabled disabledReason events } }`
	rotateHook = `mutation($in: RotateWebhookSecretInput!) { rotateWebhookSecret(input: $in) { endpoint { id previousSecretUntil } secret } }`
	deleteHook = `mutation($in: DeleteWebhookEndpointInput!) { deleteWebhookEndpoint(input: $in) { id } }`
	listHooks  = `{ webhookEndpoints { id url events enabled } }`
	deliveries = `query($f: WebhookDeliveryFilter) { webhookDeliveries(filter: $f, first: 10) {
		edges { cursor node { eventId eventType endpointId status attempts lastStatusCode lastError nextAttemptAt responseBody } }
		pageInfo { hasNextPage endCursor } } }`
	redeliver = `mutation($in: RedeliverEventInput!) { redeliverEvent(input: $in) { eventId status } }`
	replay    = `mutation($in: ReplayWebhookEventsInput!) { replayWebhookEvents(input: $in) { endpoint { id enabled } queued } }`
	eventFeed = `query($after: String) { events(first: 10, after: $after) { edges { cursor node { id type merchantId data payload } }
		pageInfo { hasNextPage endCursor } } }`
)

func TestWebhooksOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		a := newAPI(t, db, graph.Options{})
		in := map[string]any{"url": "https://203.0.113.10/hook", "events": []string{"coupon.issued", "redemption.succeeded"},
			"description": "POS", "requestId": "wh-1"}
		var created struct {
			CreateWebhookEndpoint struct {
				Endpoint struct {
					ID      string
					URL     string
					Events  []string
					Enabled bool
				}
				Secret string
			}
		}
		a.mustDo(t, a.admin, createHook, map[string]any{"in": in}, &created)
		ep := created.CreateWebhookEndpoint
		if !strings.HasPrefix(ep.Secret, "whsec_") || !ep.Endpoint.Enabled || len(ep.Endpoint.Events) != 2 {
			t.Fatalf("created %+v", ep)
		}
		var again = created
		a.mustDo(t, a.admin, createHook, map[string]any{"in": in}, &again)
		if again.CreateWebhookEndpoint.Endpoint.ID != ep.Endpoint.ID || again.CreateWebhookEndpoint.Secret != ep.Secret {
			t.Fatalf("replay %+v", again)
		}
		storeID, codes := a.setup(2)
		for _, tok := range []string{a.clerk("SH01"), a.finance} {
			if codes := a.do(t, tok, createHook, map[string]any{"in": map[string]any{"url": "https://203.0.113.10/x",
				"events": []string{"coupon.issued"}}}, nil); len(codes) != 1 || codes[0] != "FORBIDDEN" {
				t.Fatalf("non-admin create: %v", codes)
			}
			if codes := a.do(t, tok, listHooks, nil, nil); len(codes) != 1 || codes[0] != "FORBIDDEN" {
				t.Fatalf("non-admin list: %v", codes)
			}
		}
		for _, bad := range []map[string]any{
			{"url": "http://127.0.0.1:9/x", "events": []string{"coupon.issued"}},
			{"url": "http://169.254.169.254/latest/meta-data", "events": []string{"coupon.issued"}},
			{"url": "https://203.0.113.10/x", "events": []string{"coupon.lost"}},
			{"url": "https://203.0.113.10/" + strings.Repeat("x", 2100), "events": []string{"coupon.issued"}},
			{"url": "not a url", "events": []string{"coupon.issued"}},
		} {
			if codes := a.do(t, a.admin, createHook, map[string]any{"in": bad}, nil); len(codes) != 1 || codes[0] != "BAD_USER_INPUT" {
				t.Fatalf("%v: %v", bad["url"], codes)
			}
		}
		var list struct{ WebhookEndpoints []struct{ ID string } }
		a.mustDo(t, a.admin, listHooks, nil, &list)
		if len(list.WebhookEndpoints) != 1 {
			t.Fatalf("endpoints %+v", list)
		}

		a.mustDo(t, a.clerk("SH01"), redeemCoupon, redeemVars(codes[0], storeID, "r-1", 5000), nil)

		type feed struct {
			Events struct {
				Edges []struct {
					Cursor string
					Node   struct{ ID, Type, MerchantID, Data, Payload string }
				}
				PageInfo struct {
					HasNextPage bool
					EndCursor   *string
				}
			}
		}
		// The feed shows an event once every write transaction older than
		// it has ended, anywhere on the server (docs/webhooks.md): other
		// tests' transactions may hold it back a moment.
		var f feed
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			f = feed{}
			a.mustDo(t, a.finance, eventFeed, nil, &f)
			if len(f.Events.Edges) >= 2 || time.Now().After(deadline) {
				break
			}
		}
		if len(f.Events.Edges) != 2 || f.Events.Edges[0].Node.Type != "coupon.issued" || f.Events.Edges[1].Node.Type != "redemption.succeeded" {
			t.Fatalf("events %+v", f.Events)
		}
		var payload struct {
			ID, Type, CreatedAt, MerchantID string
			Data                            map[string]any
		}
		must(t, json.Unmarshal([]byte(f.Events.Edges[1].Node.Payload), &payload))
		if strings.Contains(f.Events.Edges[0].Node.Payload, `\u0026`) {
			t.Fatalf("payload escapes &: %s", f.Events.Edges[0].Node.Payload)
		}
		if payload.ID != f.Events.Edges[1].Node.ID || payload.Data["code"] != codes[0] || payload.Data["storeCode"] != "SH01" ||
			payload.CreatedAt == "" || payload.MerchantID == "" {
			t.Fatalf("payload %+v", payload)
		}
		var next feed
		a.mustDo(t, a.finance, eventFeed, map[string]any{"after": f.Events.PageInfo.EndCursor}, &next)
		if len(next.Events.Edges) != 0 || next.Events.PageInfo.EndCursor == nil || *next.Events.PageInfo.EndCursor != *f.Events.PageInfo.EndCursor {
			t.Fatalf("after the last event: %+v", next.Events)
		}
		if codes := a.do(t, a.clerk("SH01"), eventFeed, nil, nil); len(codes) != 1 || codes[0] != "FORBIDDEN" {
			t.Fatalf("clerk reads events: %v", codes)
		}

		var d struct {
			WebhookDeliveries struct {
				Edges []struct {
					Node struct {
						EventID, EventType, EndpointID, Status string
						Attempts                               int
						NextAttemptAt                          *string
					}
				}
			}
		}
		a.mustDo(t, a.admin, deliveries, map[string]any{"f": map[string]any{"status": "PENDING", "eventType": "redemption.succeeded"}}, &d)
		if len(d.WebhookDeliveries.Edges) != 1 || d.WebhookDeliveries.Edges[0].Node.EventID != payload.ID ||
			d.WebhookDeliveries.Edges[0].Node.NextAttemptAt == nil || d.WebhookDeliveries.Edges[0].Node.EndpointID != ep.Endpoint.ID {
			t.Fatalf("deliveries %+v", d)
		}
		var rd struct {
			RedeliverEvent struct{ EventID, Status string }
		}
		a.mustDo(t, a.admin, redeliver, map[string]any{"in": map[string]any{"eventId": payload.ID, "endpointId": ep.Endpoint.ID}}, &rd)
		if rd.RedeliverEvent.EventID != payload.ID || rd.RedeliverEvent.Status != "PENDING" {
			t.Fatalf("redeliver %+v", rd)
		}
		if codes := a.do(t, a.admin, redeliver, map[string]any{"in": map[string]any{"eventId": "evt_nope", "endpointId": ep.Endpoint.ID}}, nil); len(codes) != 1 || codes[0] != "NOT_FOUND" {
			t.Fatalf("redeliver of an unknown event: %v", codes)
		}

		var up struct{ UpdateWebhookEndpoint struct{ Enabled bool } }
		a.mustDo(t, a.admin, updateHook, map[string]any{"in": map[string]any{"id": ep.Endpoint.ID, "enabled": false}}, &up)
		if up.UpdateWebhookEndpoint.Enabled {
			t.Fatal("still enabled")
		}
		// Written while disabled: not queued for the endpoint; a replay
		// since before it queues it (and leaves the pending ones alone).
		a.mustDo(t, a.clerk("SH01"), redeemCoupon, redeemVars(codes[1], storeID, "r-2", 5000), nil)
		createdAt, err := time.Parse(time.RFC3339Nano, payload.CreatedAt)
		must(t, err)
		rin := map[string]any{"in": map[string]any{"endpointId": ep.Endpoint.ID, "since": createdAt.Add(-time.Minute).Format(time.RFC3339Nano)}}
		for _, tok := range []string{a.clerk("SH01"), a.finance} {
			if codes := a.do(t, tok, replay, rin, nil); len(codes) != 1 || codes[0] != "FORBIDDEN" {
				t.Fatalf("non-admin replay: %v", codes)
			}
		}
		if codes := a.do(t, a.admin, replay, map[string]any{"in": map[string]any{"endpointId": ep.Endpoint.ID,
			"since": createdAt.Add(-40 * 24 * time.Hour).Format(time.RFC3339Nano)}}, nil); len(codes) != 1 || codes[0] != "BAD_USER_INPUT" {
			t.Fatalf("replay since 40 days ago: %v", codes)
		}
		var rp struct {
			ReplayWebhookEvents struct {
				Endpoint struct {
					ID      string
					Enabled bool
				}
				Queued int
			}
		}
		a.mustDo(t, a.admin, replay, rin, &rp)
		if rp.ReplayWebhookEvents.Queued != 1 || rp.ReplayWebhookEvents.Endpoint.ID != ep.Endpoint.ID || rp.ReplayWebhookEvents.Endpoint.Enabled {
			t.Fatalf("replay %+v", rp)
		}
		var rot struct {
			RotateWebhookSecret struct {
				Endpoint struct{ PreviousSecretUntil *string }
				Secret   string
			}
		}
		a.mustDo(t, a.admin, rotateHook, map[string]any{"in": map[string]any{"id": ep.Endpoint.ID}}, &rot)
		if rot.RotateWebhookSecret.Secret == ep.Secret || rot.RotateWebhookSecret.Endpoint.PreviousSecretUntil == nil {
			t.Fatalf("rotate %+v", rot)
		}
		a.mustDo(t, a.admin, deleteHook, map[string]any{"in": map[string]any{"id": ep.Endpoint.ID}}, nil)
		a.mustDo(t, a.admin, listHooks, nil, &list)
		if len(list.WebhookEndpoints) != 0 {
			t.Fatalf("after delete %+v", list)
		}
	})
}
