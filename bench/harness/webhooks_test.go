package harness

import (
	"bytes"
	"net/http"
	"strconv"
	"testing"
	"time"

	"coupond/orderwire"
)

// TestReceiver: the benchmark's receiver verifies signatures, records accepted
// events, answers the status it is told to, and refuses connections while
// down, then comes back on the same address.
func TestReceiver(t *testing.T) {
	r, err := StartReceiver()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Down()
	key := []byte("0123456789abcdef0123456789abcdef")
	r.SetKey(key)
	send := func(id string, k []byte) (int, error) {
		body := []byte(`{"id":"` + id + `"}`)
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		req, _ := http.NewRequest(http.MethodPost, r.URL(), bytes.NewReader(body))
		req.Header.Set(orderwire.HeaderWebhookID, id)
		req.Header.Set(orderwire.HeaderWebhookTimestamp, ts)
		req.Header.Set(orderwire.HeaderWebhookSignature, orderwire.SignStandard(k, id, ts, body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	tests := []struct {
		name   string
		setup  func()
		id     string
		key    []byte
		want   int
		wantUp bool
	}{
		{"accepted", func() {}, "evt_1", key, http.StatusNoContent, true},
		{"bad signature", func() {}, "evt_2", []byte("other"), http.StatusUnauthorized, true},
		{"answers 500", func() { r.SetStatus(500) }, "evt_3", key, http.StatusInternalServerError, true},
		{"down", func() { r.SetStatus(0); r.Down() }, "evt_4", key, 0, false},
		{"back up", func() {
			if err := r.Up(); err != nil {
				t.Fatal(err)
			}
		}, "evt_1", key, http.StatusNoContent, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup()
			got, err := send(tt.id, tt.key)
			if (err == nil) != tt.wantUp || got != tt.want {
				t.Fatalf("status %d, err %v", got, err)
			}
		})
	}
	if a := r.Accepted(); a["evt_1"] != 2 || len(a) != 1 || r.BadSignatures() != 1 {
		t.Fatalf("accepted %v, bad %d", a, r.BadSignatures())
	}
}
