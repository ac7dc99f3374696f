// Package testpgbouncer runs a real pgbouncer in transaction mode on a
// loopback port in front of the PostgreSQL server named by TEST_DATABASE_URL,
// for tests of coupond through a pooler. Where pgbouncer is not installed the
// test is skipped, except under CI=true, where it fails.
package testpgbouncer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"coupond/models"
)

// Bouncer is a running pgbouncer.
type Bouncer struct {
	// DirectURL reaches the test's database on PostgreSQL itself, for
	// migrations, which take a session-level lock.
	DirectURL string
	// URL reaches the same database through pgbouncer.
	URL string
	cmd *exec.Cmd
	dir string
}

// Start creates a fresh database on TEST_DATABASE_URL's server (dropped when
// the test ends; pgbouncer cannot pass a search_path, so a schema of its own
// would not do) and starts pgbouncer in transaction mode in front of it, with
// poolSize server connections.
func Start(t testing.TB, poolSize int) *Bouncer {
	t.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		unavailable(t, "TEST_DATABASE_URL is not set")
	}
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/pgbouncer"); serr != nil {
			unavailable(t, "pgbouncer is not installed (apt-get install pgbouncer)")
		}
		bin = "/usr/sbin/pgbouncer"
	}
	bu, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	admin, err := models.Open(ctx, base, models.OpenOptions{MaxOpenConns: 1})
	if err != nil {
		t.Fatalf("connect to %s: %v", base, err)
	}
	defer models.Close(admin)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "coupond_pgb_" + hex.EncodeToString(b)
	if err := admin.Exec("CREATE DATABASE " + name).Error; err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		admin, err := models.Open(ctx, base, models.OpenOptions{MaxOpenConns: 1})
		if err != nil {
			t.Errorf("connect for cleanup: %v", err)
			return
		}
		defer models.Close(admin)
		if err := admin.Exec("DROP DATABASE " + name + " WITH (FORCE)").Error; err != nil {
			t.Errorf("drop database: %v", err)
		}
	})
	direct := *bu
	direct.Path = "/" + name
	q := direct.Query()
	q.Del("search_path")
	direct.RawQuery = q.Encode()

	dir, err := os.MkdirTemp("", "coupond-pgbouncer-")
	if err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	host, pgPort := bu.Hostname(), bu.Port()
	if pgPort == "" {
		pgPort = "5432"
	}
	dbUser := "postgres"
	if bu.User != nil && bu.User.Username() != "" {
		dbUser = bu.User.Username()
	}
	ini := fmt.Sprintf(`[databases]
* = host=%s port=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = %d
max_client_conn = 1000
ignore_startup_parameters = extra_float_digits
server_reset_query =
logfile = %s
pidfile = %s
`, host, pgPort, port, filepath.Join(dir, "userlist.txt"), poolSize, filepath.Join(dir, "pgbouncer.log"), filepath.Join(dir, "pgbouncer.pid"))
	files := map[string]string{"pgbouncer.ini": ini, "userlist.txt": fmt.Sprintf("%q \"\"\n", dbUser)}
	for f, body := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	cmd.Dir = dir
	if os.Geteuid() == 0 {
		// pgbouncer refuses to run as root.
		u, err := user.Lookup("postgres")
		if err != nil {
			unavailable(t, "running as root and there is no postgres user to run pgbouncer as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	out, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start pgbouncer: %v", err)
	}
	bnc := &Bouncer{DirectURL: direct.String(), cmd: cmd, dir: dir}
	t.Cleanup(bnc.stop)
	via := direct
	via.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	bnc.URL = via.String()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.Dial("tcp", via.Host)
		if err == nil {
			_ = c.Close()
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "stdout"))
			t.Fatalf("pgbouncer did not listen: %s", log)
		}
	}
	return bnc
}

func (b *Bouncer) stop() {
	if b.cmd.Process != nil {
		_ = b.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = b.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = b.cmd.Process.Kill()
			<-done
		}
	}
	_ = os.RemoveAll(b.dir)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("pgbouncer test cannot run: %s", why)
	}
	t.Skipf("pgbouncer test cannot run: %s", why)
}
