// Package scheduler decides which agent runs which task. It is a pure
// function of the tasks, the live agents and the current assignment, so it
// is deterministic and tested without a cluster.
//
// It is sticky: a task stays where it runs as long as its agent is live,
// still matches the task's selector and still has its plugin, so adding a connector, an agent or a
// task never moves a running task. Only unplaced tasks are placed, each on
// the matching agent that holds the fewest tasks (ties broken by agent id).
package scheduler

import (
	"sort"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/shared/labels"
)

// Agent is a live agent.
type Agent struct {
	ID     string
	Labels map[string]string
	// Plugins are the classes of the plugins the agent can run.
	Plugins map[string]bool
}

// Task is a task to place.
type Task struct {
	ID       v1.TaskID
	Selector map[string]string
	// Plugin is the full class of the task's connector; a task runs only
	// on an agent that has it. Empty places it on any agent.
	Plugin string
}

// Fits reports whether agent a may run task t: it matches the task's
// selector and has its plugin.
func Fits(t Task, a Agent) bool {
	return labels.Matches(t.Selector, a.Labels) && (t.Plugin == "" || a.Plugins[t.Plugin])
}

// Assign returns the new placement: task id → agent id. Tasks that no live
// agent matches are absent from the result.
func Assign(tasks []Task, agents []Agent, current map[v1.TaskID]string) map[v1.TaskID]string {
	byID := make(map[string]Agent, len(agents))
	for _, a := range agents {
		byID[a.ID] = a
	}
	out := make(map[v1.TaskID]string, len(tasks))
	load := make(map[string]int, len(agents))
	var unplaced []Task
	for _, t := range tasks {
		if id, ok := current[t.ID]; ok {
			if a, live := byID[id]; live && Fits(t, a) {
				out[t.ID] = id
				load[id]++
				continue
			}
		}
		unplaced = append(unplaced, t)
	}
	sort.Slice(unplaced, func(i, j int) bool { return less(unplaced[i].ID, unplaced[j].ID) })
	sorted := append([]Agent(nil), agents...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	for _, t := range unplaced {
		best := ""
		for _, a := range sorted {
			if !Fits(t, a) {
				continue
			}
			if best == "" || load[a.ID] < load[best] {
				best = a.ID
			}
		}
		if best != "" {
			out[t.ID] = best
			load[best]++
		}
	}
	return out
}

func less(a, b v1.TaskID) bool {
	if a.Connector != b.Connector {
		return a.Connector < b.Connector
	}
	return a.Task < b.Task
}
