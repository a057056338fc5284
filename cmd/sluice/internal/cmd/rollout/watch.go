package rollout

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// barWidth is the width of a batch's progress bar, in characters.
const barWidth = 10

// watchRollout polls a rollout until it ends, drawing a progress line per
// batch: redrawn in place on a terminal, else one line per change (a log
// or a pipe keeps every step). A rollout that ends other than done is an
// error, so a script can tell.
func watchRollout(s *session.Session, id string, interval time.Duration) error {
	f, _ := s.W.(*os.File)
	live := f != nil && session.IsTerminal(f)
	var last []string
	for {
		r, err := session.Call(s, s.API.Fleet().Rollout, id)
		if err != nil {
			return err
		}
		lines := rolloutLines(r)
		switch {
		case live:
			redraw(s.W, last, lines)
		default:
			for i, l := range lines {
				if i >= len(last) || last[i] != l {
					fmt.Fprintln(s.W, l)
				}
			}
		}
		last = lines
		switch r.State {
		case api.RolloutDone:
			fmt.Fprintf(s.W, "rollout %s done\n", r.ID)
			return nil
		case api.RolloutPaused, api.RolloutRolledBack, api.RolloutAborted:
			msg := fmt.Sprintf("rollout %s is %s", r.ID, r.State)
			if r.Error != "" {
				msg += ": " + r.Error
			}
			return fmt.Errorf("%s", msg)
		}
		select {
		case <-s.C.Context.Done():
			return s.C.Context.Err()
		case <-time.After(interval):
		}
	}
}

// redraw replaces the lines last drew with lines: the cursor goes back up
// over them, and each is rewritten and cleared to its end.
func redraw(w io.Writer, last, lines []string) {
	if len(last) > 0 {
		fmt.Fprintf(w, "\033[%dA", len(last))
	}
	for _, l := range lines {
		fmt.Fprintf(w, "\r%s\033[K\n", l)
	}
}

// rolloutLines are a rollout's progress lines, one per batch:
//
//	batch 2/4 [#####.....] 5/10 verifying
//
// the bar counts the batch's connectors that are no longer pending
// (applied, rolled back, skipped or failed).
func rolloutLines(r api.Rollout) []string {
	out := make([]string, 0, len(r.Batches))
	for i, b := range r.Batches {
		n := 0
		for _, c := range b.Connectors {
			if c.State != api.BatchPending {
				n++
			}
		}
		filled := 0
		if len(b.Connectors) > 0 {
			filled = n * barWidth / len(b.Connectors)
		}
		bar := strings.Repeat("#", filled) + strings.Repeat(".", barWidth-filled)
		out = append(out, fmt.Sprintf("batch %d/%d [%s] %d/%d %s", i+1, len(r.Batches), bar, n, len(b.Connectors), b.State))
	}
	return out
}
