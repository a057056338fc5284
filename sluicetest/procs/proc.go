package procs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluice-io/sluice/shared/leasetrust"

	"github.com/sluice-io/sluice/sluicetest"
)

// BinaryEnv names the environment variable that points the tests at a
// prebuilt sluice binary instead of building one; build it with the tags
// BuildTags names, or the tests that use a test seam fail.
const BinaryEnv = "SLUICE_E2E_BINARY"

// BuildTags are the build tags of the binary the tests run: sluicetest
// compiles in the test seams (cmd/sluice/internal/cmd/server/seam_on.go) that the shipped
// binary leaves out.
const BuildTags = "sluicetest"

// binary is the sluice binary the tests run, set by BuildBinary.
var binary string

// BuildBinary builds ./cmd/sluice of the root module (the nearest directory
// above the working directory whose go.mod is github.com/sluice-io/sluice),
// test seams included (BuildTags), into dir, or takes the binary named by
// SLUICE_E2E_BINARY. It is meant for TestMain: one build per test binary
// run.
func BuildBinary(dir string) (string, error) { return BuildBinaryWith(dir, BuildTags) }

// BuildBinaryWith is BuildBinary with the given build tags ("": the
// shipped binary, without the test seams, as a benchmark runs it). Either
// pins a leader key, made in dir, on every sluice process (SluiceEnv).
func BuildBinaryWith(dir, tags string) (string, error) {
	if err := pinLeaderKeys(dir); err != nil {
		return "", err
	}
	if b := os.Getenv(BinaryEnv); b != "" {
		binary = b
		return b, nil
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("find the go tool: %w", err)
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "sluice")
	cmd := exec.Command(goTool, "build", "-tags", tags, "-o", out, "./cmd/sluice")
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build -tags %q ./cmd/sluice in %s: %w\n%s", tags, root, err, msg)
	}
	binary = out
	return out, nil
}

// rootModule is the module path of the directory BuildBinary builds in.
const rootModule = "github.com/sluice-io/sluice"

// moduleRoot is the nearest directory at or above the working directory
// whose go.mod declares rootModule.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the root module: %w", err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if f := strings.Fields(line); len(f) == 2 && f[0] == "module" && f[1] == rootModule {
					return dir, nil
				}
			}
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("find the root module: no go.mod of %s at or above the working directory", rootModule)
		}
		dir = up
	}
}

// Binary is the path of the sluice binary the processes run, set by
// BuildBinary ("" before).
func Binary() string { return binary }

// SluiceEnv is the environment a sluice child process runs with: the
// test's without its SLUICE_* variables, and the pinned leader key.
func SluiceEnv() []string { return append(ChildEnv(), leaderEnv...) }

// leaderEnv pins a leader key on every child, as production runs: each
// coordinator signs its leases with the key and every process trusts only
// it (a process's own flags or Env may override either).
var leaderEnv []string

// LeaderKeyFile and LeaderTrustedKeysFile are the leader key every child
// coordinator signs with and the file of its public key every child
// trusts, set by BuildBinary.
var LeaderKeyFile, LeaderTrustedKeysFile string

// pinLeaderKeys makes the leader key of this test binary's processes in
// dir.
func pinLeaderKeys(dir string) error {
	LeaderKeyFile, LeaderTrustedKeysFile = filepath.Join(dir, "leader.key"), filepath.Join(dir, "leader-trusted.keys")
	s, err := leasetrust.WriteKey(LeaderKeyFile)
	if err != nil {
		return err
	}
	if err := leasetrust.WriteTrusted(LeaderTrustedKeysFile, s); err != nil {
		return err
	}
	leaderEnv = []string{"SLUICE_LEADER_KEY_FILE=" + LeaderKeyFile, "SLUICE_LEADER_TRUSTED_KEYS_FILE=" + LeaderTrustedKeysFile}
	return nil
}

// Mark is a position in a process's log, to look only at what came after.
type Mark int64

// Proc is one sluice child process (and its later incarnations: Restart
// starts it again with the same arguments and environment). Its stdout and
// stderr go to files in the test's temp dir, appended across restarts.
//
//	NewProc ─Start─► running ──Kill (SIGKILL) / Stop (SIGTERM)──► exited
//	                  │   ▲                                          │
//	            Pause │   │ Resume                 Restart ◄─────────┘
//	      (SIGSTOP)   ▼   │ (SIGCONT)
//	                 paused
//
// Every method fails the test on error, so callers need no checks. Proc is
// safe for use from several goroutines.
type Proc struct {
	t    sluicetest.TB
	name string
	// program is the executable; empty for the sluice binary (NewProcOf).
	program string
	args    []string
	// Env holds extra environment variables (KEY=value) for the child; set
	// it before Start. Inherited SLUICE_* variables are dropped so that only
	// the flags and Env configure the child.
	Env []string
	// MergeOutput, set before Start, sends the child's stdout to its
	// stderr file too, so that the log methods (Mark, LogLines, CountLog,
	// Tail) see both: for a program that logs to stdout (a JVM).
	MergeOutput bool

	stdoutPath string
	stderrPath string

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	state   *os.ProcessState
	starts  int
	cleaned bool
}

// NewProc prepares a sluice process called name (used in file names and
// log dumps) with the given arguments, e.g. "agent", "--id", "agent-1". It
// registers a cleanup that kills the process and, if the test failed, dumps
// its output into the test log.
func NewProc(t sluicetest.TB, name string, args ...string) *Proc {
	t.Helper()
	if binary == "" {
		t.Fatalf("no sluice binary: call procs.BuildBinary from TestMain")
	}
	return newProc(t, "", name, args...)
}

// NewProcOf is NewProc for another program than sluice (a nats-server
// built for the test, say), with the same lifecycle, signals, logs and
// cleanup.
func NewProcOf(t sluicetest.TB, program, name string, args ...string) *Proc {
	t.Helper()
	return newProc(t, program, name, args...)
}

// newProc is NewProc of program ("": the sluice binary).
func newProc(t sluicetest.TB, program, name string, args ...string) *Proc {
	dir := t.TempDir()
	p := &Proc{
		t:          t,
		name:       name,
		program:    program,
		args:       args,
		stdoutPath: filepath.Join(dir, name+".stdout"),
		stderrPath: filepath.Join(dir, name+".stderr"),
	}
	t.Cleanup(p.cleanup)
	return p
}

// StartProc is NewProc followed by Start.
func StartProc(t sluicetest.TB, name string, args ...string) *Proc {
	t.Helper()
	p := NewProc(t, name, args...)
	p.Start()
	return p
}

// Name is the name given to NewProc.
func (p *Proc) Name() string { return p.name }

// Args returns the process's arguments.
func (p *Proc) Args() []string { return append([]string(nil), p.args...) }

// Start starts the process. It fails the test if the process is running.
func (p *Proc) Start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && p.state == nil {
		p.t.Fatalf("%s: Start while running (pid %d)", p.name, p.cmd.Process.Pid)
	}
	p.starts++
	stdout, err := os.OpenFile(p.stdoutPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		p.t.Fatal(err)
	}
	defer stdout.Close()
	stderr, err := os.OpenFile(p.stderrPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		p.t.Fatal(err)
	}
	defer stderr.Close()
	// A marker between incarnations keeps dumps readable; it matches no
	// product log line.
	program := p.program
	if program == "" {
		program = binary
	}
	fmt.Fprintf(stderr, "==== sluicetest: %s start #%d: %s %s\n", p.name, p.starts, filepath.Base(program), strings.Join(p.args, " "))

	cmd := exec.Command(program, p.args...)
	cmd.Env = ChildEnv()
	if program == binary {
		// Sluice processes run with the pinned leader key; other programs
		// (nats-server) need none of it.
		cmd.Env = append(cmd.Env, leaderEnv...)
	}
	cmd.Env = append(cmd.Env, p.Env...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if p.MergeOutput {
		cmd.Stdout = stderr
	}
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("%s: start: %v", p.name, err)
	}
	exited := make(chan struct{})
	p.cmd, p.exited, p.state = cmd, exited, nil
	go func() {
		_ = cmd.Wait()
		p.mu.Lock()
		p.state = cmd.ProcessState
		p.mu.Unlock()
		close(exited)
	}()
}

// ChildEnv is the test's environment without its SLUICE_* variables, and a
// metrics listener on a free port: what a child process of the kit runs
// with (a sluice process adds the pinned leader key: SluiceEnv).
func ChildEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLUICE_") {
			env = append(env, kv)
		}
	}
	// Several agents run on this host: each takes a free port for its
	// metrics listener rather than all contending for 127.0.0.1:9464 (a
	// test that wants a known one passes --metrics-listen, which wins).
	return append(env, "SLUICE_METRICS_LISTEN=127.0.0.1:0")
}

// Restart starts the process again with the same arguments. A process that
// still runs is first stopped gracefully (Stop).
func (p *Proc) Restart() {
	p.t.Helper()
	if p.Running() {
		p.Stop()
	}
	p.Start()
}

// Running reports whether the current incarnation has not exited (a paused
// process is running).
func (p *Proc) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil && p.state == nil
}

// Pid is the current incarnation's process id.
func (p *Proc) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Starts counts how often the process was started.
func (p *Proc) Starts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts
}

// Signal sends sig to the running process.
func (p *Proc) Signal(sig os.Signal) {
	p.t.Helper()
	p.mu.Lock()
	cmd, running := p.cmd, p.cmd != nil && p.state == nil
	p.mu.Unlock()
	if !running {
		p.t.Fatalf("%s: signal %v: not running", p.name, sig)
	}
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		p.t.Fatalf("%s: signal %v: %v", p.name, sig, err)
	}
}

// Wait waits up to timeout for the process to exit and returns its exit
// code (-1 when a signal ended it); ok is false on timeout.
func (p *Proc) Wait(timeout time.Duration) (code int, ok bool) {
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	if exited == nil {
		return 0, true
	}
	select {
	case <-exited:
	default:
		// Only now start the clock: with both ready, select would pick
		// at random.
		select {
		case <-exited:
		case <-time.After(timeout):
			return 0, false
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state.ExitCode(), true
}

// Kill sends SIGKILL and waits for the process to be gone: a crash, with no
// chance to commit or deregister.
func (p *Proc) Kill() {
	p.t.Helper()
	p.Signal(syscall.SIGKILL)
	if _, ok := p.Wait(10 * time.Second); !ok {
		p.t.Fatalf("%s: still alive 10s after SIGKILL", p.name)
	}
}

// Stop sends SIGTERM and waits for a clean exit (code 0). Sluice bounds a
// graceful stop at 30s, so after 40s the process is killed and the test
// fails.
func (p *Proc) Stop() {
	p.t.Helper()
	p.Terminate(syscall.SIGTERM, 40*time.Second)
}

// Terminate sends sig, waits up to timeout for the process to exit, and
// fails the test unless it exited with code 0 in time. It returns how long
// the exit took.
func (p *Proc) Terminate(sig os.Signal, timeout time.Duration) time.Duration {
	p.t.Helper()
	start := time.Now()
	p.Signal(sig)
	code, ok := p.Wait(timeout)
	took := time.Since(start)
	if !ok {
		p.Kill()
		p.t.Fatalf("%s: did not exit within %v of %v (killed)", p.name, timeout, sig)
	}
	if code != 0 {
		p.t.Fatalf("%s: exited with code %d after %v", p.name, code, sig)
	}
	return took
}

// Pause stops the process with SIGSTOP (a hung process: alive, holding its
// connections, doing nothing) and waits until the kernel shows it stopped.
func (p *Proc) Pause() {
	p.t.Helper()
	p.Signal(syscall.SIGSTOP)
	p.waitProcState(func(s string) bool { return s == "" || s == "T" }, "stopped")
}

// Resume continues a paused process with SIGCONT.
func (p *Proc) Resume() {
	p.t.Helper()
	p.Signal(syscall.SIGCONT)
	p.waitProcState(func(s string) bool { return s != "T" }, "continued")
}

func (p *Proc) waitProcState(ok func(string) bool, what string) {
	p.t.Helper()
	pid := p.Pid()
	deadline := time.Now().Add(5 * time.Second)
	for !ok(procState(pid)) {
		if time.Now().After(deadline) {
			p.t.Fatalf("%s: not %s after 5s (state %q)", p.name, what, procState(pid))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Mark returns the current end of the process's stderr log.
func (p *Proc) Mark() Mark {
	fi, err := os.Stat(p.stderrPath)
	if err != nil {
		return 0
	}
	return Mark(fi.Size())
}

// LogLines returns the complete stderr lines (across all incarnations)
// that contain every one of substrs.
func (p *Proc) LogLines(substrs ...string) []string {
	return p.LogLinesSince(0, substrs...)
}

// LogLinesSince is LogLines for what was logged after m.
func (p *Proc) LogLinesSince(m Mark, substrs ...string) []string {
	return grepFile(p.stderrPath, int64(m), func(line string) bool {
		for _, s := range substrs {
			if !strings.Contains(line, s) {
				return false
			}
		}
		return true
	})
}

// CountLog counts the stderr lines, over all incarnations, that contain
// every one of substrs.
func (p *Proc) CountLog(substrs ...string) int { return len(p.LogLines(substrs...)) }

// CountLogSince is CountLog for what was logged after m.
func (p *Proc) CountLogSince(m Mark, substrs ...string) int {
	return len(p.LogLinesSince(m, substrs...))
}

// StdoutLines returns the complete lines the process printed on stdout,
// over all incarnations.
func (p *Proc) StdoutLines() []string {
	return grepFile(p.stdoutPath, 0, func(string) bool { return true })
}

// grepFile returns the complete (newline-terminated) lines of path from
// offset on for which match holds. A line still being written is left out.
func grepFile(path string, offset int64, match func(string) bool) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil
	}
	r := bufio.NewReaderSize(f, 64<<10)
	var out []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return out
		}
		line = strings.TrimSuffix(line, "\n")
		if match(line) {
			out = append(out, line)
		}
	}
}

// taskStartedRE picks the task id out of an agent's "task started" line.
var taskStartedRE = regexp.MustCompile(`msg="task started".*\bconnector_task=("[^"]*"|\S+)`)

// TaskStarts counts, per task id ("<connector>-<n>"), the "task started"
// lines the process logged after m: one per task instance it started.
func (p *Proc) TaskStarts(m Mark) map[string]int {
	out := map[string]int{}
	for _, line := range p.LogLinesSince(m, `msg="task started"`) {
		if sm := taskStartedRE.FindStringSubmatch(line); sm != nil {
			out[strings.Trim(sm[1], `"`)]++
		}
	}
	return out
}

// Tail returns the last n complete lines of the process's stderr log
// (across incarnations), for an error message.
func (p *Proc) Tail(n int) string {
	lines := p.LogLines()
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// dumpLimit bounds how much of each output file a failed test shows.
const dumpLimit = 64 << 10

func (p *Proc) cleanup() {
	p.mu.Lock()
	if p.cleaned {
		p.mu.Unlock()
		return
	}
	p.cleaned = true
	cmd, exited := p.cmd, p.exited
	running := cmd != nil && p.state == nil
	p.mu.Unlock()
	if running {
		// SIGKILL also ends a paused process.
		_ = cmd.Process.Kill()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
		}
	}
	if p.t.Failed() {
		for _, path := range []string{p.stdoutPath, p.stderrPath} {
			p.t.Logf("---- %s (last %d KiB) ----\n%s", filepath.Base(path), dumpLimit>>10, tail(path, dumpLimit))
		}
	}
}

// tail returns the last n bytes of path, starting at a line boundary.
func tail(path string, n int64) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	if int64(len(data)) > n {
		data = data[int64(len(data))-n:]
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	return string(data)
}
