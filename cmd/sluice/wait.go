package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/restclient"
)

// waitFlags are --wait and its --timeout.
func waitFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "wait", Usage: "wait until the connectors and all their tasks are RUNNING"},
		&cli.DurationFlag{Name: "timeout", Value: 2 * time.Minute, Usage: "how long --wait waits"},
	}
}

// pollInterval is how often --wait asks for the status.
const pollInterval = 500 * time.Millisecond

// newBar is a progress bar on stderr, shown only when stderr is a
// terminal: stdout stays the command's result, and logs of scripts stay
// free of carriage returns.
func newBar(total int, what string) *progressbar.ProgressBar {
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription(what),
		progressbar.OptionSetVisibility(isTerminal(os.Stderr)),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionClearOnFinish(),
	)
}

// isTerminal reports whether f is a terminal (a character device).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// running reports whether a connector and every task of it run — at
// least one task, as a connector just started has none assigned yet — and
// a failure to report if one failed.
func running(st api.ConnectorStateInfo) (bool, error) {
	if st.Connector.State == "FAILED" {
		return false, fmt.Errorf("connector FAILED: %s", firstLine(st.Connector.Trace))
	}
	ok := st.Connector.State == "RUNNING" && len(st.Tasks) > 0
	for _, t := range st.Tasks {
		if t.State == "FAILED" {
			return false, fmt.Errorf("task %d FAILED: %s", t.ID, firstLine(t.Trace))
		}
		ok = ok && t.State == "RUNNING"
	}
	return ok, nil
}

// waitRunning polls the connectors' status until each runs with all its
// tasks, one FAILED, or the timeout passes.
func (s *session) waitRunning(names []string, timeout time.Duration) error {
	bar := newBar(len(names), "waiting for RUNNING")
	defer bar.Close()
	deadline := time.Now().Add(timeout)
	pending := slices.Clone(names)
	for {
		var still []string
		for _, n := range pending {
			var st api.ConnectorStateInfo
			err := s.get(connectorPath(n, "/status"), &st)
			var he *restclient.HTTPError
			if errors.As(err, &he) && he.Status == http.StatusNotFound {
				// Just created: no status written yet.
				still = append(still, n)
				continue
			}
			if err != nil {
				return fmt.Errorf("%s: %w", n, err)
			}
			ok, err := running(st)
			if err != nil {
				return fmt.Errorf("%s: %w", n, err)
			}
			if ok {
				_ = bar.Add(1)
				fmt.Fprintf(s.c.App.ErrWriter, "%s: RUNNING\n", n)
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
		select {
		case <-s.c.Context.Done():
			return s.c.Context.Err()
		case <-time.After(pollInterval):
		}
	}
}

// busy runs fn with a spinner on stderr (a terminal only) saying what
// the CLI waits for.
func busy(what string, fn func() error) error {
	bar := newBar(-1, what)
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
