package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"coupond/services"
)

// TestOutboxMetricsReadInTheBackground drives the webhook collector's
// reading of the outbox with a reader that blocks: a scrape waits only
// its short wait and then shows what it has (nothing at first); the
// reading, once done, is what the next scrapes show, without a new reading
// until outboxMetricsEvery has passed; a failed reading keeps the last one.
func TestOutboxMetricsReadInTheBackground(t *testing.T) {
	release := make(chan struct{})
	var reads atomic.Int64
	var fail atomic.Bool
	c := newWebhookCollector(nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	c.wait = 20 * time.Millisecond
	c.readOutbox = func(ctx context.Context) (services.WebhookMetrics, error) {
		n := reads.Add(1)
		<-release
		if fail.Load() {
			return services.WebhookMetrics{}, errors.New("database gone")
		}
		return services.WebhookMetrics{Events: n * 100}, nil
	}
	start := time.Now()
	if _, ok := c.outbox(); ok {
		t.Fatal("a reading before the first one ended")
	}
	if waited := time.Since(start); waited > time.Second {
		t.Fatalf("the scrape waited %s for a reading in progress, want about %s", waited, c.wait)
	}
	if _, ok := c.outbox(); ok || reads.Load() != 1 {
		t.Fatalf("a second scrape during the reading: reading shown %v, %d readings, want none shown and 1", ok, reads.Load())
	}
	close(release)
	waitUntil(t, func() bool {
		m, ok := c.outbox()
		return ok && m.Events == 100
	})
	for range 3 {
		if m, ok := c.outbox(); !ok || m.Events != 100 || reads.Load() != 1 {
			t.Fatalf("scrape within %s: %v %v after %d readings, want the first reading and no other", outboxMetricsEvery, m, ok, reads.Load())
		}
	}
	// The reading has aged: the next scrape reads again, and a failure
	// keeps what was there.
	fail.Store(true)
	c.mu.Lock()
	c.readAt = time.Now().Add(-outboxMetricsEvery)
	c.mu.Unlock()
	idle := func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.reading == nil
	}
	c.outbox()
	waitUntil(t, func() bool { return reads.Load() >= 2 && idle() })
	if m, ok := c.outbox(); !ok || m.Events != 100 {
		t.Fatalf("after a failed reading: %v %v, want the last reading kept", m, ok)
	}
}

// waitUntil polls cond for up to 5 s.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
	}
}
