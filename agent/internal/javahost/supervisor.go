package javahost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sluice-io/sluice/api"
)

// MainClass is the host's entry point in sluice-connect-host.jar.
const MainClass = "io.sluice.connect.host.Main"

// HostJar is the host's jar in Config.HostDir; its dependencies are in
// HostDir/lib.
const HostJar = "sluice-connect-host.jar"

const (
	defaultHeap   = "-Xmx512m"
	acceptTimeout = 60 * time.Second // a JVM loading many plugins is slow to start
	helloTimeout  = 30 * time.Second
	// exitWait is how long a lost connection waits for the JVM's exit
	// status, which makes the failure's message.
	exitWait     = 5 * time.Second
	stopWait     = 10 * time.Second
	firstBackoff = time.Second
	maxBackoff   = 30 * time.Second
	// healthyRun is how long a host must have lived for its loss to count
	// as a first failure again.
	healthyRun = time.Minute
	// maxSocketPath leaves room under the 108 bytes of sun_path.
	maxSocketPath = 100
)

// Config configures a Supervisor.
type Config struct {
	// Java is the java executable (default: $JAVA_HOME/bin/java, then java
	// on PATH).
	Java string
	// HostDir holds sluice-connect-host.jar and lib/ (make javahost).
	HostDir string
	// PluginPath is Kafka Connect's plugin.path.
	PluginPath []string
	// WorkDir is where the socket goes (a short temporary directory when
	// its path would be too long for a Unix socket).
	WorkDir string
	Logger  *slog.Logger
	// Heap is the JVM's heap option (default -Xmx512m).
	Heap string
}

// Supervisor runs the connector host: it scans the plugins, starts the
// JVM on first use, fails what was pending when it dies and starts it
// again on the next use, waiting longer after each quick failure.
type Supervisor struct {
	cfg    Config
	log    *slog.Logger
	router *router

	startMu   sync.Mutex // held by the one Conn that may start the host
	mu        sync.Mutex
	conn      *Conn
	proc      *process
	sockDir   string // a temporary directory of the socket's, removed on Stop
	failures  int
	notBefore time.Time
	stopped   bool
	listeners []func(*Conn, error)
}

// NewSupervisor makes a Supervisor; nothing runs until Scan or Conn.
func NewSupervisor(cfg Config) *Supervisor {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Heap == "" {
		cfg.Heap = defaultHeap
	}
	// The JVM runs in WorkDir: relative paths of the agent's flags mean
	// the agent's current directory, so they are made absolute here.
	cfg.HostDir = absPath(cfg.HostDir)
	cfg.PluginPath = slices.Clone(cfg.PluginPath)
	for i, p := range cfg.PluginPath {
		cfg.PluginPath[i] = absPath(p)
	}
	return &Supervisor{cfg: cfg, log: cfg.Logger, router: newRouter()}
}

func absPath(p string) string {
	if p == "" {
		return p
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// java resolves the java executable.
func (s *Supervisor) java() (string, error) {
	if s.cfg.Java != "" {
		if _, err := os.Stat(s.cfg.Java); err != nil {
			return "", fmt.Errorf("java (--java) %s: %w", s.cfg.Java, err)
		}
		return s.cfg.Java, nil
	}
	if home := os.Getenv("JAVA_HOME"); home != "" {
		j := filepath.Join(home, "bin", "java")
		if _, err := os.Stat(j); err == nil {
			return j, nil
		}
	}
	j, err := exec.LookPath("java")
	if err != nil {
		return "", errors.New("no java found: set --java, JAVA_HOME, or put java (17 or later) on PATH")
	}
	return j, nil
}

// Check says what is missing to run the host: java, or the built host.
func (s *Supervisor) Check() error {
	if _, err := s.java(); err != nil {
		return err
	}
	jar := filepath.Join(s.cfg.HostDir, HostJar)
	if _, err := os.Stat(jar); err != nil {
		return fmt.Errorf("connector host not built: %s is missing (build it with `make javahost`, or set --connect-host-dir)", jar)
	}
	return nil
}

// command is java with the host's class path and the given arguments.
func (s *Supervisor) command(ctx context.Context, args ...string) (*exec.Cmd, error) {
	java, err := s.java()
	if err != nil {
		return nil, err
	}
	cp := filepath.Join(s.cfg.HostDir, HostJar) + string(os.PathListSeparator) + filepath.Join(s.cfg.HostDir, "lib", "*")
	all := append([]string{s.cfg.Heap, "-cp", cp, MainClass}, args...)
	all = append(all, "--plugin-path", strings.Join(s.cfg.PluginPath, ","))
	cmd := exec.CommandContext(ctx, java, all...)
	cmd.Dir = s.cfg.WorkDir
	return cmd, nil
}

// Scan lists the plugins of the plugin path, as the host finds them.
func (s *Supervisor) Scan(ctx context.Context) ([]api.PluginInfo, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	cmd, err := s.command(ctx, "--scan")
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("scan the plugin path %s: %w: %s", strings.Join(s.cfg.PluginPath, ","), err, lastLines(stderr.String(), stderrLines))
	}
	var found []api.PluginInfo
	if err := json.Unmarshal(stdout.Bytes(), &found); err != nil {
		return nil, fmt.Errorf("scan the plugin path: the host's answer is no plugin list: %w", err)
	}
	// Each version of a class once, as the agent announces them: a plugin
	// installed twice on the path is one plugin.
	var out []api.PluginInfo
	seen := map[api.PluginInfo]bool{}
	for _, p := range found {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// OnLost registers f to be told of each lost host connection, with the
// reason; f runs on a goroutine of the supervisor's and must not block
// for long.
func (s *Supervisor) OnLost(f func(c *Conn, err error)) {
	s.mu.Lock()
	s.listeners = append(s.listeners, f)
	s.mu.Unlock()
}

// Conn returns the live connection to the host, starting the host when
// none runs (after the backoff that follows a failure).
func (s *Supervisor) Conn(ctx context.Context) (*Conn, error) {
	// One start at a time; s.mu is not held while waiting or starting, so
	// that Stop never waits for a start.
	s.startMu.Lock()
	defer s.startMu.Unlock()
	s.mu.Lock()
	stopped, c, notBefore := s.stopped, s.conn, s.notBefore
	s.mu.Unlock()
	if stopped {
		return nil, errStopping
	}
	if c != nil && c.Err() == nil {
		return c, nil
	}
	if wait := time.Until(notBefore); wait > 0 {
		s.log.Info("connector host: waiting before starting it again", "wait", wait)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("connector host restart: %w", ctx.Err())
		}
	}
	c, p, err := s.start(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			// A caller that gave up says nothing of the host: only a
			// start that failed on its own counts towards the backoff.
			s.backoff(time.Time{})
		}
		return nil, err
	}
	if s.stopped {
		// Stop came while the host started: it must not outlive the agent.
		c.Close()
		p.kill()
		return nil, errStopping
	}
	s.conn, s.proc = c, p
	go s.watch(c, p, time.Now())
	return c, nil
}

var errStopping = errors.New("connector host: the agent is stopping")

// Pid is the process id of the running host JVM, 0 when none runs.
func (s *Supervisor) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.proc.cmd.Process == nil {
		return 0
	}
	return s.proc.cmd.Process.Pid
}

// backoff sets when the next start may happen: 1 s after a first
// failure, doubling to 30 s; a host that lived healthyRun starts over.
func (s *Supervisor) backoff(startedAt time.Time) {
	if !startedAt.IsZero() && time.Since(startedAt) >= healthyRun {
		s.failures = 0
	}
	d := firstBackoff << min(s.failures, 5)
	s.failures++
	s.notBefore = time.Now().Add(min(d, maxBackoff))
}

// watch waits for the loss of c and tells the listeners.
func (s *Supervisor) watch(c *Conn, p *process, startedAt time.Time) {
	<-c.Done()
	s.mu.Lock()
	if s.conn == c {
		s.conn, s.proc = nil, nil
	}
	stopping := s.stopped
	if !stopping {
		s.backoff(startedAt)
	}
	listeners := slices.Clone(s.listeners)
	s.mu.Unlock()
	if !stopping {
		// A host whose connection broke is of no use: the next one starts
		// afresh. (Stop gives a stopping one time to exit.)
		p.kill()
	}
	err := c.Err()
	if !stopping {
		s.log.Error("connector host lost", "err", err)
	}
	for _, f := range listeners {
		f(c, err)
	}
}

// socketPath picks where the socket goes: the work directory, or a short
// temporary directory when that path would be over sun_path's limit.
func (s *Supervisor) socketPath() (string, error) {
	dir, err := filepath.Abs(s.cfg.WorkDir)
	if err != nil {
		return "", fmt.Errorf("connector host socket: %w", err)
	}
	p := filepath.Join(dir, fmt.Sprintf(".sluice-host-%d.sock", os.Getpid()))
	if len(p) <= maxSocketPath {
		return p, nil
	}
	s.mu.Lock() // Stop removes it
	defer s.mu.Unlock()
	if s.sockDir == "" {
		if s.sockDir, err = os.MkdirTemp("", "sluice-host"); err != nil {
			return "", fmt.Errorf("connector host socket: %w", err)
		}
	}
	return filepath.Join(s.sockDir, "host.sock"), nil
}

// start spawns the JVM, accepts its connection and says hello.
func (s *Supervisor) start(ctx context.Context) (*Conn, *process, error) {
	path, err := s.socketPath()
	if err != nil {
		return nil, nil, err
	}
	_ = os.Remove(path) // a socket left by an agent that died
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, nil, fmt.Errorf("connector host socket: %w", err)
	}
	defer ln.Close() // one host, one connection: no one else may connect
	// The JVM outlives the call that started it: not ctx.
	cmd, err := s.command(context.Background(), "--socket", path)
	if err != nil {
		return nil, nil, err
	}
	p, err := startProcess(cmd, s.log)
	if err != nil {
		return nil, nil, err
	}
	nc, err := accept(ctx, ln, p)
	if err != nil {
		p.kill()
		return nil, nil, err
	}
	c := newConn(nc, s.router, s.log, func(readErr error) error {
		if p.waitExit(exitWait) {
			return p.exitError()
		}
		return fmt.Errorf("connection to the connector host lost: %w", readErr)
	})
	hctx, cancel := context.WithTimeout(ctx, helloTimeout)
	defer cancel()
	var hello helloReply
	err = c.CallJSON(hctx, OpHostHello, helloRequest{Protocol: ProtocolVersion}, &hello)
	if err == nil && hello.Protocol != ProtocolVersion {
		// The host refuses an agent of another version itself; this is a
		// host that does not know the check, or states another version.
		err = fmt.Errorf("the connector host (version %q) speaks host protocol %d; this agent speaks %d: use the host jar of the agent's release",
			hello.Version, hello.Protocol, ProtocolVersion)
	}
	if err != nil {
		c.Close()
		p.kill()
		return nil, nil, fmt.Errorf("connector host hello: %w", err)
	}
	s.log.Info("connector host started", "pid", cmd.Process.Pid, "version", hello.Version, "kafka_version", hello.KafkaVersion, "protocol", hello.Protocol)
	return c, p, nil
}

// accept waits for the host's connection, giving up when the JVM exits
// first, ctx ends or acceptTimeout passes.
func accept(ctx context.Context, ln *net.UnixListener, p *process) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	_ = ln.SetDeadline(time.Now().Add(acceptTimeout))
	go func() {
		c, err := ln.Accept()
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("connector host did not connect: %w", r.err)
		}
		return r.c, nil
	case <-p.exited:
		ln.Close()
		return nil, p.exitError()
	case <-ctx.Done():
		ln.Close()
		return nil, fmt.Errorf("connector host start: %w", ctx.Err())
	}
}

// Stop closes the connection, gives the JVM stopWait to exit, then kills
// it. Later calls of Conn fail.
func (s *Supervisor) Stop() {
	s.mu.Lock()
	s.stopped = true
	c, p, dir := s.conn, s.proc, s.sockDir
	s.mu.Unlock()
	if c != nil {
		c.Close()
	}
	if p != nil && !p.waitExit(stopWait) {
		s.log.Warn("connector host did not exit in time; killing it")
		p.kill()
		<-p.exited
	}
	if dir != "" {
		os.RemoveAll(dir)
	}
}
