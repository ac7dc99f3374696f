package models

import (
	"strings"
	"testing"
	"time"
)

func TestNewEventUIDSortsByTime(t *testing.T) {
	seen := map[string]bool{}
	prev := NewEventUID()
	for range 3 {
		time.Sleep(2 * time.Millisecond)
		id := NewEventUID()
		if len(id) != len("evt_")+26 || !strings.HasPrefix(id, "evt_") {
			t.Fatalf("id %q: want evt_ and 26 symbols", id)
		}
		if id <= prev {
			t.Fatalf("id %q made after %q sorts before it", id, prev)
		}
		prev = id
	}
	for range 10000 {
		id := NewEventUID()
		if seen[id] {
			t.Fatalf("id %q made twice", id)
		}
		seen[id] = true
	}
}
