package services

import (
	"testing"
	"time"
)

// The count's span follows the time its statements take, toward
// eventCountTarget, and never grows after a statement the watermark cut
// short.
func TestNextEventSpan(t *testing.T) {
	tests := []struct {
		name string
		span int64
		took time.Duration
		full bool
		want int64
	}{
		{"on target keeps the span", 4096, eventCountTarget, true, 4096},
		{"a statement 43 times too long shrinks it as much", 4300, 43 * eventCountTarget, true, 100},
		{"a fast full statement at most doubles it", 4096, eventCountTarget / 100, true, 8192},
		{"a fast statement cut short keeps it", 4096, eventCountTarget / 100, false, 4096},
		{"a slow statement cut short shrinks it", 4096, 2 * eventCountTarget, false, 2048},
		{"never below the least", 100, time.Second, true, eventCountMinSpan},
		{"never above the most", eventCountMaxSpan, 0, true, eventCountMaxSpan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nextEventSpan(tt.span, tt.took, tt.full); got != tt.want {
				t.Fatalf("nextEventSpan(%d, %v, %v) = %d, want %d", tt.span, tt.took, tt.full, got, tt.want)
			}
		})
	}
}
