package planner

import (
	"maps"
	"reflect"
	"strconv"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/placements"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
	"github.com/sluice-io/sluice/coordinator/internal/scheduler"
	"github.com/sluice-io/sluice/shared/wire"
)

func tid(c string, n int) api.TaskID { return api.TaskID{Connector: c, Task: n} }

func want(id api.TaskID, hash string, mods ...func(*Desired)) Desired {
	d := Desired{ID: id, Hash: hash, ConnConfig: map[string]string{"name": id.Connector}, TaskConfig: map[string]string{"task": hash}}
	for _, m := range mods {
		m(&d)
	}
	return d
}

func paused(d *Desired) { d.Paused = true }
func hold(d *Desired)   { d.Hold = true }
func selector(kv map[string]string) func(*Desired) {
	return func(d *Desired) { d.Selector = kv }
}

func agent(id string, tasks ...wire.RunningTask) registry.Agent {
	rep := map[api.TaskID]wire.RunningTask{}
	for _, t := range tasks {
		rep[t.ID] = t
	}
	return registry.Agent{ID: id, Registered: true, Reported: rep}
}

func labelled(id string, l map[string]string) registry.Agent {
	a := agent(id)
	a.Labels = l
	return a
}

func presumed(id string) registry.Agent { return registry.Agent{ID: id} }

func running(id api.TaskID, gen int64, state string) wire.RunningTask {
	return wire.RunningTask{ID: id, Generation: gen, State: state}
}

func desired(ds ...Desired) map[api.TaskID]Desired {
	m := map[api.TaskID]Desired{}
	for _, d := range ds {
		m[d.ID] = d
	}
	return m
}

// assigned summarises assignments as task → "agent@generation[/paused]".
func assigned(out Output) map[api.TaskID]string {
	m := map[api.TaskID]string{}
	for a, tasks := range out.Assigns {
		for _, t := range tasks {
			s := a + "@" + strconv.FormatInt(t.Generation, 10)
			if t.Paused {
				s += "/paused"
			}
			m[t.ID] = s
		}
	}
	return m
}

func TestPlan(t *testing.T) {
	a, b := tid("c", 0), tid("c", 1)
	cases := []struct {
		name string
		in   Input
		// expectations
		assigns    map[api.TaskID]string
		revokes    map[string][]api.TaskID
		unassigned []api.TaskID
		removed    []api.TaskID
		placed     map[api.TaskID]placements.Placement
		gen        int64
	}{
		{
			name:    "new tasks spread over agents, one new generation each",
			in:      Input{Desired: desired(want(a, "h"), want(b, "h")), Agents: []registry.Agent{agent("x"), agent("y")}, Generation: 4},
			assigns: map[api.TaskID]string{a: "x@5", b: "y@6"},
			placed:  map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 5, Hash: "h"}, b: {Agent: "y", Generation: 6, Hash: "h"}},
			gen:     6,
		},
		{
			name: "a task its agent reports running at its generation is not sent again",
			in: Input{Desired: desired(want(a, "h")), Agents: []registry.Agent{agent("x", running(a, 3, api.StateRunning))},
				Placements: map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 3, Hash: "h"}}, Generation: 3},
			placed: map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 3, Hash: "h"}},
			gen:    3,
		},
		{
			name: "a task missing from its agent's report is sent again at the same generation",
			in: Input{Desired: desired(want(a, "h")), Agents: []registry.Agent{agent("x")},
				Placements: map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 3, Hash: "h"}}, Generation: 3},
			assigns: map[api.TaskID]string{a: "x@3"},
			placed:  map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 3, Hash: "h"}},
			gen:     3,
		},
		{
			name: "a config change restarts the task where it is, at a new generation",
			in: Input{Desired: desired(want(a, "new")), Agents: []registry.Agent{agent("x", running(a, 3, api.StateRunning))},
				Placements: map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 3, Hash: "old"}}, Generation: 3},
			assigns: map[api.TaskID]string{a: "x@4"},
			placed:  map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 4, Hash: "new"}},
			gen:     4,
		},
		{
			name: "a held task keeps running with its old config",
			in: Input{Desired: desired(want(a, "new", hold)), Agents: []registry.Agent{agent("x", running(a, 3, api.StateRunning))},
				Placements: map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 3, Hash: "old"}}, Generation: 3},
			placed: map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 3, Hash: "old"}},
			gen:    3,
		},
		{
			name: "a held task its agent lost is started again",
			in: Input{Desired: desired(want(a, "new", hold)), Agents: []registry.Agent{agent("x")},
				Placements: map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 3, Hash: "old"}}, Generation: 3},
			assigns: map[api.TaskID]string{a: "x@4"},
			placed:  map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 4, Hash: "new"}},
			gen:     4,
		},
		{
			name: "a held task is still paused at once",
			in: Input{Desired: desired(want(a, "new", hold, paused)), Agents: []registry.Agent{agent("x", running(a, 3, api.StateRunning))},
				Placements: map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 3, Hash: "old"}}, Generation: 3},
			assigns: map[api.TaskID]string{a: "x@4/paused"},
			placed:  map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 4, Hash: "new", Paused: true}},
			gen:     4,
		},
		{
			name: "pausing keeps the generation",
			in: Input{Desired: desired(want(a, "h", paused)), Agents: []registry.Agent{agent("x", running(a, 3, api.StateRunning))},
				Placements: map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 3, Hash: "h"}}, Generation: 3},
			assigns: map[api.TaskID]string{a: "x@3/paused"},
			placed:  map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 3, Hash: "h", Paused: true}},
			gen:     3,
		},
		{
			name: "a task that is no longer desired is revoked and removed",
			in: Input{Agents: []registry.Agent{agent("x", running(a, 3, api.StateRunning))},
				Placements: map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 3, Hash: "h"}}, Generation: 3},
			revokes: map[string][]api.TaskID{"x": {a}},
			removed: []api.TaskID{a},
			placed:  map[api.TaskID]placements.Placement{},
			gen:     3,
		},
		{
			name: "a task whose agent is gone moves to a live one",
			in: Input{Desired: desired(want(a, "h")), Agents: []registry.Agent{agent("y")},
				Placements: map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 3, Hash: "h"}}, Generation: 3},
			assigns: map[api.TaskID]string{a: "y@4"},
			placed:  map[api.TaskID]placements.Placement{a: {Agent: "y", Generation: 4, Hash: "h"}},
			gen:     4,
		},
		{
			name: "a zombie — a task an agent runs that is placed elsewhere — is revoked",
			in: Input{Desired: desired(want(a, "h")),
				Agents:     []registry.Agent{agent("x", running(a, 2, api.StateRunning)), agent("y", running(a, 3, api.StateRunning))},
				Placements: map[api.TaskID]placements.Placement{a: {Agent: "y", Generation: 3, Hash: "h"}}, Generation: 3},
			revokes: map[string][]api.TaskID{"x": {a}},
			placed:  map[api.TaskID]placements.Placement{a: {Agent: "y", Generation: 3, Hash: "h"}},
			gen:     3,
		},
		{
			name: "a task of a presumed agent stays where it is, and gets no revoke",
			in: Input{Desired: desired(want(a, "h"), want(b, "h")), Agents: []registry.Agent{presumed("x"), agent("y")},
				Placements: map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 7}}, Generation: 7},
			assigns: map[api.TaskID]string{b: "y@8"},
			placed:  map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 7}, b: {Agent: "y", Generation: 8, Hash: "h"}},
			gen:     8,
		},
		{
			name:       "a selector no agent matches leaves the task unassigned",
			in:         Input{Desired: desired(want(a, "h", selector(map[string]string{"zone": "b"}))), Agents: []registry.Agent{labelled("x", map[string]string{"zone": "a"})}},
			unassigned: []api.TaskID{a},
			placed:     map[api.TaskID]placements.Placement{},
		},
		{
			name: "a task on an agent that no longer matches its selector moves",
			in: Input{Desired: desired(want(a, "h", selector(map[string]string{"zone": "b"}))),
				Agents:     []registry.Agent{labelled("x", map[string]string{"zone": "a"}), labelled("y", map[string]string{"zone": "b"})},
				Placements: map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 1, Hash: "h"}}, Generation: 1},
			revokes: map[string][]api.TaskID{"x": {a}},
			assigns: map[api.TaskID]string{a: "y@2"},
			placed:  map[api.TaskID]placements.Placement{a: {Agent: "y", Generation: 2, Hash: "h"}},
			gen:     2,
		},
		{
			name: "a cordoned agent keeps its task and is given no new one",
			in: Input{Desired: desired(want(a, "h"), want(b, "h")), Agents: []registry.Agent{agent("x"), agent("y", running(a, 3, api.StateRunning)), agent("z")},
				Placements: map[api.TaskID]placements.Placement{a: {Agent: "y", Generation: 3, Hash: "h"}}, Generation: 3,
				Cordoned: map[string]bool{"x": true, "y": true}},
			assigns: map[api.TaskID]string{b: "z@4"},
			placed:  map[api.TaskID]placements.Placement{a: {Agent: "y", Generation: 3, Hash: "h"}, b: {Agent: "z", Generation: 4, Hash: "h"}},
			gen:     4,
		},
		{
			name: "a move to a named agent: revoked from From, assigned there at a new generation",
			in: Input{Desired: desired(want(a, "h")), Agents: []registry.Agent{agent("x", running(a, 3, api.StateRunning)), agent("y"), agent("z")},
				Placements: map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 3, Hash: "h"}}, Generation: 3,
				Moves: map[api.TaskID]scheduler.Move{a: {From: "x", To: "z"}}},
			revokes: map[string][]api.TaskID{"x": {a}},
			assigns: map[api.TaskID]string{a: "z@4"},
			placed:  map[api.TaskID]placements.Placement{a: {Agent: "z", Generation: 4, Hash: "h"}},
			gen:     4,
		},
		{
			name: "a move to anywhere off a cordoned agent: the least loaded other one",
			in: Input{Desired: desired(want(a, "h"), want(b, "h")),
				Agents:     []registry.Agent{agent("x", running(a, 3, api.StateRunning)), agent("y", running(b, 2, api.StateRunning)), agent("z")},
				Placements: map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 3, Hash: "h"}, b: {Agent: "y", Generation: 2, Hash: "h"}},
				Generation: 3, Cordoned: map[string]bool{"x": true}, Moves: map[api.TaskID]scheduler.Move{a: {From: "x"}}},
			revokes: map[string][]api.TaskID{"x": {a}},
			assigns: map[api.TaskID]string{a: "z@4"},
			placed:  map[api.TaskID]placements.Placement{a: {Agent: "z", Generation: 4, Hash: "h"}, b: {Agent: "y", Generation: 2, Hash: "h"}},
			gen:     4,
		},
		{
			name: "a forced move with nowhere to go: revoked and unassigned",
			in: Input{Desired: desired(want(a, "h", selector(map[string]string{"zone": "a"}))),
				Agents:     []registry.Agent{labelled("x", map[string]string{"zone": "a"}), labelled("y", map[string]string{"zone": "b"})},
				Placements: map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 3, Hash: "h"}}, Generation: 3,
				Cordoned: map[string]bool{"x": true}, Moves: map[api.TaskID]scheduler.Move{a: {From: "x"}}},
			revokes:    map[string][]api.TaskID{"x": {a}},
			unassigned: []api.TaskID{a},
			placed:     map[api.TaskID]placements.Placement{},
			gen:        3,
		},
		{
			name: "a stale move — the task is on another agent already — is ignored",
			in: Input{Desired: desired(want(a, "h")), Agents: []registry.Agent{agent("x"), agent("y", running(a, 4, api.StateRunning)), agent("z")},
				Placements: map[api.TaskID]placements.Placement{a: {Agent: "y", Generation: 4, Hash: "h"}}, Generation: 4,
				Moves: map[api.TaskID]scheduler.Move{a: {From: "x", To: "z"}}},
			placed: map[api.TaskID]placements.Placement{a: {Agent: "y", Generation: 4, Hash: "h"}},
			gen:    4,
		},
		{
			name:       "no agents: everything unassigned",
			in:         Input{Desired: desired(want(a, "h"), want(b, "h"))},
			unassigned: []api.TaskID{a, b},
			placed:     map[api.TaskID]placements.Placement{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			before := maps.Clone(in.Placements)
			out := Plan(in)
			if got := assigned(out); !reflect.DeepEqual(got, orEmpty(tc.assigns)) {
				t.Errorf("assigns = %v, want %v", got, tc.assigns)
			}
			if !reflect.DeepEqual(out.Revokes, orEmptyRevokes(tc.revokes)) {
				t.Errorf("revokes = %v, want %v", out.Revokes, tc.revokes)
			}
			if !reflect.DeepEqual(out.Unassigned, tc.unassigned) {
				t.Errorf("unassigned = %v, want %v", out.Unassigned, tc.unassigned)
			}
			if !reflect.DeepEqual(out.Removed, tc.removed) {
				t.Errorf("removed = %v, want %v", out.Removed, tc.removed)
			}
			if !reflect.DeepEqual(out.Placements, tc.placed) {
				t.Errorf("placements = %v, want %v", out.Placements, tc.placed)
			}
			if out.Generation != tc.gen {
				t.Errorf("generation = %d, want %d", out.Generation, tc.gen)
			}
			// Pure: the input is left as it was.
			if !reflect.DeepEqual(before, in.Placements) {
				t.Errorf("Plan changed its input placements")
			}
		})
	}
}

func TestPlanIsDeterministic(t *testing.T) {
	var ds []Desired
	for c := range 5 {
		for n := range 4 {
			ds = append(ds, want(tid("conn-"+strconv.Itoa(c), n), "h"))
		}
	}
	in := Input{Desired: desired(ds...), Agents: []registry.Agent{agent("x"), agent("y"), agent("z")}}
	first := Plan(in)
	for range 20 {
		if again := Plan(in); !reflect.DeepEqual(first, again) {
			t.Fatalf("two plans of one input differ:\n%v\n%v", first, again)
		}
	}
}

func TestPlanSaturatesGenerations(t *testing.T) {
	const top = int64(^uint64(0) >> 1)
	out := Plan(Input{Desired: desired(want(tid("c", 0), "h"), want(tid("c", 1), "h")), Agents: []registry.Agent{agent("x")}, Generation: top - 1})
	if out.Generation != top {
		t.Fatalf("generation = %d, want it to stop at %d", out.Generation, top)
	}
	for _, p := range out.Placements {
		if p.Generation <= 0 {
			t.Fatalf("a generation wrapped: %v", out.Placements)
		}
	}
}

func orEmpty(m map[api.TaskID]string) map[api.TaskID]string {
	if m == nil {
		return map[api.TaskID]string{}
	}
	return m
}

func orEmptyRevokes(m map[string][]api.TaskID) map[string][]api.TaskID {
	if m == nil {
		return map[string][]api.TaskID{}
	}
	return m
}

func withPlugins(a registry.Agent, classes ...string) registry.Agent {
	a.Plugins = map[string]api.PluginInfo{}
	for _, c := range classes {
		a.Plugins[c] = api.PluginInfo{Class: c, Type: "source"}
	}
	return a
}

func plugin(class string) func(*Desired) { return func(d *Desired) { d.Plugin = class } }

func TestPlanPlacesOnlyWhereThePluginIs(t *testing.T) {
	a := tid("c", 0)
	old, upgraded := withPlugins(agent("old"), "x.File"), withPlugins(agent("new"), "x.File", "x.Jdbc")
	// The new plugin's task goes to the upgraded agent, however loaded.
	out := Plan(Input{Desired: desired(want(a, "h", plugin("x.Jdbc"))), Agents: []registry.Agent{old, upgraded}})
	if got := assigned(out); got[a] != "new@1" {
		t.Fatalf("assigns = %v, want the task on the agent that has its plugin", got)
	}
	// An agent that lost the plugin (rolled back) gives the task up.
	downgraded := withPlugins(agent("new", running(a, 1, api.StateRunning)), "x.File")
	out = Plan(Input{Desired: desired(want(a, "h", plugin("x.Jdbc"))), Agents: []registry.Agent{old, downgraded},
		Placements: map[api.TaskID]placements.Placement{a: {Agent: "new", Generation: 1, Hash: "h"}}, Generation: 1})
	if !reflect.DeepEqual(out.Revokes, map[string][]api.TaskID{"new": {a}}) || len(out.Assigns) != 0 {
		t.Fatalf("revokes %v assigns %v, want the task stopped and placed nowhere", out.Revokes, assigned(out))
	}
	if want := "No live agent has the plugin x.Jdbc"; out.Reasons[a] != want {
		t.Fatalf("reason = %q, want %q", out.Reasons[a], want)
	}
}

func TestPlanFailsClosedOnAnInvalidSelector(t *testing.T) {
	a := tid("c", 0)
	bad := func(d *Desired) { d.SelectorError = "Expected comma-separated key=value pairs" }
	out := Plan(Input{Desired: desired(want(a, "h", bad)), Agents: []registry.Agent{agent("x", running(a, 2, api.StateRunning))},
		Placements: map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 2, Hash: "h"}}, Generation: 2})
	if !reflect.DeepEqual(out.Revokes, map[string][]api.TaskID{"x": {a}}) || len(out.Assigns) != 0 {
		t.Fatalf("revokes %v assigns %v: a task with an invalid selector must run nowhere", out.Revokes, assigned(out))
	}
	if !reflect.DeepEqual(out.Unassigned, []api.TaskID{a}) || out.Reasons[a] == "" {
		t.Fatalf("unassigned %v reasons %v", out.Unassigned, out.Reasons)
	}
	// Presumed owners do not keep it either.
	out = Plan(Input{Desired: desired(want(a, "h", bad)), Agents: []registry.Agent{presumed("y")},
		Placements: map[api.TaskID]placements.Placement{a: {Agent: "y", Generation: 2}}, Generation: 2})
	if len(out.Placements) != 0 {
		t.Fatalf("placements %v, want none", out.Placements)
	}
}

func TestPlanReasons(t *testing.T) {
	a := tid("c", 0)
	cases := []struct {
		name   string
		d      Desired
		agents []registry.Agent
		want   string
	}{
		{"no agents", want(a, "h"), nil, "No agent is registered with the coordinator"},
		{"selector", want(a, "h", selector(map[string]string{"zone": "b", "host": "h1"})), []registry.Agent{labelled("x", map[string]string{"zone": "a"})},
			"No live agent matches sluice.agent.selector host=h1,zone=b"},
		{"plugin", want(a, "h", plugin("x.Jdbc")), []registry.Agent{withPlugins(agent("x"), "x.File")}, "No live agent has the plugin x.Jdbc"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := Plan(Input{Desired: desired(tc.d), Agents: tc.agents})
			if out.Reasons[a] != tc.want {
				t.Fatalf("reason = %q, want %q", out.Reasons[a], tc.want)
			}
		})
	}
}

func TestPlanReasonsForCordonsAndMoves(t *testing.T) {
	a := tid("c", 0)
	zoneA := selector(map[string]string{"zone": "a"})
	cases := []struct {
		name string
		in   Input
		want map[api.TaskID]string
	}{
		{
			name: "every agent that fits is cordoned",
			in: Input{Desired: desired(want(a, "h", zoneA)), Cordoned: map[string]bool{"y": true, "x": true},
				Agents: []registry.Agent{labelled("y", map[string]string{"zone": "a"}), labelled("x", map[string]string{"zone": "a"}), labelled("z", map[string]string{"zone": "b"})}},
			want: map[api.TaskID]string{a: "Every live agent that can run the task is cordoned: x, y"},
		},
		{
			name: "moved off its agent with nowhere else to go",
			in: Input{Desired: desired(want(a, "h", zoneA)), Moves: map[api.TaskID]scheduler.Move{a: {From: "x"}},
				Agents:     []registry.Agent{labelled("x", map[string]string{"zone": "a"}), labelled("z", map[string]string{"zone": "b"})},
				Placements: map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 1, Hash: "h"}}, Generation: 1},
			want: map[api.TaskID]string{a: "The task was moved off agent x and no other live agent that is not cordoned can run it"},
		},
		{
			name: "a cordon does not hide a missing plugin",
			in: Input{Desired: desired(want(a, "h", plugin("x.Jdbc"))), Cordoned: map[string]bool{"x": true},
				Agents: []registry.Agent{withPlugins(agent("x"), "x.File")}},
			want: map[api.TaskID]string{a: "No live agent has the plugin x.Jdbc"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if out := Plan(tc.in); !reflect.DeepEqual(out.Reasons, tc.want) {
				t.Fatalf("reasons = %v, want %v", out.Reasons, tc.want)
			}
		})
	}
}

func TestSchedulerInput(t *testing.T) {
	a, b, c, d := tid("c", 0), tid("c", 1), tid("c", 2), tid("d", 0)
	bad := func(d *Desired) { d.SelectorError = "bad" }
	in := Input{
		Desired: desired(want(a, "h", plugin("x.File")), want(b, "h"), want(c, "h", bad), want(d, "h", selector(map[string]string{"zone": "a"}))),
		Agents:  []registry.Agent{withPlugins(labelled("x", map[string]string{"zone": "a"}), "x.File"), agent("y"), presumed("p")},
		Placements: map[api.TaskID]placements.Placement{a: {Agent: "x", Generation: 1}, b: {Agent: "p", Generation: 2},
			c: {Agent: "y", Generation: 3}, tid("gone", 0): {Agent: "y", Generation: 4}},
		Cordoned: map[string]bool{"y": true, "p": true},
	}
	tasks, agents, current := SchedulerInput(in)
	wantTasks := []scheduler.Task{{ID: a, Plugin: "x.File"}, {ID: d, Selector: map[string]string{"zone": "a"}}}
	wantAgents := []scheduler.Agent{{ID: "x", Labels: map[string]string{"zone": "a"}, Plugins: map[string]bool{"x.File": true}},
		{ID: "y", Plugins: map[string]bool{}, Cordoned: true}}
	if !reflect.DeepEqual(tasks, wantTasks) {
		t.Errorf("tasks = %v, want %v", tasks, wantTasks)
	}
	if !reflect.DeepEqual(agents, wantAgents) {
		t.Errorf("agents = %v, want %v", agents, wantAgents)
	}
	if want := map[api.TaskID]string{a: "x"}; !reflect.DeepEqual(current, want) {
		t.Errorf("current = %v, want %v", current, want)
	}
}

// TestPlanPlacesJavaPluginsOnlyOnTheirHosts: a Java connector's task goes
// only to an agent whose connector host has its class (and the version
// asked for), never to one with a built-in of the same class.
func TestPlanPlacesJavaPluginsOnlyOnTheirHosts(t *testing.T) {
	const file = "x.FileSource"
	a := tid("c", 0)
	builtin := withPlugins(agent("builtin"), file)
	host := withPlugins(agent("host"), file)
	host.HostPlugins = map[registry.PluginKey]api.PluginInfo{{Class: file, Version: "4.4.0"}: {Class: file, Type: "source", Version: "4.4.0"}}
	for _, version := range []string{"", "4.4.0"} {
		out := Plan(Input{Desired: desired(want(a, "h", plugin(registry.HostPluginPlacement(file, version)))), Agents: []registry.Agent{builtin, host}})
		if got := assigned(out); got[a] != "host@1" {
			t.Fatalf("version %q: assigns = %v, want the task on the agent whose host has the plugin", version, got)
		}
	}
	out := Plan(Input{Desired: desired(want(a, "h", plugin(registry.HostPluginPlacement(file, "5.0.0")))), Agents: []registry.Agent{builtin, host}})
	if want := "No live agent has the plugin x.FileSource version 5.0.0 (Java)"; len(out.Assigns) != 0 || out.Reasons[a] != want {
		t.Fatalf("assigns %v, reason %q; want none and %q", assigned(out), out.Reasons[a], want)
	}
}
