package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Patroni is a throwaway high-availability PostgreSQL cluster of the
// harness's own: one etcd and two PostgreSQL nodes, each managed by a
// Patroni, all on loopback ports with their files in a temporary directory,
// for the failover faults. Patroni initdb's the first node, which becomes
// the primary; the second is cloned from it with pg_basebackup and streams
// from it. With Sync, Patroni's synchronous_mode names the standby in
// synchronous_standby_names and commits wait for its WAL flush
// (synchronous_commit = on); without it the standby is asynchronous.
type Patroni struct {
	// Nodes are the two PostgreSQL nodes, in start order.
	Nodes []*PatroniNode
	// Version is the PostgreSQL version of the binaries.
	Version string
	// Sync tells whether the standby is synchronous.
	Sync     bool
	dir      string
	bin      string
	cred     *syscall.Credential
	owner    *os.File
	etcd     *exec.Cmd
	etcdPort int
	scope    string
}

// PatroniNode is one PostgreSQL node and its Patroni.
type PatroniNode struct {
	// Name is the node's Patroni member name.
	Name string
	// PGPort is PostgreSQL's port on 127.0.0.1, APIPort Patroni's REST API's.
	PGPort, APIPort int
	dir             string
	cmd             *exec.Cmd
}

// patroniPrefix names the temporary directories of Patroni clusters (see
// clusterPrefix).
const patroniPrefix = "coupond-patroni-"

// StartPatroni starts etcd and two Patroni nodes and returns once the first
// is the primary and the second streams from it (as its synchronous standby
// with sync). As root, every process runs as the postgres OS user. The caller
// must Stop the cluster.
func StartPatroni(ctx context.Context, sync bool) (*Patroni, error) {
	for _, name := range []string{"patroni", "patronictl", "etcd"} {
		if _, err := exec.LookPath(name); err != nil {
			return nil, fmt.Errorf("%s not found: apt-get install patroni etcd-server", name)
		}
	}
	removeOrphanPatroni()
	bin, err := PGBinDir()
	if err != nil {
		return nil, err
	}
	// Patroni runs pg_controldata, pg_basebackup and pg_rewind from the same
	// directory as initdb: follow a symbolic link on PATH to Debian's.
	if real, err := filepath.EvalSymlinks(filepath.Join(bin, "initdb")); err == nil {
		bin = filepath.Dir(real)
	}
	p := &Patroni{bin: bin, Sync: sync}
	if out, err := exec.Command(filepath.Join(bin, "pg_ctl"), "--version").Output(); err == nil {
		if f := strings.Fields(string(out)); len(f) >= 3 {
			p.Version = f[2]
		}
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("PostgreSQL cannot run as root and there is no postgres user: %w", err)
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if p.dir, err = os.MkdirTemp("", patroniPrefix); err != nil {
		return nil, err
	}
	p.scope = filepath.Base(p.dir)
	ok := false
	defer func() {
		if !ok {
			p.Stop()
		}
	}()
	if p.owner, err = os.Create(filepath.Join(p.dir, "owner")); err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(p.owner.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil, err
	}
	if err := p.chown(p.dir, filepath.Join(p.dir, "owner")); err != nil {
		return nil, err
	}
	if err := p.startEtcd(ctx); err != nil {
		return nil, err
	}
	for i := 1; i <= 2; i++ {
		n := &PatroniNode{Name: fmt.Sprintf("node%d", i), dir: filepath.Join(p.dir, fmt.Sprintf("node%d", i))}
		if n.PGPort, err = FreePort(); err != nil {
			return nil, err
		}
		if n.APIPort, err = FreePort(); err != nil {
			return nil, err
		}
		if err := os.Mkdir(n.dir, 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(n.conf(), []byte(p.config(n)), 0o600); err != nil {
			return nil, err
		}
		if err := p.chown(n.dir, n.conf()); err != nil {
			return nil, err
		}
		p.Nodes = append(p.Nodes, n)
		if err := p.startNode(n); err != nil {
			return nil, err
		}
		if i == 1 {
			// The first node bootstraps alone, so that it is the primary.
			if _, err := p.WaitPrimary(ctx, 20*time.Second); err != nil {
				return nil, err
			}
		}
	}
	if err := p.WaitStandby(ctx, 90*time.Second); err != nil {
		return nil, err
	}
	ok = true
	return p, nil
}

// Hosts is the nodes' host:port list, comma separated, for a multi-host URL.
func (p *Patroni) Hosts() string {
	var hs []string
	for _, n := range p.Nodes {
		hs = append(hs, fmt.Sprintf("127.0.0.1:%d", n.PGPort))
	}
	return strings.Join(hs, ",")
}

// Env returns e pointed at the cluster through a multi-host URL with
// target_session_attrs=read-write, so that every connection finds the
// current primary, with postgres as the existing database.
func (p *Patroni) Env(e Env) Env {
	e.PGHost, e.PGPort, e.PGHosts, e.AdminDB = "127.0.0.1", p.Nodes[0].PGPort, p.Hosts(), "postgres"
	return e
}

// WaitPrimary waits until one node's Patroni answers 200 on /primary and its
// PostgreSQL accepts writes, and returns that node.
func (p *Patroni) WaitPrimary(ctx context.Context, timeout time.Duration) (*PatroniNode, error) {
	deadline := time.Now().Add(timeout)
	for {
		for _, n := range p.Nodes {
			if n.apiStatus("/primary") == http.StatusOK && n.writable(ctx) {
				return n, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no Patroni primary within %s:\n%s", timeout, p.logs())
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// WaitStandby waits until the primary has a streaming standby, a synchronous
// one when the cluster is Sync.
func (p *Patroni) WaitStandby(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	want := "async"
	if p.Sync {
		want = "sync"
	}
	for {
		if prim, err := p.Primary(); err == nil {
			var n int
			if conn, err := pgx.Connect(ctx, prim.url("postgres")); err == nil {
				_ = conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = $1`,
					want).Scan(&n)
				conn.Close(ctx)
			}
			// Patroni promotes only the standby its /sync key names: wait
			// until the standby's REST API says it is that one.
			path := "/async"
			if p.Sync {
				path = "/sync"
			}
			if n > 0 && p.Other(prim).apiStatus(path) == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s standby streaming within %s:\n%s", want, timeout, p.logs())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// KillPostmaster sends SIGKILL to node n's postmaster (not to its Patroni),
// as a crash of PostgreSQL on that machine would.
func (p *Patroni) KillPostmaster(n *PatroniNode) (int, error) {
	b, err := os.ReadFile(filepath.Join(n.dir, "data", "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("postmaster.pid of %s: %q", n.Name, b)
	}
	return pid, syscall.Kill(pid, syscall.SIGKILL)
}

// Switchover runs `patronictl switchover` from the current primary to the
// other node, without waiting for a schedule, and returns its output.
func (p *Patroni) Switchover(ctx context.Context, from, to *PatroniNode) (string, error) {
	cmd := exec.CommandContext(ctx, "patronictl", "-c", from.conf(), "switchover", p.scope,
		"--leader", from.Name, "--candidate", to.Name, "--force")
	cmd.Dir = p.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: p.cred}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("patronictl switchover: %w: %s", err, out.String())
	}
	return out.String(), nil
}

// WaitPrimaryOther waits until a node other than old is the primary and
// accepts writes, and returns it.
func (p *Patroni) WaitPrimaryOther(ctx context.Context, old *PatroniNode, timeout time.Duration) (*PatroniNode, error) {
	n := p.Other(old)
	deadline := time.Now().Add(timeout)
	for {
		if n.apiStatus("/primary") == http.StatusOK && n.writable(ctx) {
			return n, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s not primary within %s:\n%s", n.Name, timeout, p.logs())
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// SetSync turns Patroni's synchronous_mode on or off for the whole cluster
// (`patronictl edit-config`); WaitStandby then waits for the standby to be
// in the new mode.
func (p *Patroni) SetSync(ctx context.Context, sync bool) error {
	cmd := exec.CommandContext(ctx, "patronictl", "-c", p.Nodes[0].conf(), "edit-config", p.scope,
		"--set", fmt.Sprintf("synchronous_mode=%t", sync), "--force")
	cmd.Dir = p.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: p.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("patronictl edit-config: %w: %s", err, out)
	}
	p.Sync = sync
	return nil
}

// Other returns the node that is not n.
func (p *Patroni) Other(n *PatroniNode) *PatroniNode {
	if p.Nodes[0] == n {
		return p.Nodes[1]
	}
	return p.Nodes[0]
}

// Stop kills every process of the cluster and removes its directory. It is
// safe to call on a cluster that failed to start.
func (p *Patroni) Stop() {
	if p.dir == "" {
		return
	}
	for _, n := range p.Nodes {
		if n.cmd != nil && n.cmd.Process != nil {
			_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
			_ = n.cmd.Wait()
		}
	}
	stopPatroniDir(p.dir, p.bin, p.cred)
	if p.etcd != nil && p.etcd.Process != nil {
		_ = syscall.Kill(-p.etcd.Process.Pid, syscall.SIGKILL)
		_ = p.etcd.Wait()
	}
	_ = os.RemoveAll(p.dir)
	if p.owner != nil {
		p.owner.Close()
	}
}

func (p *Patroni) chown(paths ...string) error {
	if p.cred == nil {
		return nil
	}
	for _, path := range paths {
		if err := os.Chown(path, int(p.cred.Uid), int(p.cred.Gid)); err != nil {
			return err
		}
	}
	return nil
}

func (p *Patroni) startEtcd(ctx context.Context) error {
	var err error
	if p.etcdPort, err = FreePort(); err != nil {
		return err
	}
	peer, err := FreePort()
	if err != nil {
		return err
	}
	data := filepath.Join(p.dir, "etcd")
	client := fmt.Sprintf("http://127.0.0.1:%d", p.etcdPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
	p.etcd = exec.Command("etcd", "--name", "etcd1", "--data-dir", data,
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "etcd1="+peerURL, "--initial-cluster-state", "new",
		"--initial-cluster-token", p.scope)
	p.etcd.Dir = p.dir
	p.etcd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: p.cred}
	logf, err := os.Create(filepath.Join(p.dir, "etcd.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	p.etcd.Stdout, p.etcd.Stderr = logf, logf
	if err := p.etcd.Start(); err != nil {
		return fmt.Errorf("start etcd: %w", err)
	}
	_ = os.WriteFile(filepath.Join(p.dir, "etcd.pid"), []byte(strconv.Itoa(p.etcd.Process.Pid)), 0o600)
	for start := time.Now(); time.Since(start) < 30*time.Second; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(client + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	b, _ := os.ReadFile(filepath.Join(p.dir, "etcd.log"))
	return fmt.Errorf("etcd not healthy within 30 s: %s", tail(string(b), 2000))
}

func (p *Patroni) startNode(n *PatroniNode) error {
	n.cmd = exec.Command("patroni", n.conf())
	n.cmd.Dir = n.dir
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: p.cred}
	logf, err := os.Create(filepath.Join(p.dir, n.Name+".log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	n.cmd.Stdout, n.cmd.Stderr = logf, logf
	if err := n.cmd.Start(); err != nil {
		return fmt.Errorf("start patroni %s: %w", n.Name, err)
	}
	_ = os.WriteFile(filepath.Join(p.dir, n.Name+".pid"), []byte(strconv.Itoa(n.cmd.Process.Pid)), 0o600)
	return nil
}

// config is node n's Patroni configuration: loop_wait 1 s so that a crash is
// seen within a second, primary_start_timeout 0 so that a crashed primary
// fails over at once instead of being restarted in place (Patroni promotes
// only a standby that is synchronous, or within maximum_lag_on_failover),
// and trust authentication on loopback.
func (p *Patroni) config(n *PatroniNode) string {
	return fmt.Sprintf(`scope: %[1]s
namespace: /coupond-bench/
name: %[2]s
restapi:
  listen: 127.0.0.1:%[3]d
  connect_address: 127.0.0.1:%[3]d
etcd3:
  hosts: 127.0.0.1:%[4]d
bootstrap:
  dcs:
    ttl: 20
    loop_wait: 1
    retry_timeout: 5
    primary_start_timeout: 0
    maximum_lag_on_failover: 67108864
    synchronous_mode: %[5]t
    postgresql:
      use_pg_rewind: true
      parameters:
        synchronous_commit: "on"
        max_connections: 60
        shared_buffers: 16MB
        wal_log_hints: "on"
        max_wal_senders: 5
        max_replication_slots: 5
        fsync: "on"
        full_page_writes: "on"
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
    - auth: trust
    - no-sync
postgresql:
  listen: 127.0.0.1:%[6]d
  connect_address: 127.0.0.1:%[6]d
  data_dir: %[7]s/data
  bin_dir: %[8]s
  pgpass: %[7]s/pgpass
  authentication:
    superuser:
      username: postgres
      password: postgres
    replication:
      username: postgres
      password: postgres
  parameters:
    unix_socket_directories: %[7]s
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
`, p.scope, n.Name, n.APIPort, p.etcdPort, p.Sync, n.PGPort, n.dir, p.bin)
}

// logs is the end of every node's Patroni log, for errors.
func (p *Patroni) logs() string {
	var b strings.Builder
	for _, n := range p.Nodes {
		l, _ := os.ReadFile(filepath.Join(p.dir, n.Name+".log"))
		var errs []string
		for _, line := range strings.Split(string(l), "\n") {
			if strings.Contains(line, "ERROR") || strings.Contains(line, "FATAL") {
				errs = append(errs, line)
			}
		}
		if len(errs) > 10 {
			errs = errs[:10]
		}
		fmt.Fprintf(&b, "--- %s: first errors:\n%s\n--- end:\n%s\n", n.Name, strings.Join(errs, "\n"), tail(string(l), 1500))
	}
	return b.String()
}

// Logs is the end of every node's Patroni log.
func (p *Patroni) Logs() string { return p.logs() }

func (n *PatroniNode) conf() string { return filepath.Join(n.dir, "patroni.yml") }

func (n *PatroniNode) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable&connect_timeout=2", n.PGPort, db)
}

// apiStatus is the status of GET path on the node's REST API, 0 when it
// does not answer.
func (n *PatroniNode) apiStatus(path string) int {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d%s", n.APIPort, path))
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (n *PatroniNode) writable(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, n.url("postgres"))
	if err != nil {
		return false
	}
	defer conn.Close(ctx)
	var ro string
	return conn.QueryRow(ctx, "SHOW transaction_read_only").Scan(&ro) == nil && ro == "off"
}

// stopPatroniDir stops the PostgreSQL of every node under dir.
func stopPatroniDir(dir, bin string, cred *syscall.Credential) {
	nodes, _ := filepath.Glob(filepath.Join(dir, "node*"))
	for _, n := range nodes {
		stopCluster(n, bin, cred)
	}
}

// removeOrphanPatroni stops and removes the Patroni clusters whose run is
// gone (see removeOrphanClusters). Their Patroni and etcd processes died with
// the run's process group only if it was killed as a group: the PostgreSQL
// servers are stopped here through their data directories.
func removeOrphanPatroni() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), patroniPrefix+"*"))
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
			f.Close()
			continue
		}
		var cred *syscall.Credential
		if st, err := os.Stat(dir); err == nil && os.Geteuid() == 0 {
			if s, ok := st.Sys().(*syscall.Stat_t); ok && s.Uid != 0 {
				cred = &syscall.Credential{Uid: s.Uid, Gid: s.Gid}
			}
		}
		// Patroni first, or it would start its PostgreSQL again; each was
		// started as the leader of its own process group.
		pids, _ := filepath.Glob(filepath.Join(dir, "*.pid"))
		for _, pf := range pids {
			if b, err := os.ReadFile(pf); err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
					_ = syscall.Kill(-pid, syscall.SIGKILL)
				}
			}
		}
		stopPatroniDir(dir, bin, cred)
		_ = os.RemoveAll(dir)
		f.Close()
	}
}

var errNoPrimary = errors.New("no primary")

// Primary returns the node whose Patroni reports it primary now, or an error.
func (p *Patroni) Primary() (*PatroniNode, error) {
	for _, n := range p.Nodes {
		if n.apiStatus("/primary") == http.StatusOK {
			return n, nil
		}
	}
	return nil, errNoPrimary
}
