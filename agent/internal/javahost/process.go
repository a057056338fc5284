package javahost

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// stderrLines is how many of the host's last stderr lines a failure
// quotes: enough for a Java stack trace's head.
const stderrLines = 50

// process is one run of the host JVM.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // the exit error, once exited is closed

	mu    sync.Mutex
	lines []string // the last stderrLines of stderr
}

// startProcess runs cmd, logging its stdout and stderr line by line and
// keeping the last lines of stderr for the failure it may end in.
func startProcess(cmd *exec.Cmd, log *slog.Logger) (*process, error) {
	p := &process{cmd: cmd, exited: make(chan struct{})}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("connector host stdout: %w", err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("connector host stderr: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start connector host %s: %w", cmd.Path, err)
	}
	var copied sync.WaitGroup
	copied.Go(func() { p.copyLines(stdout, log, "stdout", false) })
	copied.Go(func() { p.copyLines(stderr, log, "stderr", true) })
	go func() {
		// Wait only after the pipes are drained, as os/exec requires, so
		// the last lines are in before the exit is told.
		copied.Wait()
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// copyLines logs each line of r under key, keeping the last ones if keep.
func (p *process) copyLines(r io.Reader, log *slog.Logger, key string, keep bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		log.Info("connector host", key, line)
		if !keep {
			continue
		}
		p.mu.Lock()
		p.lines = append(p.lines, line)
		if len(p.lines) > stderrLines {
			p.lines = p.lines[len(p.lines)-stderrLines:]
		}
		p.mu.Unlock()
	}
}

// stderr returns the last lines kept.
func (p *process) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

// exitError describes the exit, once it happened.
func (p *process) exitError() error {
	status := "exit status 0"
	if p.err != nil {
		status = p.err.Error()
	}
	if s := p.stderr(); s != "" {
		return fmt.Errorf("connector host exited (%s): %s", status, s)
	}
	return fmt.Errorf("connector host exited (%s)", status)
}

// waitExit waits up to d for the process to exit; it reports whether it
// did.
func (p *process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// kill kills the process if it still runs.
func (p *process) kill() {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Kill()
	}
}
