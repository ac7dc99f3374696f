package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Redis is a redis-server process of the harness's own, on a loopback port
// of its choosing with its files in a temporary directory, so that the
// suite can kill, restart and flush it. The machine's shared Redis is never
// touched. Persistence is off: a restart starts empty, as a Redis that lost
// its memory would.
type Redis struct {
	// Port is the server's TCP port on 127.0.0.1.
	Port int
	dir  string
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// NewRedis picks a free port and a temporary directory for a redis-server
// that is not started yet: until Start, nothing listens on Port.
func NewRedis() (*Redis, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, errors.New("redis-server not found: apt-get install redis-server")
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "coupond-redis-")
	if err != nil {
		return nil, err
	}
	return &Redis{Port: port, dir: dir}, nil
}

// Addr is host:port.
func (r *Redis) Addr() string { return fmt.Sprintf("127.0.0.1:%d", r.Port) }

// URL is the server's redis:// URL.
func (r *Redis) URL() string { return "redis://" + r.Addr() + "/0" }

// Start starts redis-server on Port and waits until it answers PING.
func (r *Redis) Start(ctx context.Context) error {
	r.mu.Lock()
	if r.cmd != nil {
		r.mu.Unlock()
		return nil
	}
	logf, err := os.OpenFile(filepath.Join(r.dir, "redis.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		r.mu.Unlock()
		return err
	}
	cmd := exec.Command("redis-server", "--port", fmt.Sprint(r.Port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", r.dir, "--protected-mode", "no")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		r.mu.Unlock()
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	r.cmd, r.done = cmd, done
	r.mu.Unlock()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if _, err := r.Do("PING"); err == nil {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("redis-server on port %d exited at start; see %s", r.Port, filepath.Join(r.dir, "redis.log"))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return fmt.Errorf("redis-server on port %d did not answer", r.Port)
}

// Kill kills the server with SIGKILL, as a crash would, and waits for it to
// exit. The port is free again afterwards.
func (r *Redis) Kill() {
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	r.cmd = nil
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// Close kills the server and removes its directory.
func (r *Redis) Close() {
	r.Kill()
	_ = os.RemoveAll(r.dir)
}

// Do sends one command and returns its reply line (simple strings,
// integers and errors; enough for PING, FLUSHALL and DBSIZE).
func (r *Redis) Do(args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", r.Addr(), time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if strings.HasPrefix(line, "-") {
		return "", errors.New(line[1:])
	}
	return strings.TrimLeft(line, "+:"), nil
}

// RedisCounters are a server's coupond_redis_*_total counters.
type RedisCounters struct {
	Hits      float64 `json:"hits"`
	Misses    float64 `json:"misses"`
	Waits     float64 `json:"waits"`
	Errors    float64 `json:"errors"`
	Fallbacks float64 `json:"fallbacks"`
}

// RedisCounters reads the server's Redis counters from one scrape of
// /metrics; ok is false when /metrics did not answer.
func (s *Server) RedisCounters() (RedisCounters, bool) {
	m := s.Metrics("coupond_redis_hits_total", "coupond_redis_misses_total", "coupond_redis_waits_total",
		"coupond_redis_errors_total", "coupond_redis_fallbacks_total")
	c := RedisCounters{Hits: m["coupond_redis_hits_total"], Misses: m["coupond_redis_misses_total"],
		Waits: m["coupond_redis_waits_total"], Errors: m["coupond_redis_errors_total"], Fallbacks: m["coupond_redis_fallbacks_total"]}
	return c, c.Hits >= 0 && c.Misses >= 0 && c.Fallbacks >= 0
}

// Add returns the sum of c and d.
func (c RedisCounters) Add(d RedisCounters) RedisCounters {
	return RedisCounters{Hits: c.Hits + d.Hits, Misses: c.Misses + d.Misses, Waits: c.Waits + d.Waits,
		Errors: c.Errors + d.Errors, Fallbacks: c.Fallbacks + d.Fallbacks}
}

// Sub returns c minus d.
func (c RedisCounters) Sub(d RedisCounters) RedisCounters {
	return RedisCounters{Hits: c.Hits - d.Hits, Misses: c.Misses - d.Misses, Waits: c.Waits - d.Waits,
		Errors: c.Errors - d.Errors, Fallbacks: c.Fallbacks - d.Fallbacks}
}
