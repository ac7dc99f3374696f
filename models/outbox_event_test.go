package models

import (
	"strings"
	"testing"
	"time"
)

// TestEventUIDSortsByTime makes ids a millisecond apart, and many in one
// millisecond: later ones sort after, and none repeats.
func TestEventUIDSortsByTime(t *testing.T) {
	at := time.Date(2026, 12, 3, 20, 0, 0, 0, time.UTC)
	prev := eventUIDAt(at)
	for i := range 3 {
		id := eventUIDAt(at.Add(time.Duration(i+1) * time.Millisecond))
		if len(id) != len("evt_")+26 || !strings.HasPrefix(id, "evt_") {
			t.Fatalf("id %q: want evt_ and 26 symbols", id)
		}
		if id <= prev {
			t.Fatalf("id %q made after %q sorts before it", id, prev)
		}
		prev = id
	}
	seen := map[string]bool{}
	for range 10000 {
		id := eventUIDAt(at)
		if seen[id] {
			t.Fatalf("id %q made twice", id)
		}
		seen[id] = true
	}
	if id := NewEventUID(); id <= prev {
		t.Fatalf("an id made now, %q, sorts before one of 2026-12-03, %q", id, prev)
	}
}
