package rollout

import (
	"fmt"
	"strings"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
)

// verdict is what the health gate sees of a batch now.
type verdict struct {
	healthy bool
	// why says what is not healthy yet; failure what failed for good.
	why, failure string
	// deleted are the connectors deleted since they were applied.
	deleted []string
}

// health judges a batch: every applied connector that was RUNNING when
// the batch started must be RUNNING with every task RUNNING (at most
// maxFailed tasks FAILED in all), on a task started since the batch began
// unless settled.
func (c *Controller) health(b store.RolloutBatch, maxFailed int, settled bool) verdict {
	v := verdict{healthy: true}
	failed, freshFailed := 0, ""
	notYet := func(format string, args ...any) {
		if v.healthy {
			v.healthy, v.why = false, fmt.Sprintf(format, args...)
		}
	}
	for _, rc := range b.Connectors {
		if strings.HasPrefix(rc.State, "failed") {
			v.failure = rc.State
			return v
		}
		if rc.State != store.ConnectorApplied || !rc.WasRunning {
			continue
		}
		cur, ok := c.cfg.Configs.Get(rc.Name)
		if !ok {
			v.deleted = append(v.deleted, rc.Name)
			continue
		}
		if cur.TargetState != records.TargetStarted {
			continue // paused or stopped by hand since: not the patch's doing
		}
		st, _ := c.cfg.Statuses.Connector(rc.Name)
		switch {
		case st.State == api.StateFailed:
			v.failure = fmt.Sprintf("connector %s is FAILED", rc.Name)
			return v
		case st.State != api.StateRunning:
			notYet("connector %s is %s", rc.Name, orNone(st.State))
		case len(cur.Tasks) == 0:
			notYet("connector %s has no tasks yet", rc.Name)
		}
		for t := range cur.Tasks {
			ts, _ := c.cfg.Statuses.Task(rc.Name, t)
			fresh := ts.Generation > b.StartGeneration || settled
			switch {
			case ts.State == api.StateFailed:
				failed++
				if fresh && freshFailed == "" {
					freshFailed = fmt.Sprintf("%s-%d", rc.Name, t)
				}
			case ts.State != api.StateRunning:
				notYet("task %s-%d is %s", rc.Name, t, orNone(ts.State))
			case !fresh:
				notYet("task %s-%d has not restarted with the patched config yet", rc.Name, t)
			}
		}
	}
	if failed > maxFailed {
		if freshFailed != "" {
			v.failure = fmt.Sprintf("%d task(s) FAILED (at most %d allowed), task %s among them", failed, maxFailed, freshFailed)
			return v
		}
		notYet("%d task(s) FAILED (at most %d allowed)", failed, maxFailed)
	}
	return v
}

func orNone(state string) string {
	if state == "" {
		return "without a status"
	}
	return state
}
