package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is one child process (a sluice coordinator or agent, a NATS server,
// a Kafka Connect worker JVM) whose stdout and stderr go to one log file.
// Every proc is registered in procs so that the program kills whatever is
// left on any exit path.
type proc struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	started time.Time
}

var (
	procsMu sync.Mutex
	procs   []*proc
)

// startProc starts bin with args and extra environment variables, logging
// to dir/name.log. The kernel kills the child if this program dies
// (Pdeathsig), so an interrupted run leaves nothing behind.
func startProc(dir, name, bin string, args []string, env []string) (*proc, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, logPath: logPath, cmd: cmd, exited: make(chan struct{}), started: time.Now()}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	procsMu.Lock()
	procs = append(procs, p)
	procsMu.Unlock()
	return p, nil
}

// cleanEnv is this program's environment without SLUICE_* variables, so
// only the flags configure a child.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLUICE_") {
			env = append(env, kv)
		}
	}
	return env
}

// pid is the child's process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// running reports whether the child has not exited.
func (p *proc) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL and waits (at most 10s) until the child is gone.
func (p *proc) kill() error {
	if !p.running() {
		return nil
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-p.exited:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) still alive 10s after SIGKILL", p.name, p.pid())
	}
}

// signal sends sig to the child.
func (p *proc) signal(sig syscall.Signal) error {
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal %v to %s: %w", sig, p.name, err)
	}
	return nil
}

// stop sends SIGTERM, waits up to timeout, then SIGKILL.
func (p *proc) stop(timeout time.Duration) {
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(timeout):
		_ = p.kill()
	}
}

// rssMiB is the child's resident set size (VmRSS) in MiB.
func (p *proc) rssMiB() (float64, error) {
	return rssOf(p.pid())
}

// rssOf reads VmRSS of pid from /proc.
func rssOf(pid int) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0, err
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

// countLog counts the lines of the child's log after byte offset from that
// contain every one of substrs.
func (p *proc) countLog(from int64, substrs ...string) int {
	n := 0
	for _, l := range p.logLines(from) {
		ok := true
		for _, s := range substrs {
			if !strings.Contains(l, s) {
				ok = false
				break
			}
		}
		if ok {
			n++
		}
	}
	return n
}

// logLines returns the complete lines of the child's log after offset from.
func (p *proc) logLines(from int64) []string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(from, 0); err != nil {
		return nil
	}
	var out []string
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return out
		}
		out = append(out, strings.TrimSuffix(line, "\n"))
	}
}

// mark is the current size of the child's log, for countLog.
func (p *proc) mark() int64 {
	fi, err := os.Stat(p.logPath)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// tail returns the last n lines of the child's log, for error messages.
func (p *proc) tail(n int) string {
	lines := p.logLines(0)
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// killAll kills every child still running; it is safe to call more than
// once and from a signal handler goroutine.
func killAll() {
	procsMu.Lock()
	ps := append([]*proc(nil), procs...)
	procsMu.Unlock()
	for _, p := range ps {
		_ = p.kill()
	}
}

// treeRSSMiB is the resident set size of pid and of every process below it
// (an agent and the connector host JVM it started), in MiB, and of pid
// alone.
func treeRSSMiB(pid int) (tree, self float64, err error) {
	if self, err = rssOf(pid); err != nil {
		return 0, 0, err
	}
	tree = self
	for _, child := range descendants(pid) {
		// A child may exit between the scan and the read: it then holds
		// no memory.
		if v, err := rssOf(child); err == nil {
			tree += v
		}
	}
	return tree, self, nil
}

// descendants are the pids below pid, from the parent pids in /proc/*/stat.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces and parentheses,
		// so the fields count from the last ')'.
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// peakSampler calls sample every interval on a goroutine of its own and
// keeps the element-wise maximum of what it returns, until stop.
type peakSampler struct {
	once  sync.Once
	stopc chan struct{}
	done  chan struct{}
	peaks []float64
	n     int
	err   error
}

// samplePeaks starts a peakSampler.
func samplePeaks(interval time.Duration, sample func() ([]float64, error)) *peakSampler {
	s := &peakSampler{stopc: make(chan struct{}), done: make(chan struct{})}
	take := func() {
		v, err := sample()
		if err != nil {
			if s.err == nil {
				s.err = err
			}
			return
		}
		if s.peaks == nil {
			s.peaks = make([]float64, len(v))
		}
		for i := range v {
			s.peaks[i] = max(s.peaks[i], v[i])
		}
		s.n++
	}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			take()
			select {
			case <-s.stopc:
				take()
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// stop ends the sampling and returns the peaks and the number of samples;
// a failed sample (a process gone) is an error. It may be called again.
func (s *peakSampler) stop() ([]float64, int, error) {
	s.once.Do(func() { close(s.stopc) })
	<-s.done
	return s.peaks, s.n, s.err
}
