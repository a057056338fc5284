package scheduler

import (
	"testing"

	"github.com/sluice-io/sluice/api"
)

func tid(c string, n int) api.TaskID { return api.TaskID{Connector: c, Task: n} }

func TestAssignSpreadsAndSticks(t *testing.T) {
	agents := []Agent{{ID: "a"}, {ID: "b"}}
	tasks := []Task{{ID: tid("c1", 0)}, {ID: tid("c1", 1)}, {ID: tid("c2", 0)}}
	got := Assign(tasks, agents, nil, nil)
	if got[tid("c1", 0)] != "a" || got[tid("c1", 1)] != "b" || got[tid("c2", 0)] != "a" {
		t.Fatalf("spread: %v", got)
	}
	// A new agent and a new task: nothing running moves.
	agents = append(agents, Agent{ID: "c"})
	tasks = append(tasks, Task{ID: tid("c3", 0)})
	next := Assign(tasks, agents, got, nil)
	for id, agent := range got {
		if next[id] != agent {
			t.Fatalf("task %v moved from %s to %s", id, agent, next[id])
		}
	}
	if next[tid("c3", 0)] != "c" {
		t.Fatalf("new task should go to the empty agent: %v", next)
	}
}

func TestAssignAgentLossMovesOnlyItsTasks(t *testing.T) {
	current := map[api.TaskID]string{tid("x", 0): "a", tid("y", 0): "b"}
	got := Assign([]Task{{ID: tid("x", 0)}, {ID: tid("y", 0)}}, []Agent{{ID: "b"}}, current, nil)
	if got[tid("x", 0)] != "b" || got[tid("y", 0)] != "b" {
		t.Fatalf("got %v", got)
	}
}

func TestAssignSelector(t *testing.T) {
	agents := []Agent{{ID: "a", Labels: map[string]string{"zone": "1"}}, {ID: "b", Labels: map[string]string{"zone": "2"}}}
	tasks := []Task{
		{ID: tid("f", 0), Selector: map[string]string{"zone": "2"}},
		{ID: tid("g", 0), Selector: map[string]string{"zone": "3"}},
	}
	got := Assign(tasks, agents, map[api.TaskID]string{tid("f", 0): "a"}, nil)
	if got[tid("f", 0)] != "b" {
		t.Fatalf("a task on a non-matching agent must move: %v", got)
	}
	if _, ok := got[tid("g", 0)]; ok {
		t.Fatalf("no agent matches zone=3: %v", got)
	}
}

// TestAssignPrefer: an unplaced task goes back to the agent that last ran
// it when that agent can take it, however loaded; otherwise, and for a task
// that is placed, Prefer changes nothing.
func TestAssignPrefer(t *testing.T) {
	x, y, z := tid("x", 0), tid("y", 0), tid("z", 0)
	cases := []struct {
		name    string
		agents  []Agent
		tasks   []Task
		current map[api.TaskID]string
		moves   map[api.TaskID]Move
		want    map[api.TaskID]string
	}{
		{"back to its agent though it is the more loaded",
			[]Agent{{ID: "a"}, {ID: "b"}}, []Task{{ID: x, Prefer: "a"}, {ID: y, Prefer: "a"}, {ID: z, Prefer: "a"}}, nil, nil,
			map[api.TaskID]string{x: "a", y: "a", z: "a"}},
		{"preferred ones count in the least loaded choice",
			[]Agent{{ID: "a"}, {ID: "b"}}, []Task{{ID: x}, {ID: y, Prefer: "a"}, {ID: z, Prefer: "a"}}, nil, nil,
			map[api.TaskID]string{x: "b", y: "a", z: "a"}},
		{"a cordoned agent takes nothing back",
			[]Agent{{ID: "a", Cordoned: true}, {ID: "b"}}, []Task{{ID: x, Prefer: "a"}}, nil, nil,
			map[api.TaskID]string{x: "b"}},
		{"an agent that does not fit takes nothing back",
			[]Agent{{ID: "a", Labels: map[string]string{"zone": "1"}}, {ID: "b", Labels: map[string]string{"zone": "2"}}},
			[]Task{{ID: x, Prefer: "a", Selector: map[string]string{"zone": "2"}}}, nil, nil,
			map[api.TaskID]string{x: "b"}},
		{"an agent that is gone: the least loaded",
			[]Agent{{ID: "b"}}, []Task{{ID: x, Prefer: "a"}}, nil, nil,
			map[api.TaskID]string{x: "b"}},
		{"a placed task stays where it is",
			[]Agent{{ID: "a"}, {ID: "b"}}, []Task{{ID: x, Prefer: "a"}}, map[api.TaskID]string{x: "b"}, nil,
			map[api.TaskID]string{x: "b"}},
		{"a moved task does not go back to the agent it is moved off",
			[]Agent{{ID: "a"}, {ID: "b"}}, []Task{{ID: x, Prefer: "a"}}, map[api.TaskID]string{x: "a"}, map[api.TaskID]Move{x: {From: "a"}},
			map[api.TaskID]string{x: "b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Assign(tc.tasks, tc.agents, tc.current, tc.moves)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for id, a := range tc.want {
				if got[id] != a {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}
