package services

import (
	"context"
	"errors"
	"testing"
)

// TestPacedRestsOnlyBesideTheTills streams three chunks of rows under a
// context that has ended: with the tills quiet every row goes out (no rest
// is taken, so the ended context is never waited on); with them busy the
// stream rests after its first chunk and stops there with the context's
// error.
func TestPacedRestsOnlyBesideTheTills(t *testing.T) {
	rows := 3 * exportPaceRows
	source := func(fn func(int) error) error {
		for i := range rows {
			if err := fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		busy    bool
		want    int
		wantErr error
	}{
		{name: "quiet", want: rows},
		{name: "busy", busy: true, want: exportPaceRows, wantErr: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := &tills{}
			if tt.busy {
				tl.served()
			}
			got := 0
			err := paced(ctx, tl, Stream[int](source))(func(int) error { got++; return nil })
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("streamed %d rows, err %v; want %d, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
	var none *tills
	if none.busy() {
		t.Fatal("no tills reported busy")
	}
}
