package reconciler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/agentrpc"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// conn is a started connector with n tasks.
func conn(name string, n int) store.Connector {
	c := store.Connector{Name: name, Config: map[string]string{"connector.class": "X"}, TargetState: records.TargetStarted, FencingCount: -1}
	for i := range n {
		c.Tasks = append(c.Tasks, map[string]string{"task": fmt.Sprint(i)})
	}
	return c
}

func tid(c string, n int) api.TaskID { return api.TaskID{Connector: c, Task: n} }

// register registers agent id reporting tasks running.
func (w *world) register(id string, tasks ...wire.RunningTask) {
	w.r.Observe(&wire.RegisterRequest{AgentID: id, Tasks: tasks}, true)
}

// pass runs a reconcile pass and waits until its assignments are answered.
func (w *world) pass(t *testing.T) {
	t.Helper()
	w.r.Pass(context.Background(), w.inst)
	deadline := time.Now().Add(10 * time.Second)
	for {
		busy := false
		w.r.assigning.Range(func(any, any) bool { busy = true; return false })
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("assignments still in flight after 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// placedOn is the agent task id is placed on ("" for none).
func (w *world) placedOn(id api.TaskID) string { return w.r.table.Placements()[id].Agent }

// running is what agent reports of the tasks assigned to it: each running
// at its generation.
func (w *world) running(agent string) []wire.RunningTask {
	var out []wire.RunningTask
	for _, a := range w.rpc.assignedTo(agent) {
		out = append(out, wire.RunningTask{ID: a.ID, Generation: a.Generation, State: api.StateRunning})
	}
	return out
}

func TestPassPlacesAndAssigns(t *testing.T) {
	w := newWorld(t, conn("c", 2))
	w.register("a")
	w.pass(t)
	got := w.rpc.assignedTo("a")
	if len(got) != 2 {
		t.Fatalf("assigned %v to a, want both tasks", got)
	}
	for _, a := range got {
		if a.Generation <= 0 || a.Generation > w.r.table.Generation() {
			t.Fatalf("assignment %+v at a generation never issued (highest %d)", a, w.r.table.Generation())
		}
	}
	if st, _ := w.r.status.Connector("c"); st.State != api.StateRunning || st.WorkerID != "coord:8083" {
		t.Fatalf("connector status %+v, want RUNNING by this coordinator", st)
	}
	// The agent reports them running: the next pass assigns nothing again.
	w.register("a", w.running("a")...)
	w.pass(t)
	if again := w.rpc.assignedTo("a"); len(again) != 2 {
		t.Fatalf("a pass with nothing changed assigned again: %v", again)
	}
	if st, _ := w.r.status.Task("c", 0); st.State != api.StateRunning || st.WorkerID != "a" {
		t.Fatalf("task status %+v after a's report", st)
	}
}

func TestPassWithoutAgentsUnassigns(t *testing.T) {
	w := newWorld(t, conn("c", 1))
	w.pass(t)
	st, ok := w.r.status.Task("c", 0)
	if !ok || st.State != api.StateUnassigned || st.WorkerID != "" {
		t.Fatalf("task status %+v, %v: want UNASSIGNED with no worker", st, ok)
	}
}

func TestPassStoppedConnector(t *testing.T) {
	c := conn("c", 1)
	c.TargetState = records.TargetStopped
	w := newWorld(t, c)
	w.register("a")
	w.pass(t)
	if len(w.rpc.assignedTo("a")) != 0 {
		t.Fatal("a stopped connector's task was assigned")
	}
	if st, _ := w.r.status.Connector("c"); st.State != api.StateStopped {
		t.Fatalf("connector status %+v, want STOPPED", st)
	}
}

// TestPassFencing is the table of exactly-once fencing before a new task
// count runs.
func TestPassFencing(t *testing.T) {
	for _, tc := range []struct {
		name        string
		exactlyOnce bool
		source      bool
		fenced      int // the connector's fencing count
		fenceErr    error
		wantFence   bool
		wantPlaced  bool
	}{
		{"exactly-once off", false, true, -1, nil, false, true},
		{"a sink", true, false, -1, nil, false, true},
		{"count fenced already", true, true, 2, nil, false, true},
		{"new count: fenced, then placed", true, true, 1, nil, true, true},
		{"fencing fails: not placed", true, true, -1, errors.New("no agent"), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := conn("c", 2)
			c.FencingCount = tc.fenced
			w := newWorld(t, c)
			w.r.cfg.ExactlyOnce = tc.exactlyOnce
			w.conns.source["c"] = tc.source
			w.conns.fenceErr = tc.fenceErr
			w.register("a")
			w.pass(t)
			if fenced := len(w.conns.fenced) > 0; fenced != tc.wantFence {
				t.Fatalf("fenced %v, want %v", w.conns.fenced, tc.wantFence)
			}
			if placed := w.placedOn(tid("c", 0)) == "a"; placed != tc.wantPlaced {
				t.Fatalf("placed %v, want %v", placed, tc.wantPlaced)
			}
			if got, _ := w.conns.Get("c"); tc.wantFence && got.FencingCount != 2 {
				t.Fatalf("fencing count %d after fencing, want 2", got.FencingCount)
			}
		})
	}
}

func TestNeedsFencing(t *testing.T) {
	c := conn("c", 2)
	for _, tc := range []struct {
		eos, source bool
		tasks, cnt  int
		want        bool
	}{
		{true, true, 2, -1, true}, {true, true, 2, 1, true}, {true, true, 2, 2, false},
		{true, true, 0, -1, false}, {false, true, 2, -1, false}, {true, false, 2, -1, false},
	} {
		c.Tasks, c.FencingCount = make([]map[string]string, tc.tasks), tc.cnt
		if got := needsFencing(tc.eos, c, Shape{Source: tc.source}); got != tc.want {
			t.Errorf("needsFencing(%+v) = %v", tc, got)
		}
	}
}

// TestPassTaskConfigs: task configs the instance computed are committed,
// and the tasks held while they cannot be.
func TestPassTaskConfigs(t *testing.T) {
	w := newWorld(t, conn("c", 1))
	w.inst.computed["c"] = []map[string]string{{"task": "new0"}, {"task": "new1"}}
	w.conns.locked["c"] = true
	w.register("a")
	w.pass(t)
	if got, _ := w.conns.Get("c"); len(got.Tasks) != 1 {
		t.Fatalf("task configs written while a request held the connector: %v", got.Tasks)
	}
	w.conns.locked["c"] = false
	w.pass(t)
	if got, _ := w.conns.Get("c"); len(got.Tasks) != 2 || got.Tasks[1]["task"] != "new1" {
		t.Fatalf("task configs %v, want the computed ones", got.Tasks)
	}
	if w.placedOn(tid("c", 1)) != "a" {
		t.Fatal("the new task was not placed in the pass that wrote it")
	}
}

// TestLeaseExpiryEdges: an agent keeps its tasks for exactly its lease;
// a nanosecond later it is lost, its tasks go to another agent, and the
// rest of the leadership is told.
func TestLeaseExpiryEdges(t *testing.T) {
	w := newWorld(t, conn("c", 1))
	w.register("a")
	w.pass(t)
	w.register("a", w.running("a")...)
	w.clock.Add(5 * time.Second)
	w.register("b")
	w.clock.Add(5 * time.Second) // a: exactly its lease since last heard
	if got := w.r.untilExpiry(); got != time.Nanosecond {
		t.Fatalf("until expiry %v, want 1ns", got)
	}
	if w.r.anyExpired(w.clock.Now()) {
		t.Fatal("an agent heard exactly a lease ago expired")
	}
	w.pass(t)
	if w.placedOn(tid("c", 0)) != "a" || len(w.listener.goneIDs()) != 0 {
		t.Fatal("an agent heard exactly a lease ago lost its task")
	}
	w.clock.Add(time.Nanosecond)
	if !w.r.anyExpired(w.clock.Now()) {
		t.Fatal("an agent a lease and 1ns after its last heartbeat did not expire")
	}
	w.pass(t)
	if got := w.placedOn(tid("c", 0)); got != "b" {
		t.Fatalf("the lost agent's task is on %q, want b", got)
	}
	if !slices.Equal(w.listener.goneIDs(), []string{"a"}) {
		t.Fatalf("agents gone %v, want a", w.listener.goneIDs())
	}
}

// TestPlanTaskStatuses is the table of the records for unassigned and
// removed tasks.
func TestPlanTaskStatuses(t *testing.T) {
	id := tid("c", 0)
	for _, tc := range []struct {
		name       string
		cur        *store.InstanceStatus
		unassigned bool
		removed    bool
		want       []records.Record
	}{
		{"unassigned, no status yet", nil, true, false,
			[]records.Record{{Key: records.TaskStatusKey("c", 0), Value: records.EncodeStatus(api.StateUnassigned, "why", "", 0)}}},
		{"unassigned, keeps its own generation and the agent that ran it last", &store.InstanceStatus{State: api.StateRunning, WorkerID: "a", Generation: 7}, true, false,
			[]records.Record{{Key: records.TaskStatusKey("c", 0), Value: records.EncodeStatus(api.StateUnassigned, "why", "a", 7)}}},
		{"unassigned, never ran: no worker", nil, true, false,
			[]records.Record{{Key: records.TaskStatusKey("c", 0), Value: records.EncodeStatus(api.StateUnassigned, "why", "", 0)}}},
		{"unassigned already, same reason: nothing", &store.InstanceStatus{State: api.StateUnassigned, Trace: "why"}, true, false, nil},
		{"unassigned already, another reason", &store.InstanceStatus{State: api.StateUnassigned, Trace: "before"}, true, false,
			[]records.Record{{Key: records.TaskStatusKey("c", 0), Value: records.EncodeStatus(api.StateUnassigned, "why", "", 0)}}},
		{"removed with a status: tombstone", &store.InstanceStatus{State: api.StateRunning}, false, true,
			[]records.Record{{Key: records.TaskStatusKey("c", 0)}}},
		{"removed without a status: nothing", nil, false, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookup := func(string, int) (store.InstanceStatus, bool) {
				if tc.cur == nil {
					return store.InstanceStatus{}, false
				}
				return *tc.cur, true
			}
			var un, rm []api.TaskID
			if tc.unassigned {
				un = []api.TaskID{id}
			}
			if tc.removed {
				rm = []api.TaskID{id}
			}
			got := planTaskStatuses(un, map[api.TaskID]string{id: "why"}, rm, lookup)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("records %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPruneStatuses: the status of a task beyond its connector's count,
// placed nowhere, is removed; one still placed is kept.
func TestPruneStatuses(t *testing.T) {
	w := newWorld(t, conn("c", 1))
	w.statuses.setTask("c", 0, store.InstanceStatus{State: api.StateRunning, WorkerID: "a", Generation: 1})
	w.statuses.setTask("c", 3, store.InstanceStatus{State: api.StateRunning, WorkerID: "a", Generation: 1})
	recs := w.r.pruneRecords()
	if len(recs) != 1 || recs[0].Key != records.TaskStatusKey("c", 3) || recs[0].Value != nil {
		t.Fatalf("prune records %v, want c/3's tombstone", recs)
	}
}

func TestConnectorStatusDue(t *testing.T) {
	const me = "coord:8083"
	for _, tc := range []struct {
		target string
		cur    *store.InstanceStatus
		state  string
		write  bool
	}{
		{records.TargetStarted, nil, api.StateRunning, true},
		{records.TargetStarted, &store.InstanceStatus{State: api.StateRunning, WorkerID: me}, "", false},
		{records.TargetStarted, &store.InstanceStatus{State: api.StateRunning, WorkerID: "old:8083"}, api.StateRunning, true},
		{records.TargetStarted, &store.InstanceStatus{State: api.StateFailed, WorkerID: me}, "", false},
		{records.TargetStarted, &store.InstanceStatus{State: api.StateRestarting, WorkerID: me}, "", false},
		{records.TargetPaused, &store.InstanceStatus{State: api.StateRunning, WorkerID: me}, api.StatePaused, true},
		{records.TargetPaused, &store.InstanceStatus{State: api.StateFailed, WorkerID: me}, api.StatePaused, true},
		{records.TargetStopped, &store.InstanceStatus{State: api.StatePaused, WorkerID: me}, api.StateStopped, true},
		{records.TargetStopped, &store.InstanceStatus{State: api.StateStopped, WorkerID: me}, "", false},
	} {
		var cur store.InstanceStatus
		if tc.cur != nil {
			cur = *tc.cur
		}
		state, write := connectorStatusDue(tc.target, cur, tc.cur != nil, me)
		if state != tc.state || write != tc.write {
			t.Errorf("connectorStatusDue(%s, %+v) = %q, %v; want %q, %v", tc.target, tc.cur, state, write, tc.state, tc.write)
		}
	}
}

// TestAssignTooLarge: an assignment too large to send fails its task with
// the limit in its trace; other failures only wait for the next pass.
func TestAssignTooLarge(t *testing.T) {
	w := newWorld(t, conn("c", 1))
	w.register("a")
	w.rpc.failWith["a"] = api.Errorf(api.CodeTooLarge, "assignment of 2000000 bytes over the limit")
	w.pass(t)
	st, _ := w.r.status.Task("c", 0)
	if st.State != api.StateFailed || st.Trace != "The task's assignment cannot be sent to agent a: assignment of 2000000 bytes over the limit" {
		t.Fatalf("task status %+v, want FAILED naming the limit", st)
	}
	w2 := newWorld(t, conn("c", 1))
	w2.register("a")
	w2.r.assignFailed("a", agentrpc.AssignFailure{Tasks: []wire.TaskAssignment{{ID: tid("c", 0)}}, Err: errors.New("timeout")})
	if _, ok := w2.r.status.Task("c", 0); ok {
		t.Fatal("a timed-out assignment wrote a status")
	}
}

// TestAssignRefused: assignments a revoke overtook are placed again, at a
// new generation, on the next pass.
func TestAssignRefused(t *testing.T) {
	w := newWorld(t, conn("c", 1))
	w.register("a")
	w.rpc.refuse[tid("c", 0)] = true
	w.pass(t)
	if p := w.placedOn(tid("c", 0)); p != "" {
		t.Fatalf("a refused assignment stays placed on %q", p)
	}
	gen := w.r.table.Generation()
	w.rpc.refuse[tid("c", 0)] = false
	w.pass(t)
	got := w.rpc.assignedTo("a")
	if len(got) != 1 || got[0].Generation <= gen-1 {
		t.Fatalf("assigned %v after the refusal", got)
	}
}

// TestStopAssigning: no assignment goes out once stopped; revokes do.
func TestStopAssigning(t *testing.T) {
	w := newWorld(t, conn("c", 1))
	w.register("a")
	w.r.StopAssigning()
	w.pass(t)
	if len(w.rpc.assignedTo("a")) != 0 {
		t.Fatal("an assignment went out after StopAssigning")
	}
}

// TestRevokeForgetsStopped: tasks an agent confirms stopped leave its
// report.
func TestRevokeForgetsStopped(t *testing.T) {
	w := newWorld(t)
	w.register("a", wire.RunningTask{ID: tid("c", 0), Generation: 0, State: api.StateRunning})
	if _, got := w.r.table.Holders("c"); len(got) == 0 {
		t.Fatal("the report was not kept")
	}
	if _, err := w.r.RevokeTasks(context.Background(), "a", []api.TaskID{tid("c", 0)}); err != nil {
		t.Fatal(err)
	}
	if _, got := w.r.table.Holders("c"); slices.Contains(got, tid("c", 0)) {
		t.Fatal("a task the agent stopped is still in its report")
	}
	if got := w.rpc.revokedOn("a"); !slices.Equal(got, []api.TaskID{tid("c", 0)}) {
		t.Fatalf("revoked %v", got)
	}
}

// TestFailoverMidPass: a new reconciler started from the status topic the
// old one wrote presumes every task where it ran, so the agents' reports
// keep them there: nothing is revoked or assigned again.
func TestFailoverMidPass(t *testing.T) {
	old := newWorld(t, conn("c", 2))
	old.register("a")
	old.pass(t)
	old.register("a", old.running("a")...)
	// The status topic the old leader wrote.
	for _, rt := range old.running("a") {
		old.statuses.setTask(rt.ID.Connector, rt.ID.Task, store.InstanceStatus{State: api.StateRunning, WorkerID: "a", Generation: rt.Generation})
	}
	gen := old.r.table.Generation()

	nw := newWorld(t, conn("c", 2))
	nw.statuses = old.statuses
	nw.r.cfg.Statuses, nw.r.status.topic = old.statuses, old.statuses
	nw.r.Establish()
	if nw.r.table.Generation() != gen {
		t.Fatalf("the new term starts at generation %d, want the topic's %d", nw.r.table.Generation(), gen)
	}
	if !nw.r.table.Known("a") || nw.placedOn(tid("c", 0)) != "a" {
		t.Fatal("the new term did not presume a and its tasks")
	}
	// A pass before a reports: nothing moves, nothing is unassigned.
	nw.pass(t)
	if st, _ := nw.r.status.Task("c", 0); st.State != api.StateRunning {
		t.Fatalf("a presumed task's status went %+v before its agent could report", st)
	}
	nw.register("a", old.running("a")...)
	nw.pass(t)
	if got := nw.rpc.assignedTo("a"); len(got) != 0 {
		t.Fatalf("the new term assigned %v again", got)
	}
	if got := nw.rpc.revokedOn("a"); len(got) != 0 {
		t.Fatalf("the new term revoked %v", got)
	}
}

// TestRevokeTermForgets: the end of a term forgets agents, placements and
// moves; the host plugins seen stay.
func TestRevokeTermForgets(t *testing.T) {
	w := newWorld(t, conn("c", 1))
	w.r.Observe(&wire.RegisterRequest{AgentID: "a", HostPlugins: []api.PluginInfo{{Class: "J", Version: "1"}}}, true)
	w.pass(t)
	w.r.Revoke()
	if w.r.table.Known("a") || len(w.r.table.Placements()) != 0 || len(w.r.Snapshot().Moves) != 0 {
		t.Fatal("a revoked term kept its agents or placements")
	}
	if len(w.r.table.KnownHostPlugins()) != 1 || len(w.r.table.HostPlugins()) != 0 {
		t.Fatal("the host plugins seen were forgotten, or a gone host is live")
	}
}

// TestDesiredTasksCarryTheResolvedVersion: the agents get the plugin
// version the config resolved to in place of its spec, part of the
// config hash (a new version restarts the tasks); the stored config is
// not changed.
func TestDesiredTasksCarryTheResolvedVersion(t *testing.T) {
	noLast := func(api.TaskID) string { return "" }
	c := conn("c", 2)
	c.Config["connector.plugin.version"] = "[1.0,3.0)"
	plain := desiredTasks(c, Shape{}, false, nil, noLast)
	v2 := desiredTasks(c, Shape{PluginVersion: "2.0.0"}, false, nil, noLast)
	v21 := desiredTasks(c, Shape{PluginVersion: "2.1.0"}, false, nil, noLast)
	for i := range 2 {
		id := tid("c", i)
		if got := v2[id].ConnConfig["connector.plugin.version"]; got != "2.0.0" {
			t.Errorf("task %d gets version %q", i, got)
		}
		if got := plain[id].ConnConfig["connector.plugin.version"]; got != "[1.0,3.0)" {
			t.Errorf("task %d without a resolved version gets %q", i, got)
		}
		if v2[id].Hash == plain[id].Hash || v2[id].Hash == v21[id].Hash {
			t.Errorf("task %d: the hash does not change with the version", i)
		}
	}
	if c.Config["connector.plugin.version"] != "[1.0,3.0)" {
		t.Errorf("the stored config changed: %v", c.Config)
	}
}
