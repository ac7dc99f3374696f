package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Cluster is a throwaway PostgreSQL cluster of the harness's own, made with
// initdb in a temporary directory and listening on 127.0.0.1 only, for the
// faults that restart PostgreSQL: the machine's shared server must not be
// restarted. Durability settings are PostgreSQL's defaults (fsync,
// synchronous_commit and full_page_writes on).
type Cluster struct {
	// Port is the cluster's TCP port on 127.0.0.1.
	Port int
	// Version is the PostgreSQL version of the binaries.
	Version string
	dir     string // the temporary directory: data/, the Unix socket, server.log
	bin     string // the directory of initdb, pg_ctl and postgres
	cred    *syscall.Credential
	owner   *os.File // the directory's owner file, locked while this process lives
}

// clusterPrefix names the temporary directories of clusters, so that a later
// run can find and remove those a killed run left behind.
const clusterPrefix = "coupond-pg-"

// PGBinDir finds the directory holding initdb and pg_ctl: on PATH, else the
// newest of Debian's /usr/lib/postgresql/<version>/bin.
func PGBinDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(m) == 0 {
		return "", errors.New("initdb not found: apt-get install postgresql")
	}
	version := func(p string) float64 {
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(filepath.Dir(p))), 64)
		return v
	}
	sort.Slice(m, func(i, j int) bool { return version(m[i]) < version(m[j]) })
	return filepath.Dir(m[len(m)-1]), nil
}

// StartCluster creates a cluster in a new temporary directory (trust
// authentication, superuser postgres, small shared_buffers), starts it on a
// free port and waits until it accepts connections. initdb and postgres refuse
// to run as root, so as root they run as the postgres OS user, which then owns
// the directory. Clusters left behind by runs that no longer exist are
// stopped and removed first. The caller must Stop the cluster.
func StartCluster(ctx context.Context) (*Cluster, error) {
	removeOrphanClusters()
	bin, err := PGBinDir()
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin}
	if out, err := exec.Command(filepath.Join(bin, "pg_ctl"), "--version").Output(); err == nil {
		// "pg_ctl (PostgreSQL) 15.14 (Debian 15.14-0+deb12u1)"
		if f := strings.Fields(string(out)); len(f) >= 3 {
			c.Version = f[2]
		}
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("initdb cannot run as root and there is no postgres user: %w", err)
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if c.dir, err = os.MkdirTemp("", clusterPrefix); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			c.Stop()
		}
	}()
	// The lock on the owner file tells a later run whether this one still
	// lives: the kernel drops it with the process, however it ends.
	if c.owner, err = os.Create(filepath.Join(c.dir, "owner")); err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(c.owner.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil, err
	}
	if _, err := fmt.Fprintln(c.owner, os.Getpid()); err != nil {
		return nil, err
	}
	if c.cred != nil {
		for _, p := range []string{c.dir, filepath.Join(c.dir, "owner")} {
			if err := os.Chown(p, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
				return nil, err
			}
		}
	}
	// --no-sync only skips initdb's own flush of the files it wrote: the
	// faults restart PostgreSQL, not the machine, and the server runs with
	// fsync on.
	if err := c.run(ctx, "initdb", "-D", c.data(), "-A", "trust", "-U", "postgres", "-E", "UTF8",
		"--locale=C.UTF-8", "--no-sync"); err != nil {
		return nil, err
	}
	if c.Port, err = FreePort(); err != nil {
		return nil, err
	}
	conf := fmt.Sprintf(`
# coupond bench harness
port = %d
listen_addresses = '127.0.0.1'
unix_socket_directories = '%s'
max_connections = 50
shared_buffers = 16MB
fsync = on
synchronous_commit = on
full_page_writes = on
`, c.Port, c.dir)
	f, err := os.OpenFile(filepath.Join(c.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString(conf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := c.pgctl(ctx, "start"); err != nil {
		return nil, err
	}
	ok = true
	return c, nil
}

// Env returns e pointed at the cluster: 127.0.0.1:Port, with postgres as the
// existing database to create and drop others from.
func (c *Cluster) Env(e Env) Env {
	e.PGHost, e.PGPort, e.AdminDB = "127.0.0.1", c.Port, "postgres"
	return e
}

// Restart restarts the server with `pg_ctl restart -m mode` (smart, fast or
// immediate) and returns once it accepts connections again. It fails if
// pg_ctl fails or the server is not ready within a minute.
func (c *Cluster) Restart(ctx context.Context, mode string) error {
	return c.pgctl(ctx, "restart", "-m", mode)
}

// LogSize is the current length of the server log, to read what a later
// step logged with LogSince.
func (c *Cluster) LogSize() int64 {
	st, err := os.Stat(c.logPath())
	if err != nil {
		return 0
	}
	return st.Size()
}

// LogSince returns the server log from byte offset on.
func (c *Cluster) LogSince(offset int64) (string, error) {
	b, err := os.ReadFile(c.logPath())
	if err != nil {
		return "", err
	}
	if offset > int64(len(b)) {
		offset = int64(len(b))
	}
	return string(b[offset:]), nil
}

// Stop stops the server at once (its data is thrown away) and removes the
// directory. It is safe to call on a cluster that failed to start.
func (c *Cluster) Stop() {
	if c.dir == "" {
		return
	}
	stopCluster(c.dir, c.bin, c.cred)
	_ = os.RemoveAll(c.dir)
	if c.owner != nil {
		c.owner.Close()
	}
}

func (c *Cluster) data() string    { return filepath.Join(c.dir, "data") }
func (c *Cluster) logPath() string { return filepath.Join(c.dir, "server.log") }

// pgctl runs pg_ctl action on the cluster, waiting up to a minute for it to
// complete. The server's output goes to server.log (-l): without it the
// postmaster would inherit pg_ctl's output and hold it open.
func (c *Cluster) pgctl(ctx context.Context, action string, args ...string) error {
	return c.run(ctx, "pg_ctl", append([]string{action, "-D", c.data(), "-l", c.logPath(), "-w", "-t", "60", "-s"}, args...)...)
}

// run runs one of the PostgreSQL binaries as the cluster's OS user, in its
// own process group so that a Ctrl-C at the terminal does not reach the
// postmaster it starts: the suite stops the cluster itself.
func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: c.cred}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if b, rerr := os.ReadFile(c.logPath()); rerr == nil && len(b) > 0 {
			msg += "\nserver.log (end):\n" + tail(string(b), 2000)
		}
		return fmt.Errorf("%s %s: %w: %s", name, args[0], err, msg)
	}
	return nil
}

// stopCluster stops the cluster in dir with an immediate shutdown, or, if
// pg_ctl cannot, with SIGQUIT to the postmaster named in postmaster.pid.
func stopCluster(dir, bin string, cred *syscall.Credential) {
	data := filepath.Join(dir, "data")
	pidFile := filepath.Join(data, "postmaster.pid")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return // never started, or stopped
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "pg_ctl"), "stop", "-D", data, "-m", "immediate", "-w", "-t", "20", "-s")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	if cmd.Run() == nil {
		return
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])); err == nil && pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGQUIT)
	}
}

// removeOrphanClusters stops and removes the clusters whose owner process
// (the run that made them) is gone, such as those of a run killed by
// SIGKILL, which could not stop its own: their owner file is not locked.
func removeOrphanClusters() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), clusterPrefix+"*"))
	if len(dirs) == 0 {
		return
	}
	bin, err := PGBinDir()
	if err != nil {
		return
	}
	for _, dir := range dirs {
		f, err := os.Open(filepath.Join(dir, "owner"))
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			f.Close() // its run still lives
			continue
		}
		var cred *syscall.Credential
		if st, err := os.Stat(dir); err == nil && os.Geteuid() == 0 {
			if s, ok := st.Sys().(*syscall.Stat_t); ok && s.Uid != 0 {
				cred = &syscall.Credential{Uid: s.Uid, Gid: s.Gid}
			}
		}
		stopCluster(dir, bin, cred)
		_ = os.RemoveAll(dir)
		f.Close()
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
