package services

import (
	"context"
	"testing"
	"time"
)

// TestExportPacerRestsOnlyBesideTheTills asks an export's pacer for three
// batch sizes: with the tills quiet it gives full batches and never rests;
// with them busy it gives small ones and rests before every query but the
// first.
func TestExportPacerRestsOnlyBesideTheTills(t *testing.T) {
	tests := []struct {
		name      string
		busy      bool
		wantSize  int
		wantRests int
	}{
		{name: "quiet", wantSize: ExportBatch},
		{name: "busy", busy: true, wantSize: exportBusyBatch, wantRests: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := &tills{}
			if tt.busy {
				tl.served()
			}
			rests := 0
			p := &exportPacer{ctx: context.Background(), tills: tl,
				rest: func(_ context.Context, d time.Duration) bool { rests++; return d >= 0 }}
			for range 3 {
				if got := p.next(); got != tt.wantSize {
					t.Fatalf("batch of %d rows, want %d", got, tt.wantSize)
				}
			}
			if rests != tt.wantRests {
				t.Fatalf("rested %d times, want %d", rests, tt.wantRests)
			}
		})
	}
	var none *tills
	if none.busy() {
		t.Fatal("no tills reported busy")
	}
}
