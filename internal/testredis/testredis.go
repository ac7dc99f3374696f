// Package testredis runs a redis-server of the test's own on a free loopback
// port, so tests can stop and start it; it never touches a shared server.
package testredis

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a redis-server process owned by one test.
type Server struct {
	t    testing.TB
	Port int
	dir  string
	cmd  *exec.Cmd
}

// New picks a free port and starts a redis-server on it, stopped when the
// test ends. Without a redis-server binary the test is skipped, except under
// CI=true, where it fails.
func New(t testing.TB) *Server {
	t.Helper()
	s := Reserve(t)
	s.Start()
	return s
}

// Reserve picks a free port for a server that is not started yet.
func Reserve(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed")
		}
		t.Skip("redis-server is not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &Server{t: t, Port: port, dir: t.TempDir()}
	t.Cleanup(s.Stop)
	return s
}

// URL is the server's redis:// URL.
func (s *Server) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.Port) }

// Start starts the server and waits until it answers.
func (s *Server) Start() {
	s.t.Helper()
	if s.cmd != nil {
		return
	}
	cmd := exec.Command("redis-server", "--port", fmt.Sprint(s.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir)
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	s.cmd = cmd
	c := s.Client()
	defer c.Close()
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(10 * time.Millisecond) {
		if c.Ping(context.Background()).Err() == nil {
			return
		}
	}
	s.t.Fatalf("redis-server on port %d did not answer", s.Port)
}

// Stop kills the server, as a crash would, and waits for it to exit.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Client is a plain client of the server, for a test to read and plant keys.
func (s *Server) Client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", s.Port), DisableIdentity: true})
}
