package planner

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/placements"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
)

func lastRan(agent string) func(*Desired) { return func(d *Desired) { d.LastAgent = agent } }

// TestPlanReturningAgents is the table of placement after a restart: an
// unplaced task goes back to the agent that last ran it, waits for it while
// it may still come back, and goes elsewhere at once when it is gone.
func TestPlanReturningAgents(t *testing.T) {
	a, b, c := tid("c", 0), tid("c", 1), tid("c", 2)
	cases := []struct {
		name string
		in   Input
		// assigned: task → agent; waiting: unassigned tasks → a word of their reason
		assigned map[api.TaskID]string
		waiting  map[api.TaskID]string
	}{
		{
			name: "back to the agent that ran it, though another holds fewer",
			in: Input{Desired: desired(want(a, "h", lastRan("x")), want(b, "h", lastRan("x")), want(c, "h", lastRan("y"))),
				Agents: []registry.Agent{agent("x"), agent("y"), agent("z")}},
			assigned: map[api.TaskID]string{a: "x", b: "x", c: "y"},
		},
		{
			name: "waits for its agent while it is presumed; the others' are placed",
			in: Input{Desired: desired(want(a, "h", lastRan("x")), want(b, "h", lastRan("y"))),
				Agents: []registry.Agent{presumed("x"), agent("y")}},
			assigned: map[api.TaskID]string{b: "y"},
			waiting:  map[api.TaskID]string{a: "Waiting for agent x"},
		},
		{
			name: "its agent is gone (lost, or its lease ran out): placed at once",
			in: Input{Desired: desired(want(a, "h", lastRan("x")), want(b, "h", lastRan("y"))),
				Agents: []registry.Agent{agent("y")}},
			assigned: map[api.TaskID]string{a: "y", b: "y"},
		},
		{
			name: "waits even when no agent is registered, and says for whom",
			in: Input{Desired: desired(want(a, "h", lastRan("x"))),
				Agents: []registry.Agent{presumed("x")}},
			waiting: map[api.TaskID]string{a: "Waiting for agent x"},
		},
		{
			name: "a settling start holds the tasks that never ran; the others are placed",
			in: Input{Desired: desired(want(a, "h"), want(b, "h", lastRan("y")), want(c, "h")),
				Agents: []registry.Agent{agent("x"), agent("y")}, Settling: map[api.TaskID]bool{a: true}},
			assigned: map[api.TaskID]string{b: "y", c: "x"},
			waiting:  map[api.TaskID]string{a: "Waiting for the agents that start together"},
		},
		{
			name: "a placed task stays on its agent whatever ran it last",
			in: Input{Desired: desired(want(a, "h", lastRan("x"))), Agents: []registry.Agent{agent("x"), agent("y", running(a, 3, api.StateRunning))},
				Placements: map[api.TaskID]placements.Placement{a: {Agent: "y", Generation: 3, Hash: "h"}}, Generation: 3},
		},
		{
			name: "an invalid selector says so, not that the task waits",
			in: Input{Desired: desired(want(a, "h", lastRan("x"), func(d *Desired) { d.SelectorError = "bad" })),
				Agents: []registry.Agent{presumed("x"), agent("y")}},
			waiting: map[api.TaskID]string{a: "The task runs nowhere"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := Plan(tc.in)
			got := map[api.TaskID]string{}
			for ag, tasks := range out.Assigns {
				for _, x := range tasks {
					got[x.ID] = ag
				}
			}
			if tc.assigned == nil {
				tc.assigned = map[api.TaskID]string{}
			}
			if !reflect.DeepEqual(got, tc.assigned) {
				t.Fatalf("assigned %v, want %v", got, tc.assigned)
			}
			if len(out.Unassigned) != len(tc.waiting) {
				t.Fatalf("unassigned %v (%v), want %v", out.Unassigned, out.Reasons, tc.waiting)
			}
			for id, word := range tc.waiting {
				if !strings.HasPrefix(out.Reasons[id], word) {
					t.Fatalf("reason of %v: %q, want it to start %q", id, out.Reasons[id], word)
				}
				if _, placed := out.Placements[id]; placed {
					t.Fatalf("waiting task %v is placed: %v", id, out.Placements[id])
				}
			}
		})
	}
}

// TestPlanSettlingTaskNoAgentCanRun: a settling task that no live agent
// can run says why, not that it waits for agents.
func TestPlanSettlingTaskNoAgentCanRun(t *testing.T) {
	a := tid("c", 0)
	out := Plan(Input{Desired: desired(want(a, "h", selector(map[string]string{"zone": "z"}))),
		Agents: []registry.Agent{agent("x")}, Settling: map[api.TaskID]bool{a: true}})
	if got := out.Reasons[a]; !strings.HasPrefix(got, "No live agent matches") {
		t.Fatalf("reason %q, want the selector's", got)
	}
}
