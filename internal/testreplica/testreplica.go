// Package testreplica starts a real PostgreSQL streaming replica of the
// server named by TEST_DATABASE_URL for a test: pg_basebackup -R into a
// temporary directory, then pg_ctl start on a free loopback port, stopped and
// removed when the test ends. The primary must accept replication connections
// from 127.0.0.1 (pg_hba.conf: "host replication all 127.0.0.1/32 trust";
// .ci/run adds it). Where it cannot run, the test is skipped with the reason,
// except under CI=true, where it fails.
package testreplica

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"coupond/models"
)

// Replica is a running streaming replica.
type Replica struct {
	// URL is the primary's URL with the replica's host and port: the same
	// database and parameters (search_path included).
	URL string
	dir string
	bin string
	db  *gorm.DB
}

// Start starts a replica of the server behind primaryURL, which must be a
// URL on TEST_DATABASE_URL's server, and waits until it accepts connections.
func Start(t testing.TB, primaryURL string) *Replica {
	t.Helper()
	bin := binDir()
	if bin == "" {
		unavailable(t, "PostgreSQL server binaries (pg_basebackup, pg_ctl) not found")
	}
	pu, err := url.Parse(primaryURL)
	if err != nil {
		t.Fatalf("parse primary URL: %v", err)
	}
	host, port := pu.Hostname(), pu.Port()
	if port == "" {
		port = "5432"
	}
	ctx := context.Background()
	admin, err := models.Open(ctx, primaryURL, models.OpenOptions{MaxOpenConns: 1})
	if err != nil {
		t.Fatalf("connect to primary: %v", err)
	}
	// A standby refuses to start with these below the primary's.
	settings := map[string]string{}
	for _, name := range []string{"max_connections", "max_worker_processes", "max_wal_senders",
		"max_prepared_transactions", "max_locks_per_transaction"} {
		var v string
		if err := admin.Raw("SELECT current_setting(?)", name).Scan(&v).Error; err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		settings[name] = v
	}
	_ = models.Close(admin)

	dir, err := os.MkdirTemp("", "coupond-replica-")
	if err != nil {
		t.Fatal(err)
	}
	r := &Replica{dir: dir, bin: bin}
	t.Cleanup(r.stop)
	if err := r.chown(dir); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	out, err := r.run(filepath.Join(bin, "pg_basebackup"), "-h", host, "-p", port, "-U", userOf(pu),
		"-D", data, "-R", "-X", "stream", "-c", "fast", "--no-sync")
	if err != nil {
		unavailable(t, fmt.Sprintf("pg_basebackup from %s:%s failed (does pg_hba.conf allow replication from 127.0.0.1?): %v: %s", host, port, err, out))
	}
	freePort, err := freeTCPPort()
	if err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("listen_addresses = '127.0.0.1'\nport = %d\nunix_socket_directories = '%s'\nhot_standby = on\nfsync = off\nshared_buffers = 16MB\n", freePort, dir)
	for k, v := range settings {
		conf += fmt.Sprintf("%s = %s\n", k, v)
	}
	// Debian keeps the configuration outside the data directory, so the
	// backup has none of its own.
	for name, body := range map[string]string{
		"postgresql.conf": conf,
		"pg_hba.conf":     "local all all trust\nhost all all 127.0.0.1/32 trust\n",
		"pg_ident.conf":   "",
	} {
		p := filepath.Join(data, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := r.chown(p); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := r.run(filepath.Join(bin, "pg_ctl"), "-D", data, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		t.Fatalf("start replica: %v: %s\n%s", err, out, log)
	}
	ru := *pu
	ru.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort))
	r.URL = ru.String()
	r.db, err = models.Open(ctx, r.URL, models.OpenOptions{MaxOpenConns: 2})
	if err != nil {
		t.Fatalf("connect to replica: %v", err)
	}
	return r
}

// Exec runs a statement on the replica, such as SELECT pg_wal_replay_pause().
func (r *Replica) Exec(t testing.TB, sql string) {
	t.Helper()
	if err := r.db.Exec(sql).Error; err != nil {
		t.Fatalf("%s on replica: %v", sql, err)
	}
}

// WaitCaughtUp waits until the replica has replayed the primary's WAL as of
// now, at most timeout.
func (r *Replica) WaitCaughtUp(t testing.TB, primary *gorm.DB, timeout time.Duration) {
	t.Helper()
	var lsn string
	if err := primary.Raw("SELECT pg_current_wal_lsn()::text").Scan(&lsn).Error; err != nil {
		t.Fatalf("primary WAL position: %v", err)
	}
	deadline := time.Now().Add(timeout)
	for {
		var done bool
		err := r.db.Raw("SELECT pg_last_wal_replay_lsn() >= ?::pg_lsn", lsn).Scan(&done).Error
		if err == nil && done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica did not replay up to %s within %s (err %v)", lsn, timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Halt stops the replica's server at once (as a crash would), keeping its
// data for Resume.
func (r *Replica) Halt(t testing.TB) {
	t.Helper()
	if out, err := r.run(filepath.Join(r.bin, "pg_ctl"), "-D", filepath.Join(r.dir, "data"), "-m", "immediate", "-w", "stop"); err != nil {
		t.Fatalf("halt replica: %v: %s", err, out)
	}
}

// Resume starts the halted replica again and waits until it accepts
// connections.
func (r *Replica) Resume(t testing.TB) {
	t.Helper()
	if out, err := r.run(filepath.Join(r.bin, "pg_ctl"), "-D", filepath.Join(r.dir, "data"), "-l", filepath.Join(r.dir, "log"),
		"-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(r.dir, "log"))
		t.Fatalf("resume replica: %v: %s\n%s", err, out, log)
	}
}

func (r *Replica) stop() {
	if r.db != nil {
		_ = models.Close(r.db)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "data", "postmaster.pid")); err == nil {
		_, _ = r.run(filepath.Join(r.bin, "pg_ctl"), "-D", filepath.Join(r.dir, "data"), "-m", "immediate", "-w", "stop")
	}
	_ = os.RemoveAll(r.dir)
}

// run runs a PostgreSQL program, as the postgres user when the test runs as
// root (the server refuses to run as root).
func (r *Replica) run(name string, args ...string) ([]byte, error) {
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
	} else {
		cmd = exec.Command(name, args...)
	}
	cmd.Dir = r.dir
	return cmd.CombinedOutput()
}

func (r *Replica) chown(path string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(path, uid, gid)
}

func userOf(u *url.URL) string {
	if u.User != nil && u.User.Username() != "" {
		return u.User.Username()
	}
	return "postgres"
}

// binDir finds the server binaries: pg_config's, or Debian's newest.
func binDir() string {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		d := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	if len(matches) == 0 {
		return ""
	}
	return filepath.Dir(matches[len(matches)-1])
}

func freeTCPPort() (int, error) {
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
		t.Fatalf("read replica test cannot run: %s", why)
	}
	t.Skipf("read replica test cannot run: %s", why)
}
