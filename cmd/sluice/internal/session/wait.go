package session

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
)

// WaitFlags are --wait and its --timeout.
func WaitFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "wait", Usage: "wait until the connectors and all their tasks are RUNNING"},
		&cli.DurationFlag{Name: "timeout", Value: 2 * time.Minute, Usage: "how long --wait waits"},
	}
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

// Running reports whether a connector and every task of it run — at
// least one task, as a connector just started has none assigned yet — and
// a failure to report if one failed.
func Running(st api.ConnectorStateInfo) (bool, error) {
	if st.Connector.State == "FAILED" {
		return false, fmt.Errorf("connector FAILED: %s", output.FirstLine(st.Connector.Trace))
	}
	ok := st.Connector.State == "RUNNING" && len(st.Tasks) > 0
	for _, t := range st.Tasks {
		if t.State == "FAILED" {
			return false, fmt.Errorf("task %d FAILED: %s", t.ID, output.FirstLine(t.Trace))
		}
		ok = ok && t.State == "RUNNING"
	}
	return ok, nil
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

// WaitRunning polls the connectors' status until each runs with all its
// tasks, one FAILED, or the timeout passes.
func (s *Session) WaitRunning(names []string, timeout time.Duration) error {
	bar := NewBar(len(names), "waiting for RUNNING")
	defer bar.Close()
	deadline := time.Now().Add(timeout)
	pending := slices.Clone(names)
	for {
		var still []string
		for _, n := range pending {
			st, err := Call(s, s.API.Connectors().Status, n)
			if IsStatus(err, http.StatusNotFound) {
				// Just created: no status written yet.
				still = append(still, n)
				continue
			}
			if err != nil {
				return fmt.Errorf("%s: %w", n, err)
			}
			ok, err := Running(st)
			if err != nil {
				return fmt.Errorf("%s: %w", n, err)
			}
			if ok {
				_ = bar.Add(1)
				s.Progress("%s: RUNNING", n)
			} else {
				still = append(still, n)
			}
		}
		if pending = still; len(pending) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not RUNNING after %s: %s", timeout, strings.Join(pending, ", "))
		}
		if err := s.Sleep(PollInterval); err != nil {
			return err
		}
	}
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
