// Package harness starts and drives coupond for the benchmark and the fault
// suite through its public surfaces only: the coupond binary (serve, migrate,
// merchant, token, audit), its HTTP/GraphQL API and /metrics, and direct SQL
// on the database for setup and inspection.
package harness

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Env names the coupond binary, the PostgreSQL server and a scratch directory.
type Env struct {
	// Bin is the coupond binary.
	Bin string
	// PGHost and PGPort locate PostgreSQL (trust auth, user postgres).
	PGHost string
	PGPort int
	// PGHosts, when set, is a host:port list that DBURL names instead of
	// PGHost:PGPort, with target_session_attrs=read-write: every connection
	// goes to whichever of them is the primary (a Patroni cluster).
	PGHosts string
	// AdminDB is an existing database to connect to for CREATE/DROP DATABASE.
	AdminDB string
	// Dir holds server logs.
	Dir string
}

// DBURL returns the URL of database name through host:port.
func (e Env) DBURL(name string, port int) string {
	if port == 0 && e.PGHosts != "" {
		return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable&target_session_attrs=read-write&connect_timeout=2", e.PGHosts, name)
	}
	if port == 0 {
		port = e.PGPort
	}
	return fmt.Sprintf("postgres://postgres@%s:%d/%s?sslmode=disable", e.PGHost, port, name)
}

// RecreateDB drops database name (terminating its sessions) and creates it
// empty.
func (e Env) RecreateDB(ctx context.Context, name string) error {
	pool, err := pgxpool.New(ctx, e.DBURL(e.AdminDB, 0))
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop %s: %w", name, err)
	}
	if _, err := pool.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	return nil
}

// DropDB drops database name.
func (e Env) DropDB(ctx context.Context, name string) error {
	return e.adminExec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
}

// Checkpoint runs a PostgreSQL CHECKPOINT, which writes every dirty buffer
// and syncs it at once instead of spreading the writes over the checkpoint
// interval, so a row measured afterwards does not share the disk with them.
func (e Env) Checkpoint(ctx context.Context) error { return e.adminExec(ctx, "CHECKPOINT") }

// adminExec runs one statement on the admin database.
func (e Env) adminExec(ctx context.Context, q string) error {
	pool, err := pgxpool.New(ctx, e.DBURL(e.AdminDB, 0))
	if err != nil {
		return err
	}
	defer pool.Close()
	_, err = pool.Exec(ctx, q)
	return err
}

// CLI runs the coupond binary with args and returns its standard output.
func (e Env) CLI(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, e.Bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("coupond %s: %w: %s%s", args[0], err, out.String(), errb.String())
	}
	return out.String(), nil
}

// AuditResult is the outcome of one `coupond audit` run.
type AuditResult struct {
	Took       time.Duration
	ExitCode   int
	Violations []string
}

// Audit runs `coupond audit` against dbURL with the servers' hold timeout and
// compensation interval. A non-zero exit with violations is a result, not an
// error; ignoreKinds drops violations of those finding kinds (used where orders
// live in an external order service the CLI cannot see).
func (e Env) Audit(ctx context.Context, dbURL string, hold, every time.Duration, ignoreKinds ...string) (AuditResult, error) {
	start := time.Now()
	cmd := exec.CommandContext(ctx, e.Bin, "audit", "--database-url", dbURL, "--hold-timeout", hold.String(),
		"--compensate-every", every.String())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := AuditResult{Took: time.Since(start)}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.ExitCode = ee.ExitCode()
	} else if err != nil {
		return res, err
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "merchant ") {
			continue
		}
		skip := false
		for _, k := range ignoreKinds {
			if strings.Contains(line, " "+k+" ") || strings.Contains(line, " "+k+":") {
				skip = true
			}
		}
		if !skip {
			res.Violations = append(res.Violations, line)
		}
	}
	if res.ExitCode != 0 && res.ExitCode != 1 {
		return res, fmt.Errorf("coupond audit exited %d: %s", res.ExitCode, errb.String())
	}
	if res.ExitCode == 1 && len(res.Violations) == 0 && len(ignoreKinds) == 0 {
		return res, fmt.Errorf("coupond audit failed: %s", errb.String())
	}
	return res, nil
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// ServerConfig is one `coupond serve` process.
type ServerConfig struct {
	Name            string
	Port            int
	DatabaseURL     string
	HoldTimeout     time.Duration
	CompensateEvery time.Duration
	FulfilTimeout   time.Duration
	MaxConns        int
	Jobs            bool
	WebhookURL      string
	WebhookSecret   string
	// DebugPort, when set, serves the server's pprof profiles on
	// 127.0.0.1:DebugPort (serve --debug-addr).
	DebugPort int
	// RedisURL, when set, is serve --redis-url.
	RedisURL string
	// AllowPrivateWebhooks is serve --allow-private-webhooks: the suite's
	// webhook receiver listens on loopback.
	AllowPrivateWebhooks bool
	// ExtraArgs are appended to serve's arguments (--query-exec-mode,
	// --otlp-endpoint, ...).
	ExtraArgs []string
	// Schedules keeps serve's own schedules of reconciliation (hourly) and
	// the daily statement. Without it the harness turns both off: the suites
	// run reconciliation when a row or a check asks for it (runJob, coupond
	// audit), and an hourly run over the bench's ledger of millions of flows
	// beside whatever row is running at the top of the hour would make that
	// row measure it.
	Schedules bool
	// GoMaxProcs, when above 0, is the server's GOMAXPROCS: how many cores
	// its Go code runs on at once (docs/operations.md: half the cores of a
	// machine it shares with PostgreSQL). 0 leaves Go's default, every core.
	GoMaxProcs int
}

// Server is a running coupond serve process.
type Server struct {
	env  Env
	cfg  ServerConfig
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// URL is the server's base URL.
func (s *Server) URL() string { return fmt.Sprintf("http://127.0.0.1:%d", s.cfg.Port) }

// Config returns the server's configuration.
func (s *Server) Config() ServerConfig { return s.cfg }

// Reconfigure changes the configuration for the next Start (the port and
// name stay).
func (s *Server) Reconfigure(change func(*ServerConfig)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	port, name := s.cfg.Port, s.cfg.Name
	change(&s.cfg)
	s.cfg.Port, s.cfg.Name = port, name
}

// SetRedisURL changes --redis-url for the next Start.
func (s *Server) SetRedisURL(url string) { s.mu.Lock(); s.cfg.RedisURL = url; s.mu.Unlock() }

// StartServer starts coupond serve with the rate limits off and waits until
// /readyz answers.
func (e Env) StartServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if cfg.Port == 0 {
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		cfg.Port = p
	}
	if cfg.Name == "" {
		cfg.Name = "coupond"
	}
	s := &Server{env: e, cfg: cfg}
	return s, s.Start(ctx)
}

// Start (re)starts the process on the same port and waits until it is ready.
func (s *Server) Start(ctx context.Context) error {
	c := s.cfg
	// BENCH_SERVER_LOG_LEVEL (default error) is the servers' log level, for
	// finding out what a server did during a run (their logs are
	// <dir>/<name>.log).
	level := cmp.Or(os.Getenv("BENCH_SERVER_LOG_LEVEL"), "error")
	args := []string{"serve", "--addr", fmt.Sprintf("127.0.0.1:%d", c.Port), "--database-url", c.DatabaseURL,
		"--limit-token-rps", "0", "--limit-store-rps", "0", "--limit-failed-lookups-per-minute", "0",
		"--log-level", level, "--jobs=" + strconv.FormatBool(c.Jobs), "--shutdown-grace", "2s"}
	if !c.Schedules {
		args = append(args, "--reconcile-schedule", "off", "--statement-schedule", "off")
	}
	if c.HoldTimeout > 0 {
		args = append(args, "--hold-timeout", c.HoldTimeout.String())
	}
	if c.CompensateEvery > 0 {
		args = append(args, "--compensate-every", c.CompensateEvery.String())
	}
	if c.FulfilTimeout > 0 {
		args = append(args, "--fulfil-timeout", c.FulfilTimeout.String())
	}
	if c.MaxConns > 0 {
		args = append(args, "--max-conns", strconv.Itoa(c.MaxConns))
	}
	if c.WebhookURL != "" {
		args = append(args, "--webhook-url", c.WebhookURL, "--webhook-secret", c.WebhookSecret)
	}
	if c.DebugPort > 0 {
		args = append(args, "--debug-addr", fmt.Sprintf("127.0.0.1:%d", c.DebugPort))
	}
	if c.RedisURL != "" {
		args = append(args, "--redis-url", c.RedisURL)
	}
	if c.AllowPrivateWebhooks {
		args = append(args, "--allow-private-webhooks")
	}
	args = append(args, c.ExtraArgs...)
	logf, err := os.OpenFile(filepath.Join(s.env.Dir, c.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.env.Bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if c.GoMaxProcs > 0 {
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(c.GoMaxProcs))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done, s.log = cmd, done, logf
	s.mu.Unlock()
	return s.WaitReady(ctx, 60*time.Second)
}

// WaitReady polls /readyz until it answers 200 or timeout passes.
func (s *Server) WaitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	cl := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-s.doneCh():
			return fmt.Errorf("%s exited during start; see %s.log", s.cfg.Name, s.cfg.Name)
		default:
		}
		resp, err := cl.Get(s.URL() + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s not ready after %s", s.cfg.Name, timeout)
}

func (s *Server) doneCh() chan struct{} { s.mu.Lock(); defer s.mu.Unlock(); return s.done }

// PID is the process id of the running process, or 0.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Signal sends sig to the process.
func (s *Server) Signal(sig syscall.Signal) error {
	pid := s.PID()
	if pid == 0 {
		return errors.New("not running")
	}
	return syscall.Kill(pid, sig)
}

// Kill sends SIGKILL and waits for the process to be gone.
func (s *Server) Kill() {
	if s.Signal(syscall.SIGKILL) == nil {
		<-s.doneCh()
	}
}

// Stop sends SIGTERM and waits up to 10 s, then SIGKILL.
func (s *Server) Stop() {
	if s.PID() == 0 {
		return
	}
	_ = s.Signal(syscall.SIGCONT)
	if s.Signal(syscall.SIGTERM) != nil {
		return
	}
	select {
	case <-s.doneCh():
	case <-time.After(10 * time.Second):
		s.Kill()
	}
}

// CPUProfile records the server's CPU profile for d through its pprof
// endpoint (ServerConfig.DebugPort) and writes it to path.
func (s *Server) CPUProfile(ctx context.Context, d time.Duration, path string) error {
	secs := int(d.Round(time.Second) / time.Second)
	if secs < 1 {
		secs = 1
	}
	return s.SaveProfile(ctx, fmt.Sprintf("profile?seconds=%d", secs), path)
}

// SaveProfile writes the server's pprof profile name (allocs, heap,
// goroutine, or profile?seconds=N) to path.
func (s *Server) SaveProfile(ctx context.Context, name, path string) error {
	if s.cfg.DebugPort == 0 {
		return errors.New("server started without a debug port")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/%s", s.cfg.DebugPort, name), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof: HTTP %d", resp.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// PprofTop renders a CPU profile with the Go toolchain's pprof (`go tool
// pprof -top`; bin is the binary the profile was taken from): the n heaviest
// functions by flat time, and by cumulative time those of coupond, its
// database and GraphQL layers, the HTTP server and the Go runtime's
// scheduler and collector, so the path of a request can be read top down.
func PprofTop(ctx context.Context, bin, profile string, n int) (string, error) {
	run := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "go", append(append([]string{"tool", "pprof", "-top"}, args...), bin, profile)...).Output()
		if err != nil {
			return "", fmt.Errorf("go tool pprof: %w", err)
		}
		return string(out), nil
	}
	flat, err := run("-nodecount", strconv.Itoa(n))
	if err != nil {
		return "", err
	}
	cum, err := run("-cum", "-nodecount", "400")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("By cumulative time (selected frames):\n")
	kept := 0
	for _, line := range strings.Split(cum, "\n") {
		if kept < 3*n && cumFrame.MatchString(line) && !strings.Contains(line, "graph/generated") {
			b.WriteString(line + "\n")
			kept++
		}
	}
	b.WriteString("\nBy flat time:\n")
	lines := strings.Split(flat, "\n")
	for _, line := range lines {
		if !strings.HasPrefix(line, "File:") && !strings.HasPrefix(line, "Build ID:") && !strings.HasPrefix(line, "Time:") {
			b.WriteString(line + "\n")
		}
	}
	return b.String(), nil
}

var cumFrame = regexp.MustCompile(`Duration:|coupond/(graph|services|models)\.|net/http\.\(\*conn\)\.serve|gqlgen/graphql/handler\.\(\*Server\)\.ServeHTTP|` +
	`gorm\.io/gorm\.\(\*DB\)\.(Scan|Create|Transaction|Take|Find|Exec)$|database/sql\.\(\*(DB|Tx)\)\.(QueryContext|ExecContext|BeginTx|Commit)$|` +
	`pgx/v5\.\(\*Conn\)\.(Query|Exec)$|linux\.Syscall6|runtime\.(gcBgMarkWorker|schedule|mallocgc)$|encoding/json\.|slog\.`)

// RSS returns the process's resident set size in bytes from /proc.
func (s *Server) RSS() int64 {
	pid := s.PID()
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

// Metric returns the value of an unlabelled metric from /metrics, or -1.
func (s *Server) Metric(name string) float64 { return s.Metrics(name)[name] }

// Metrics reads several unlabelled metrics from one scrape of /metrics; a
// metric that cannot be read is -1.
func (s *Server) Metrics(names ...string) map[string]float64 {
	out := make(map[string]float64, len(names))
	for _, n := range names {
		out[n] = -1
	}
	cl := &http.Client{Timeout: 2 * time.Second}
	resp, err := cl.Get(s.URL() + "/metrics")
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if _, want := out[name]; !ok || !want {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			out[name] = v
		}
	}
	return out
}

// Resources is one sample of the server's resource use.
type Resources struct {
	RSSMB      float64 `json:"rss_mb"`
	Goroutines float64 `json:"goroutines"`
	// Conns is the HTTP connections open at the server.
	Conns float64 `json:"http_connections"`
	// Host is how the machine's CPU time was spent while a Sampler ran.
	Host *HostShare `json:"host_cpu,omitempty"`
}

// Sample reads RSS and go_goroutines now.
func (s *Server) Sample() Resources {
	m := s.Metrics("go_goroutines", "coupond_http_open_connections")
	return Resources{RSSMB: float64(s.RSS()) / (1 << 20), Goroutines: m["go_goroutines"], Conns: m["coupond_http_open_connections"]}
}

// Sampler samples a server's resources every interval until stopped and keeps
// the maxima.
type Sampler struct {
	stop chan struct{}
	done chan struct{}
	Max  Resources
}

// StartSampler starts sampling s.
func StartSampler(s *Server, every time.Duration) *Sampler {
	sm := &Sampler{stop: make(chan struct{}), done: make(chan struct{})}
	host0 := ReadHostCPU()
	go func() {
		defer close(sm.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			r := s.Sample()
			sm.Max.RSSMB = max(sm.Max.RSSMB, r.RSSMB)
			sm.Max.Goroutines = max(sm.Max.Goroutines, r.Goroutines)
			sm.Max.Conns = max(sm.Max.Conns, r.Conns)
			select {
			case <-sm.stop:
				h := ReadHostCPU().Since(host0)
				sm.Max.Host = &h
				return
			case <-t.C:
			}
		}
	}()
	return sm
}

// Stop ends sampling and returns the maxima, and the machine's CPU use since
// the start.
func (sm *Sampler) Stop() Resources { close(sm.stop); <-sm.done; return sm.Max }

// Client is a small GraphQL client for setup and checks.
type Client struct {
	URL   string
	Token string
	HTTP  *http.Client
}

// GQLError is one GraphQL error.
type GQLError struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

// Code returns extensions.code.
func (e GQLError) Code() string { c, _ := e.Extensions["code"].(string); return c }

// GQLResponse is a GraphQL response.
type GQLResponse struct {
	Data   json.RawMessage `json:"data"`
	Errors []GQLError      `json:"errors"`
}

// Do posts one operation and decodes data into out. A GraphQL error is
// returned as an error carrying its code.
func (c *Client) Do(ctx context.Context, query string, vars map[string]any, out any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+"/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 5 * time.Minute}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var r GQLResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, raw)
	}
	if len(r.Errors) > 0 {
		return fmt.Errorf("graphql %s: %s", r.Errors[0].Code(), r.Errors[0].Message)
	}
	if out != nil {
		return json.Unmarshal(r.Data, out)
	}
	return nil
}
