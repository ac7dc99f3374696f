package main

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestConnLimitClosesIdleConnections holds three keep-alive clients idle
// against a server limited to three connections, with an idle timeout of an
// hour: the fourth client must still be served at once, because reaching the
// limit closes the idle connections, and the server never holds more than
// three open.
func TestConnLimitClosesIdleConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &connLimit{max: 3, log: slog.New(slog.DiscardHandler)}
	counted := &countingListener{Listener: ln}
	srv := &http.Server{IdleTimeout: time.Hour,
		Handler:   http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }),
		ConnState: l.connState(func(net.Conn, http.ConnState) {})}
	l.srv = srv
	go func() { _ = srv.Serve(l.listen(counted)) }()
	t.Cleanup(func() { _ = srv.Close() })

	url := "http://" + ln.Addr().String() + "/"
	get := func(c *http.Client) error {
		resp, err := c.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		return err
	}
	var clients []*http.Client
	for range 3 {
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
		clients = append(clients, c)
		if err := get(c); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			errs <- get(&http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a client past the limit was not served: %v", err)
		}
	}
	if m := counted.most.Load(); m > 3 {
		t.Fatalf("%d connections open at once, limit 3", m)
	}
	for _, c := range clients {
		if err := get(c); err != nil {
			t.Fatalf("a client whose idle connection was closed could not reconnect: %v", err)
		}
	}
}

// countingListener counts its connections open at once, and the most ever.
type countingListener struct {
	net.Listener
	open, most atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	n := l.open.Add(1)
	for m := l.most.Load(); n > m && !l.most.CompareAndSwap(m, n); m = l.most.Load() {
	}
	return &countedConn{Conn: c, l: l}, nil
}

type countedConn struct {
	net.Conn
	l    *countingListener
	once sync.Once
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}
