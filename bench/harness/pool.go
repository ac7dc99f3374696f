package harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Daemon is a helper process the harness started (pgbouncer, haproxy).
type Daemon struct {
	Port int
	cmd  *exec.Cmd
	done chan struct{}
	dir  string
}

// Stop terminates the process and removes its files.
func (d *Daemon) Stop() {
	if d == nil {
		return
	}
	if d.cmd != nil && d.cmd.Process != nil {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(5 * time.Second):
			_ = d.cmd.Process.Kill()
			<-d.done
		}
	}
	_ = os.RemoveAll(d.dir)
}

// startDaemon writes files into a directory of its own, runs name with args
// (as the postgres user when asUser and running as root) and waits until it
// listens on port.
func startDaemon(ctx context.Context, label, name string, args func(dir string) []string, files func(dir string) map[string]string, port int, asPostgres bool) (*Daemon, error) {
	dir, err := os.MkdirTemp("", "coupond-bench-"+label+"-")
	if err != nil {
		return nil, err
	}
	for f, body := range files(dir) {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(name, args(dir)...)
	cmd.Dir = dir
	logf, err := os.Create(filepath.Join(dir, "out.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if asPostgres && os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("%s must not run as root and there is no postgres user: %w", label, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", label, err)
	}
	d := &Daemon{Port: port, cmd: cmd, done: make(chan struct{}), dir: dir}
	go func() { _ = cmd.Wait(); logf.Close(); close(d.done) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			_ = c.Close()
			return d, nil
		}
		select {
		case <-d.done:
			out, _ := os.ReadFile(filepath.Join(dir, "out.log"))
			d.Stop()
			return nil, fmt.Errorf("%s exited: %s", label, out)
		case <-ctx.Done():
			d.Stop()
			return nil, ctx.Err()
		default:
		}
		if time.Now().After(deadline) {
			d.Stop()
			return nil, fmt.Errorf("%s did not listen on %d", label, port)
		}
	}
}

// StartPgBouncer runs Debian's pgbouncer in transaction mode on a free
// loopback port in front of the harness's PostgreSQL, with poolSize server
// connections per database (trust authentication, user postgres).
func (e Env) StartPgBouncer(ctx context.Context, poolSize int) (*Daemon, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	return startDaemon(ctx, "pgbouncer", "pgbouncer", func(dir string) []string { return []string{filepath.Join(dir, "pgbouncer.ini")} },
		func(dir string) map[string]string {
			return map[string]string{
				"pgbouncer.ini": fmt.Sprintf(`[databases]
* = host=%s port=%d

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = %d
max_client_conn = 2000
ignore_startup_parameters = extra_float_digits,application_name
server_reset_query =
logfile = %s
`, e.PGHost, e.PGPort, port, filepath.Join(dir, "userlist.txt"), poolSize, filepath.Join(dir, "pgbouncer.log")),
				"userlist.txt": "\"postgres\" \"\"\n",
			}
		}, port, true)
}

// StartHAProxy runs haproxy on a free loopback port balancing HTTP requests
// round-robin over the servers, each checked on /readyz.
func (e Env) StartHAProxy(ctx context.Context, servers []*Server) (*Daemon, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	var backends strings.Builder
	for i, s := range servers {
		fmt.Fprintf(&backends, "  server s%d 127.0.0.1:%d check inter 1s\n", i, s.Config().Port)
	}
	cfg := fmt.Sprintf(`global
  maxconn 4000
defaults
  mode http
  timeout connect 5s
  timeout client 60s
  timeout server 60s
  option http-keep-alive
frontend api
  bind 127.0.0.1:%d
  default_backend coupond
backend coupond
  balance roundrobin
  option httpchk GET /readyz
%s`, port, backends.String())
	return startDaemon(ctx, "haproxy", "haproxy", func(dir string) []string { return []string{"-db", "-f", filepath.Join(dir, "haproxy.cfg")} },
		func(string) map[string]string { return map[string]string{"haproxy.cfg": cfg} }, port, false)
}
