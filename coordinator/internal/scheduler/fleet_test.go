package scheduler

import (
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/sluice-io/sluice/api"
)

func zone(id, z string) Agent { return Agent{ID: id, Labels: map[string]string{"zone": z}} }

func cordoned(a Agent) Agent {
	a.Cordoned = true
	return a
}

func inZone(id api.TaskID, z string) Task {
	return Task{ID: id, Selector: map[string]string{"zone": z}}
}

func TestAssignCordonsAndMoves(t *testing.T) {
	x, y, z := tid("c", 0), tid("c", 1), tid("c", 2)
	cases := []struct {
		name    string
		tasks   []Task
		agents  []Agent
		current map[api.TaskID]string
		moves   map[api.TaskID]Move
		want    map[api.TaskID]string
	}{
		{
			name:    "a cordoned agent keeps its tasks and is given none",
			tasks:   []Task{{ID: x}, {ID: y}, {ID: z}},
			agents:  []Agent{cordoned(Agent{ID: "a"}), {ID: "b"}},
			current: map[api.TaskID]string{x: "a"},
			want:    map[api.TaskID]string{x: "a", y: "b", z: "b"},
		},
		{
			name:   "only cordoned agents: new tasks stay unplaced",
			tasks:  []Task{{ID: x}},
			agents: []Agent{cordoned(Agent{ID: "a"})},
			want:   map[api.TaskID]string{},
		},
		{
			name:    "a task whose cordoned agent stops fitting it moves elsewhere",
			tasks:   []Task{inZone(x, "2")},
			agents:  []Agent{cordoned(zone("a", "1")), zone("b", "2")},
			current: map[api.TaskID]string{x: "a"},
			want:    map[api.TaskID]string{x: "b"},
		},
		{
			name:    "a move to a named agent goes there, however loaded",
			tasks:   []Task{{ID: x}, {ID: y}},
			agents:  []Agent{{ID: "a"}, {ID: "b"}, {ID: "c"}},
			current: map[api.TaskID]string{x: "a", y: "b"},
			moves:   map[api.TaskID]Move{x: {From: "a", To: "b"}},
			want:    map[api.TaskID]string{x: "b", y: "b"},
		},
		{
			name:    "a move to anywhere goes to the least loaded other agent",
			tasks:   []Task{{ID: x}, {ID: y}},
			agents:  []Agent{{ID: "a"}, {ID: "b"}, {ID: "c"}},
			current: map[api.TaskID]string{x: "a", y: "b"},
			moves:   map[api.TaskID]Move{x: {From: "a"}},
			want:    map[api.TaskID]string{x: "c", y: "b"},
		},
		{
			name:    "a move off the only empty agent still leaves it",
			tasks:   []Task{{ID: x}, {ID: y}},
			agents:  []Agent{{ID: "a"}, {ID: "b"}},
			current: map[api.TaskID]string{x: "a", y: "b"},
			moves:   map[api.TaskID]Move{x: {From: "a"}},
			want:    map[api.TaskID]string{x: "b", y: "b"},
		},
		{
			name:    "a move to an agent that does not fit goes to one that does",
			tasks:   []Task{inZone(x, "1")},
			agents:  []Agent{zone("a", "1"), zone("b", "2"), zone("c", "1")},
			current: map[api.TaskID]string{x: "a"},
			moves:   map[api.TaskID]Move{x: {From: "a", To: "b"}},
			want:    map[api.TaskID]string{x: "c"},
		},
		{
			name:    "a move to a cordoned, a gone or the same agent goes anywhere else",
			tasks:   []Task{{ID: x}, {ID: y}, {ID: z}},
			agents:  []Agent{{ID: "a"}, cordoned(Agent{ID: "b"}), {ID: "c"}},
			current: map[api.TaskID]string{x: "a", y: "a", z: "a"},
			moves:   map[api.TaskID]Move{x: {From: "a", To: "b"}, y: {From: "a", To: "gone"}, z: {From: "a", To: "a"}},
			want:    map[api.TaskID]string{x: "c", y: "c", z: "c"},
		},
		{
			name:    "a move with nowhere to go leaves the task unplaced, not on From",
			tasks:   []Task{inZone(x, "1"), {ID: y}},
			agents:  []Agent{zone("a", "1"), zone("b", "2"), cordoned(zone("c", "1"))},
			current: map[api.TaskID]string{x: "a", y: "a"},
			moves:   map[api.TaskID]Move{x: {From: "a"}},
			want:    map[api.TaskID]string{y: "a"},
		},
		{
			name:    "a stale move (the task is elsewhere, or unplaced) is ignored",
			tasks:   []Task{{ID: x}, {ID: y}},
			agents:  []Agent{{ID: "a"}, {ID: "b"}, {ID: "c"}},
			current: map[api.TaskID]string{x: "b"},
			moves:   map[api.TaskID]Move{x: {From: "a", To: "c"}, y: {From: "a", To: "c"}},
			want:    map[api.TaskID]string{x: "b", y: "a"},
		},
		{
			name:    "moves to named agents are placed before the least loaded choices",
			tasks:   []Task{{ID: tid("a", 0)}, {ID: tid("z", 0)}},
			agents:  []Agent{{ID: "a"}, {ID: "b"}, {ID: "c"}},
			current: map[api.TaskID]string{tid("z", 0): "a"},
			moves:   map[api.TaskID]Move{tid("z", 0): {From: "a", To: "b"}},
			want:    map[api.TaskID]string{tid("a", 0): "a", tid("z", 0): "b"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Assign(tc.tasks, tc.agents, tc.current, tc.moves); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Assign = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEligible(t *testing.T) {
	agents := []Agent{zone("c", "1"), zone("a", "1"), zone("b", "2"), cordoned(zone("d", "1")), cordoned(zone("f", "3")),
		{ID: "e", Labels: map[string]string{"zone": "1"}, Plugins: map[string]bool{"x.Jdbc": true}}}
	cases := []struct {
		name    string
		task    Task
		exclude string
		want    []string
	}{
		{"any task: every uncordoned agent, sorted", Task{ID: tid("t", 0)}, "", []string{"a", "b", "c", "e"}},
		{"the draining agent is left out", Task{ID: tid("t", 0)}, "a", []string{"b", "c", "e"}},
		{"a selector", inZone(tid("t", 0), "1"), "c", []string{"a", "e"}},
		{"a plugin", Task{ID: tid("t", 0), Plugin: "x.Jdbc"}, "", []string{"e"}},
		{"pinned to the draining agent: nowhere", Task{ID: tid("t", 0), Plugin: "x.Jdbc"}, "e", nil},
		{"only a cordoned agent fits: nowhere", inZone(tid("t", 0), "3"), "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Eligible(tc.task, agents, tc.exclude); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Eligible = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLoads(t *testing.T) {
	agents := []Agent{{ID: "a"}, {ID: "b"}, cordoned(Agent{ID: "c"})}
	current := map[api.TaskID]string{tid("x", 0): "a", tid("x", 1): "a", tid("x", 2): "c", tid("x", 3): "gone"}
	if got, want := Loads(agents, current), map[string]int{"a": 2, "b": 0}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Loads = %v, want %v", got, want)
	}
}

// spread returns n tasks of connector c, numbered from first, placed on agent.
func spread(c string, first, n int, agent string, current map[api.TaskID]string) []Task {
	var tasks []Task
	for i := first; i < first+n; i++ {
		tasks = append(tasks, Task{ID: tid(c, i)})
		current[tid(c, i)] = agent
	}
	return tasks
}

func TestRebalanceAfterARollingRestart(t *testing.T) {
	current := map[api.TaskID]string{}
	tasks := append(spread("t", 0, 30, "a", current), spread("t", 30, 30, "b", current)...)
	agents := []Agent{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	// The most loaded agent gives its highest task to the empty one, a and
	// b in turn (a first on a tie), until all three hold 20.
	var want []Move
	for i := range 10 {
		want = append(want, Move{Task: tid("t", 29-i), From: "a", To: "c"}, Move{Task: tid("t", 59-i), From: "b", To: "c"})
	}
	got := Rebalance(tasks, agents, current, 0)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Rebalance = %v\nwant %v", got, want)
	}
	after := Assign(tasks, agents, current, byTask(got))
	if loads, want := Loads(agents, after), map[string]int{"a": 20, "b": 20, "c": 20}; !reflect.DeepEqual(loads, want) {
		t.Fatalf("loads after the moves = %v, want %v", loads, want)
	}
	// Balanced now: nothing more to do.
	if again := Rebalance(tasks, agents, after, 0); len(again) != 0 {
		t.Fatalf("a second rebalance moves %v, want nothing", again)
	}
}

func TestRebalance(t *testing.T) {
	one, two := map[string]string{"zone": "1"}, map[string]string{"zone": "2"}
	cases := []struct {
		name    string
		tasks   []Task
		agents  []Agent
		current map[api.TaskID]string
		max     int
		want    []Move
	}{
		{
			name:    "already balanced: no moves",
			tasks:   []Task{{ID: tid("x", 0)}, {ID: tid("x", 1)}, {ID: tid("x", 2)}},
			agents:  []Agent{{ID: "a"}, {ID: "b"}},
			current: map[api.TaskID]string{tid("x", 0): "a", tid("x", 1): "a", tid("x", 2): "b"},
		},
		{
			name:   "no tasks: no moves",
			agents: []Agent{{ID: "a"}},
		},
		{
			name:    "at most max moves, the most useful first",
			tasks:   []Task{{ID: tid("x", 0)}, {ID: tid("x", 1)}, {ID: tid("x", 2)}, {ID: tid("x", 3)}, {ID: tid("x", 4)}, {ID: tid("x", 5)}},
			agents:  []Agent{{ID: "a"}, {ID: "b"}, {ID: "c"}},
			current: map[api.TaskID]string{tid("x", 0): "a", tid("x", 1): "a", tid("x", 2): "a", tid("x", 3): "a", tid("x", 4): "a", tid("x", 5): "a"},
			max:     3,
			want:    []Move{{Task: tid("x", 5), From: "a", To: "b"}, {Task: tid("x", 4), From: "a", To: "c"}, {Task: tid("x", 3), From: "a", To: "b"}},
		},
		{
			name: "tasks pinned by labels only go where they fit",
			// a holds four tasks, three pinned to zone 1; c is the only
			// other zone 1 agent, b the only empty one.
			tasks: []Task{{ID: tid("p", 0), Selector: one}, {ID: tid("p", 1), Selector: one}, {ID: tid("p", 2), Selector: one},
				{ID: tid("q", 0)}, {ID: tid("r", 0), Selector: two}},
			agents: []Agent{zone("a", "1"), zone("b", "2"), zone("c", "1")},
			current: map[api.TaskID]string{tid("p", 0): "a", tid("p", 1): "a", tid("p", 2): "a", tid("q", 0): "a",
				tid("r", 0): "b"},
			want: []Move{{Task: tid("q", 0), From: "a", To: "c"}, {Task: tid("p", 2), From: "a", To: "c"}},
		},
		{
			name:    "a task that fits nowhere else blocks nothing and is not moved",
			tasks:   []Task{{ID: tid("p", 0), Selector: one}, {ID: tid("p", 1), Selector: one}, {ID: tid("p", 2), Selector: one}},
			agents:  []Agent{zone("a", "1"), zone("b", "2")},
			current: map[api.TaskID]string{tid("p", 0): "a", tid("p", 1): "a", tid("p", 2): "a"},
		},
		{
			name: "tasks on a cordoned agent stay; a cordoned agent receives nothing",
			tasks: []Task{{ID: tid("x", 0)}, {ID: tid("x", 1)}, {ID: tid("x", 2)}, {ID: tid("x", 3)},
				{ID: tid("y", 0)}, {ID: tid("y", 1)}, {ID: tid("y", 2)}, {ID: tid("y", 3)}},
			agents: []Agent{cordoned(Agent{ID: "a"}), {ID: "b"}, {ID: "c"}, cordoned(Agent{ID: "d"})},
			current: map[api.TaskID]string{tid("x", 0): "a", tid("x", 1): "a", tid("x", 2): "a", tid("x", 3): "a",
				tid("y", 0): "b", tid("y", 1): "b", tid("y", 2): "b", tid("y", 3): "b"},
			want: []Move{{Task: tid("y", 3), From: "b", To: "c"}, {Task: tid("y", 2), From: "b", To: "c"}},
		},
		{
			name:    "tasks not placed, or placed on a gone agent, are not counted",
			tasks:   []Task{{ID: tid("x", 0)}, {ID: tid("x", 1)}, {ID: tid("x", 2)}, {ID: tid("x", 3)}},
			agents:  []Agent{{ID: "a"}, {ID: "b"}},
			current: map[api.TaskID]string{tid("x", 0): "a", tid("x", 1): "gone", tid("x", 2): "gone", tid("z", 9): "a"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Rebalance(tc.tasks, tc.agents, tc.current, tc.max)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Rebalance = %v, want %v", got, tc.want)
			}
			// Same input, same moves.
			for range 5 {
				if again := Rebalance(tc.tasks, tc.agents, tc.current, tc.max); !reflect.DeepEqual(again, got) {
					t.Fatalf("Rebalance is not deterministic: %v then %v", got, again)
				}
			}
		})
	}
}

func TestRebalanceOnALargeFleet(t *testing.T) {
	current := map[api.TaskID]string{}
	var tasks []Task
	var agents []Agent
	for i := range 7 {
		id := "agent-" + strconv.Itoa(i)
		agents = append(agents, zone(id, strconv.Itoa(i%3)))
		tasks = append(tasks, spread("c"+strconv.Itoa(i), 0, i*i*3, id, current)...)
	}
	moves := Rebalance(tasks, agents, current, 0)
	loads := Loads(agents, Assign(tasks, agents, current, byTask(moves)))
	lo, hi := len(tasks), 0
	for _, n := range loads {
		lo, hi = min(lo, n), max(hi, n)
	}
	if hi-lo > 1 {
		t.Fatalf("after %d moves the loads are %v, want within one task", len(moves), loads)
	}

	// Pin every other task to its agent's zone: the moves stay valid.
	for i := range tasks {
		if i%2 == 0 {
			tasks[i].Selector = map[string]string{"zone": index(agents)[current[tasks[i].ID]].Labels["zone"]}
		}
	}
	moves = Rebalance(tasks, agents, current, 0)
	byID, seen := index(agents), map[api.TaskID]bool{}
	for _, m := range moves {
		task := tasks[slices.IndexFunc(tasks, func(t Task) bool { return t.ID == m.Task })]
		if seen[m.Task] || current[m.Task] != m.From || !Fits(task, byID[m.To]) {
			t.Fatalf("move %v: moved twice, not from where it runs, or to an agent that does not fit it (%v)", m, moves)
		}
		seen[m.Task] = true
	}
	if len(moves) == 0 {
		t.Fatalf("no moves, want some")
	}
}

func byTask(moves []Move) map[api.TaskID]Move {
	m := make(map[api.TaskID]Move, len(moves))
	for _, mv := range moves {
		m[mv.Task] = mv
	}
	return m
}
