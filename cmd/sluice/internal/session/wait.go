package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
)

// WaitFlag is --wait; --timeout (the connection flags') bounds it.
func WaitFlag() cli.Flag {
	return &cli.BoolFlag{Name: "wait", Usage: "then wait until the connectors and all their tasks are RUNNING, printing each one's state as it changes (up to --timeout)"}
}

// PollInterval is how often a command that waits asks again.
const PollInterval = 500 * time.Millisecond

// NewBar is a progress bar on stderr, shown only when stderr is a
// terminal: stdout stays the command's result, and logs of scripts stay
// free of carriage returns.
func NewBar(total int, what string) *progressbar.ProgressBar {
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription(what),
		progressbar.OptionSetVisibility(IsTerminal(os.Stderr)),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionClearOnFinish(),
	)
}

// IsTerminal reports whether f is a terminal (a character device).
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Progress is where a connector stands, in words, as a wait shows it.
type Progress struct {
	// Running: the connector and every task of it (at least one) run.
	Running bool
	// Failed is the failure of the connector or a task, if one FAILED.
	Failed error
	// Line is the state in words: "RUNNING (2/2 tasks)", "RUNNING, 0/1
	// tasks running; task 0 UNASSIGNED: No live agent has the plugin X".
	Line string
}

// StateOf is where a connector stands by its status: running, failed, or
// on its way, with the server's reason for each task that is not running
// (an UNASSIGNED task's trace says why no agent runs it).
func StateOf(st api.ConnectorStateInfo) Progress {
	c := st.Connector
	if c.State == api.StateFailed {
		err := fmt.Errorf("connector FAILED: %s", output.FirstLine(c.Trace))
		return Progress{Failed: err, Line: err.Error()}
	}
	running := 0
	var notes []string
	for _, t := range st.Tasks {
		switch {
		case t.State == api.StateFailed:
			err := fmt.Errorf("task %d FAILED: %s", t.ID, output.FirstLine(t.Trace))
			return Progress{Failed: err, Line: err.Error()}
		case t.State == api.StateRunning:
			running++
		case t.Trace != "":
			notes = append(notes, fmt.Sprintf("task %d %s: %s", t.ID, t.State, output.FirstLine(t.Trace)))
		default:
			notes = append(notes, fmt.Sprintf("task %d %s", t.ID, t.State))
		}
	}
	line := c.State
	if c.Trace != "" && c.State != api.StateRunning {
		line += ": " + output.FirstLine(c.Trace)
	}
	switch {
	case c.State == api.StatePaused || c.State == api.StateStopped:
		line += " (it runs once resumed)"
	case len(st.Tasks) == 0:
		line += ", no task yet"
	case running == len(st.Tasks) && c.State == api.StateRunning:
		return Progress{Running: true, Line: fmt.Sprintf("RUNNING (%s)", output.Count(running, "task"))}
	default:
		line += fmt.Sprintf(", %d/%d tasks running", running, len(st.Tasks))
	}
	if len(notes) > 0 {
		line += "; " + strings.Join(notes, "; ")
	}
	return Progress{Line: line}
}

// Sleep waits d, or less if the command's context ends (its error).
func (s *Session) Sleep(d time.Duration) error {
	select {
	case <-s.C.Context.Done():
		return s.C.Context.Err()
	case <-time.After(d):
		return nil
	}
}

// WaitRunning polls the connectors' status (GET
// /connectors?expand=status) until each runs with all its tasks, one
// FAILED, or the command's --timeout runs out. It says on
// stderr where each stands at once, and again each time that changes;
// when time runs out, it names those that do not run and why.
func (s *Session) WaitRunning(names []string) error {
	return s.wait(names, 0)
}

// restartGrace is how long a wait after a restart takes FAILED for what
// the status said before the restart: a task restarted alone is shown
// FAILED until its agent reports it again.
const restartGrace = 5 * time.Second

// WaitRestarted is WaitRunning after a restart: a FAILED state seen in
// its first seconds (restartGrace) is shown, not final, as it may be the
// one the restart ends; and RUNNING is final only when the next poll
// still shows it, so a task that fails again right after it started (a
// bad file, a refused login) is reported as failed, not as running.
func (s *Session) WaitRestarted(names []string) error {
	return s.wait(names, restartGrace)
}

// wait is WaitRunning, FAILED final only after grace.
func (s *Session) wait(names []string, grace time.Duration) error {
	start := time.Now()
	if d, ok := s.C.Context.Deadline(); ok {
		s.Progress("waiting for %s to run (--timeout: %s left)", strings.Join(names, ", "), time.Until(d).Round(time.Second))
	} else {
		s.Progress("waiting for %s to run", strings.Join(names, ", "))
	}
	last := map[string]string{}
	// seenRunning are the connectors a restart's wait saw running on the
	// last poll (see WaitRestarted).
	seenRunning := map[string]bool{}
	pending := slices.Clone(names)
	for {
		// One request a round, whatever the number of connectors.
		all, err := s.API.Connectors().ListExpanded(s.Ctx(), true, false)
		if s.timeUp() {
			return s.notRunning(start, pending, last)
		}
		if err != nil {
			return Err(err)
		}
		var still []string
		for _, n := range pending {
			p := Progress{Line: "no status yet"} // just created
			if e, ok := all[n]; ok && e.Status != nil {
				p = StateOf(*e.Status)
			}
			if p.Line != last[n] {
				last[n] = p.Line
				s.Progress("%s: %s", n, p.Line)
			}
			if p.Failed != nil && time.Since(start) >= grace {
				return fmt.Errorf("%s: %w", n, p.Failed)
			}
			switch {
			case !p.Running:
				seenRunning[n] = false
				still = append(still, n)
			case grace > 0 && !seenRunning[n]:
				seenRunning[n] = true
				still = append(still, n)
			}
		}
		if pending = still; len(pending) == 0 {
			return nil
		}
		if err := s.Sleep(PollInterval); err != nil {
			if s.timeUp() {
				return s.notRunning(start, pending, last)
			}
			return err
		}
	}
}

// timeUp reports whether the command's --timeout ran out.
func (s *Session) timeUp() bool {
	return errors.Is(s.C.Context.Err(), context.DeadlineExceeded)
}

// notRunning is the error of a wait whose time ran out: each connector not
// running, and where it stands.
func (s *Session) notRunning(start time.Time, pending []string, last map[string]string) error {
	parts := make([]string, len(pending))
	for i, n := range pending {
		parts[i] = n
		if l := last[n]; l != "" {
			parts[i] += " (" + l + ")"
		}
	}
	return fmt.Errorf("not RUNNING after %s (--timeout): %s", time.Since(start).Round(time.Second), strings.Join(parts, "; "))
}

// Busy runs fn with a spinner on stderr (a terminal only) saying what
// the CLI waits for.
func Busy(what string, fn func() error) error {
	bar := NewBar(-1, what)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = bar.Add(1)
			}
		}
	}()
	err := fn()
	close(done)
	_ = bar.Finish()
	return err
}
