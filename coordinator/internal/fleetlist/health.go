package fleetlist

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/records"
)

// DefaultLagThreshold is the sink lag, in records, from which a running
// sink is degraded when Config names no threshold.
const DefaultLagThreshold = 100_000

// Task is one of a connector's current tasks as its status shows it.
type Task struct {
	ID int
	// State is its status's state; "" when it has none yet.
	State, Trace, WorkerID string
}

// Snapshot is what a connector's health is judged on.
type Snapshot struct {
	// Target is the target state its config holds (records.Target…).
	Target string
	// State and Trace are its own status ("" when it has none).
	State, Trace string
	// Tasks are its current tasks, by id: as many as it has task configs
	// (none while stopped).
	Tasks []Task
	// Lag is a sink's last read total lag; nil when not known or a source.
	Lag *int64
}

// Judge derives a connector's health and the reason for it, for a person.
// The first rule that holds decides (docs/console.md, "Health"):
//
//	stopped     its target state is STOPPED
//	failed      the connector is FAILED, or it has tasks and all are FAILED
//	paused      its target state is PAUSED
//	degraded    some, not all, tasks are FAILED
//	unassigned  the connector, or a task, has no agent (UNASSIGNED, or no status yet)
//	degraded    the connector or a task is in another state than RUNNING
//	            (RESTARTING, or PAUSED while resuming), or a sink's lag is at
//	            or above lagThreshold records (0: never)
//	healthy     the connector and every task are RUNNING
func Judge(s Snapshot, lagThreshold int64) (health, reason string) {
	failed := tasksIn(s.Tasks, func(t Task) bool { return t.State == api.StateFailed })
	n := len(s.Tasks)
	switch {
	case s.Target == records.TargetStopped:
		return api.HealthStopped, "stopped"
	case s.State == api.StateFailed:
		return api.HealthFailed, withTrace("connector FAILED", s.Trace)
	case n > 0 && len(failed) == n:
		return api.HealthFailed, tasksReason(failed, n, api.StateFailed)
	case s.Target == records.TargetPaused:
		if len(failed) > 0 {
			return api.HealthPaused, "paused; " + tasksReason(failed, n, api.StateFailed)
		}
		return api.HealthPaused, "paused"
	case len(failed) > 0:
		return api.HealthDegraded, tasksReason(failed, n, api.StateFailed)
	case s.State == "" || s.State == api.StateUnassigned:
		if s.State == "" {
			return api.HealthUnassigned, "connector has no status yet"
		}
		return api.HealthUnassigned, withTrace("connector unassigned", s.Trace)
	}
	if unassigned := tasksIn(s.Tasks, func(t Task) bool { return t.State == "" || t.State == api.StateUnassigned }); len(unassigned) > 0 {
		return api.HealthUnassigned, tasksReason(unassigned, n, api.StateUnassigned)
	}
	var why []string
	if s.State != api.StateRunning {
		why = append(why, "connector "+s.State)
	}
	if other := tasksIn(s.Tasks, func(t Task) bool { return t.State != api.StateRunning }); len(other) > 0 {
		why = append(why, tasksReason(other, n, ""))
	}
	if s.Lag != nil && lagThreshold > 0 && *s.Lag >= lagThreshold {
		why = append(why, fmt.Sprintf("sink lag %d records", *s.Lag))
	}
	if len(why) > 0 {
		return api.HealthDegraded, strings.Join(why, "; ")
	}
	if n == 0 {
		return api.HealthHealthy, "RUNNING, no tasks"
	}
	return api.HealthHealthy, fmt.Sprintf("%d of %d tasks RUNNING", n, n)
}

// tasksIn are the tasks of ts that match.
func tasksIn(ts []Task, match func(Task) bool) []Task {
	var out []Task
	for _, t := range ts {
		if match(t) {
			out = append(out, t)
		}
	}
	return out
}

// tasksReason says that some of n tasks are in state (when state is "",
// each task's own state is named): one task by its id and its trace's
// first line ("task 1 unassigned: No live agent has the plugin X"), more
// by their count, with the first one's trace ("2 of 4 tasks FAILED: task
// 0: …").
func tasksReason(some []Task, n int, state string) string {
	first := some[0]
	what := state
	if what == "" {
		what = first.State
	}
	if state == api.StateUnassigned {
		what = "unassigned"
		if first.State == "" && first.Trace == "" {
			first.Trace = "no status yet"
		}
	}
	if len(some) == 1 {
		return withTrace(fmt.Sprintf("task %d %s", first.ID, what), first.Trace)
	}
	if state == "" {
		what = "not RUNNING"
	}
	return withTrace(fmt.Sprintf("%d of %d tasks %s", len(some), n, what), firstLine(first.Trace, fmt.Sprintf("task %d: ", first.ID)))
}

// maxTraceReason bounds the part of a trace a reason quotes, in bytes.
const maxTraceReason = 160

// withTrace is what, and the first line of trace after a colon when
// there is one.
func withTrace(what, trace string) string {
	if line := firstLine(trace, ""); line != "" {
		return what + ": " + line
	}
	return what
}

// firstLine is the first non-empty line of trace, cut to maxTraceReason
// bytes (at a rune boundary), after prefix; "" when trace has no text.
func firstLine(trace, prefix string) string {
	trace = strings.TrimSpace(trace)
	if trace == "" {
		return ""
	}
	line, _, _ := strings.Cut(trace, "\n")
	line = strings.TrimSpace(line)
	if len(line) > maxTraceReason {
		cut := maxTraceReason
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		line = line[:cut] + "…"
	}
	return prefix + line
}
