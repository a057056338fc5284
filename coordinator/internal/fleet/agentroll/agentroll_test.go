package agentroll

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/drain"
	"github.com/sluice-io/sluice/coordinator/internal/reconciler/reconcilertest"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
	"github.com/sluice-io/sluice/coordinator/internal/scheduler"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

var t0 = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

// registrations are the agents as the leader's registry has them.
type registrations struct {
	mu     sync.Mutex
	agents map[string]registry.Agent
}

func (r *registrations) Agents() []registry.Agent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []registry.Agent
	for _, a := range r.agents {
		out = append(out, a)
	}
	return out
}

// restart registers agent id again, started at.
func (r *registrations) restart(id string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.agents[id] = registry.Agent{ID: id, Registered: true, StartedAt: at, Version: "v2"}
}

// leave unregisters agent id.
func (r *registrations) leave(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.agents, id)
}

// env is a fake leader: the real commands on in-memory states, the real
// drain controller moving tasks in a placement world, a registry and a
// clock.
type env struct {
	t       *testing.T
	mem     *store.Memory
	world   *reconcilertest.World
	reg     *registrations
	now     time.Time
	changed int
	c       *Controller
	drains  *drain.Controller
}

// newEnv is agents a, b and c, each started at t0 and running task t/<i>
// of its own, and a controller on them.
func newEnv(t *testing.T) *env {
	e := &env{t: t, mem: store.NewMemory(), world: reconcilertest.New(t0), now: t0,
		reg: &registrations{agents: map[string]registry.Agent{}}}
	for i, id := range []string{"a", "b", "c"} {
		e.world.Agent(id, nil).Place(scheduler.Task{ID: api.TaskID{Connector: "t", Task: i}}, id)
		e.reg.restart(id, t0.Add(-time.Hour))
	}
	e.leader()
	return e
}

// leader makes a new controller on the same fleet topic: a new leader,
// which knows nothing of what the last one did but what the topic holds.
func (e *env) leader() {
	writeFailed := func(err error, what string, args ...any) error {
		return api.Errorf(api.CodeInternal, "%s: %v", fmt.Sprintf(what, args...), err)
	}
	e.c = New(Config{Agents: e.reg, Fleet: e.mem.Fleet, Store: e.mem, Snapshot: e.world.Snapshot,
		Clock: func() time.Time { return e.now }, NewID: func(now time.Time) string { return "roll-" + now.Format("150405") },
		Changed: func() { e.changed++ }, WriteFailed: writeFailed, Logger: slog.New(slog.DiscardHandler)})
	e.drains = drain.New(e.world, e.mem.Fleet, slog.New(slog.DiscardHandler))
}

func (e *env) create(agents []string, size int, timeout string) store.AgentRoll {
	e.t.Helper()
	spec := store.AgentRollSpec{Agents: agents, BatchSize: size, Timeout: timeout}
	if err := CheckSpec(&spec); err != nil {
		e.t.Fatal(err)
	}
	r, err := e.c.Create(context.Background(), spec, agents, "alice")
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// step takes one step of roll id and says whether it took one.
func (e *env) step(id string) bool {
	e.t.Helper()
	took, err := e.c.Step(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return took
}

// moveAll runs the drain controller and finishes each move it started,
// each task to agent c... or b when c is the one drained.
func (e *env) moveAll() {
	e.drains.Step(context.Background())
	for _, s := range e.world.StartedMoves() {
		to := "c"
		if s.From == "c" {
			to = "b"
		}
		e.world.Finish(s.Task, to)
	}
}

// steps are the steps of the roll's agents, "id:step" each.
func (e *env) steps(id string) string {
	r, _ := e.mem.Fleet.AgentRoll(id)
	var out []string
	for _, a := range r.Agents {
		out = append(out, a.ID+":"+a.Step)
	}
	return r.State + " " + strings.Join(out, " ")
}

func (e *env) want(id, steps string) {
	e.t.Helper()
	if got := e.steps(id); got != steps {
		e.t.Fatalf("roll: %s, want %s", got, steps)
	}
}

// lastKeys are the keys the last transaction wrote.
func (e *env) lastKeys() string {
	var keys []string
	for _, r := range e.mem.Txns[len(e.mem.Txns)-1] {
		keys = append(keys, r.Key)
	}
	return strings.Join(keys, " ")
}

func (e *env) mark(id string) string {
	m, ok := e.mem.Fleet.Agent(id)
	if !ok {
		return api.AgentActive
	}
	return m.State
}

// TestRollStepByStep: one agent at a time, each drained (its mark and
// the roll's step in one transaction), waited for until it registers with
// a later started_at, and uncordoned with its step done in one
// transaction; the next agent's drain starts only then.
func TestRollStepByStep(t *testing.T) {
	e := newEnv(t)
	r := e.create([]string{"a", "b"}, 1, "1m")
	e.want(r.ID, "running a:pending b:pending")

	if !e.step(r.ID) || e.lastKeys() != "agent-a agentroll-"+r.ID || e.mark("a") != api.AgentDraining || e.mark("b") != api.AgentActive {
		t.Fatalf("drain of a: wrote %s; marks a %s b %s", e.lastKeys(), e.mark("a"), e.mark("b"))
	}
	if m, _ := e.mem.Fleet.Agent("a"); m.Principal != "alice" || e.changed != 1 {
		t.Fatalf("a's mark %+v; %d reconcile passes asked", m, e.changed)
	}
	e.want(r.ID, "running a:draining b:pending")
	if e.step(r.ID) {
		t.Fatalf("a step while a's task is still on it: %s", e.steps(r.ID))
	}
	e.moveAll()
	if !e.step(r.ID) {
		t.Fatal("no step once a is drained")
	}
	e.want(r.ID, "running a:waiting_restart b:pending")
	if got, _ := e.mem.Fleet.AgentRoll(r.ID); got.Agents[0].Moved != 1 || !got.Agents[0].StartedAt.Equal(t0.Add(-time.Hour)) {
		t.Fatalf("a: %+v", got.Agents[0])
	}
	e.now = t0.Add(10 * time.Second)
	if e.step(r.ID) {
		t.Fatalf("a step before a restarted: %s", e.steps(r.ID))
	}
	e.reg.restart("a", t0.Add(5*time.Second))
	if !e.step(r.ID) {
		t.Fatal("no step once a restarted")
	}
	e.want(r.ID, "running a:uncordoning b:pending")
	if !e.step(r.ID) || e.lastKeys() != "agent-a agentroll-"+r.ID || e.mark("a") != api.AgentActive {
		t.Fatalf("uncordon of a: wrote %s; a is %s", e.lastKeys(), e.mark("a"))
	}
	e.want(r.ID, "running a:done b:pending")
	got, _ := e.mem.Fleet.AgentRoll(r.ID)
	if a := got.Agents[0]; got.Batch != 1 || !a.RestartedAt.Equal(t0.Add(5*time.Second)) || a.Version != "v2" || !a.FinishedAt.Equal(e.now) {
		t.Fatalf("after a: batch %d, a %+v", got.Batch, a)
	}

	// b, the last: its uncordon finishes the roll.
	e.step(r.ID)
	e.want(r.ID, "running a:done b:draining")
	e.moveAll()
	e.step(r.ID)
	e.reg.restart("b", e.now.Add(time.Second))
	e.step(r.ID)
	e.step(r.ID)
	e.want(r.ID, "done a:done b:done")
	if e.step(r.ID) || e.mark("b") != api.AgentActive {
		t.Fatalf("a step after the roll is done, or b left %s", e.mark("b"))
	}
}

// TestRollBatchDrainsTogether: a batch's agents are marked draining in
// one transaction with the roll, and the next batch starts once every
// agent of the batch is done.
func TestRollBatchDrainsTogether(t *testing.T) {
	e := newEnv(t)
	r := e.create([]string{"b", "a", "c"}, 2, "1m")
	e.step(r.ID)
	if e.lastKeys() != "agent-b agent-a agentroll-"+r.ID {
		t.Fatalf("the batch's start wrote %s", e.lastKeys())
	}
	e.want(r.ID, "running b:draining a:draining c:pending")
	// Only c may run their tasks; it is not in the batch.
	e.moveAll()
	e.step(r.ID)
	e.step(r.ID)
	e.want(r.ID, "running b:waiting_restart a:waiting_restart c:pending")
	e.reg.restart("a", t0.Add(time.Second))
	e.step(r.ID)
	e.step(r.ID)
	e.want(r.ID, "running b:waiting_restart a:done c:pending")
	if e.step(r.ID) {
		t.Fatalf("c started before b was back: %s", e.steps(r.ID))
	}
	e.reg.restart("b", t0.Add(time.Second))
	e.step(r.ID)
	e.step(r.ID)
	e.want(r.ID, "running b:done a:done c:pending")
	e.step(r.ID)
	e.want(r.ID, "running b:done a:done c:draining")
}

// TestRollTimeouts: an agent that does not come back within the timeout
// fails the roll with a message naming it and its step, and is left
// draining; so does a drain that does not end in time.
func TestRollTimeouts(t *testing.T) {
	e := newEnv(t)
	r := e.create([]string{"a", "b"}, 1, "20s")
	e.step(r.ID)
	e.moveAll()
	e.step(r.ID)
	e.now = t0.Add(20 * time.Second)
	if e.step(r.ID) {
		t.Fatal("failed at the timeout itself; it fails once past it")
	}
	e.now = t0.Add(21 * time.Second)
	e.step(r.ID)
	e.want(r.ID, "failed a:failed b:pending")
	got, _ := e.mem.Fleet.AgentRoll(r.ID)
	want := "agent a did not come back within 20s: it is registered but did not restart (started_at 2026-05-04T09:00:00Z) (step waiting_restart)"
	if got.Error != want || got.Agents[0].Error != want || e.mark("a") != api.AgentDraining || e.mark("b") != api.AgentActive {
		t.Fatalf("error %q, agent %+v, marks a %s b %s", got.Error, got.Agents[0], e.mark("a"), e.mark("b"))
	}
	if e.step(r.ID) {
		t.Fatal("a failed roll took a step")
	}

	// Gone and not back: said so.
	e = newEnv(t)
	r = e.create([]string{"c"}, 1, "20s")
	e.step(r.ID)
	e.moveAll()
	e.step(r.ID)
	e.reg.leave("c")
	e.step(r.ID)
	e.now = t0.Add(time.Minute)
	e.step(r.ID)
	if got, _ := e.mem.Fleet.AgentRoll(r.ID); got.Error != "agent c did not come back within 20s: it is not registered (step waiting_restart)" {
		t.Fatalf("error %q", got.Error)
	}

	// A drain that does not end.
	e = newEnv(t)
	r = e.create([]string{"a"}, 1, "20s")
	e.step(r.ID)
	e.now = t0.Add(time.Minute)
	e.step(r.ID)
	if got, _ := e.mem.Fleet.AgentRoll(r.ID); got.Error != "agent a did not drain within 20s: 1 task(s) remain on it (step draining)" || e.mark("a") != api.AgentDraining {
		t.Fatalf("error %q, a %s", got.Error, e.mark("a"))
	}
}

// TestRollResumesOnANewLeader: a new leader takes the roll up at the step
// the last one committed: the agent done is not drained again, the one
// waiting is still waited for, and the roll ends done.
func TestRollResumesOnANewLeader(t *testing.T) {
	e := newEnv(t)
	r := e.create([]string{"a", "b"}, 1, "1m")
	e.step(r.ID)
	e.moveAll()
	e.step(r.ID)
	e.reg.restart("a", t0.Add(time.Second))
	e.step(r.ID)
	e.step(r.ID)
	e.step(r.ID)
	e.moveAll()
	e.step(r.ID)
	e.want(r.ID, "running a:done b:waiting_restart")

	// The leader fails over: a new controller, a world without the old
	// term's memory.
	e.world = e.world.Failover()
	e.leader()
	txns := len(e.mem.Txns)
	e.c.Pass(context.Background())
	if len(e.mem.Txns) != txns {
		t.Fatalf("the new leader wrote before b restarted: %s", e.lastKeys())
	}
	e.reg.restart("b", t0.Add(2*time.Second))
	e.c.Pass(context.Background())
	e.want(r.ID, "done a:done b:done")
	for _, txn := range e.mem.Txns[txns:] {
		for _, rec := range txn {
			if rec.Key == "agent-a" {
				t.Fatal("the new leader changed a's mark again")
			}
		}
	}
}

// TestRollPauseResumeAbort: a paused roll takes no step, and its waits
// start anew when it resumes; an abort ends it and leaves its agents as
// they are; an agent is in one roll in progress at most.
func TestRollPauseResumeAbort(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	r := e.create([]string{"a", "b"}, 1, "20s")
	e.step(r.ID)
	if _, err := e.c.Create(ctx, store.AgentRollSpec{BatchSize: 1, Timeout: "1m"}, []string{"c", "b"}, "bob"); api.AsError(err) == nil ||
		api.AsError(err).Code != api.CodeConflict || !strings.Contains(err.Error(), "Agent b is already in roll "+r.ID) {
		t.Fatalf("an overlapping roll: %v", err)
	}
	if _, err := e.c.Pause(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	e.moveAll()
	e.now = t0.Add(time.Minute)
	if e.step(r.ID) {
		t.Fatal("a paused roll took a step")
	}
	if _, err := e.c.Pause(ctx, r.ID); api.AsError(err) == nil || api.AsError(err).Code != api.CodeConflict {
		t.Fatalf("pausing a paused roll: %v", err)
	}
	if _, err := e.c.Resume(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.mem.Fleet.AgentRoll(r.ID); !got.Agents[0].Since.Equal(e.now) {
		t.Fatalf("a's wait since %v, want %v", got.Agents[0].Since, e.now)
	}
	e.step(r.ID)
	e.want(r.ID, "running a:waiting_restart b:pending")
	if got, err := e.c.Abort(ctx, r.ID); err != nil || got.State != store.AgentRollAborted {
		t.Fatalf("abort: %+v %v", got, err)
	}
	if e.step(r.ID) || e.mark("a") != api.AgentDraining {
		t.Fatalf("after the abort: a step, or a is %s", e.mark("a"))
	}
	if _, err := e.c.Abort(ctx, r.ID); api.AsError(err) == nil || api.AsError(err).Code != api.CodeConflict {
		t.Fatalf("aborting an aborted roll: %v", err)
	}
	if _, err := e.c.Resume(ctx, "nope"); api.AsError(err) == nil || api.AsError(err).Message != "Roll nope not found" {
		t.Fatalf("resume of an unknown roll: %v", err)
	}
	// Its agents are free again.
	e.now = e.now.Add(time.Second)
	if _, err := e.c.Create(ctx, store.AgentRollSpec{BatchSize: 1, Timeout: "1m"}, []string{"b"}, "bob"); err != nil {
		t.Fatal(err)
	}
}

// TestRollEdges: a drain that would strand a task fails the roll before
// anything is drained; an agent uncordoned by hand mid-drain fails it; an
// agent that sends no started_at is back once seen gone and registered
// again.
func TestRollEdges(t *testing.T) {
	e := newEnv(t)
	e.world.Place(scheduler.Task{ID: api.TaskID{Connector: "pinned", Task: 0}, Selector: map[string]string{"zone": "x"}}, "a")
	r := e.create([]string{"a"}, 1, "1m")
	e.step(r.ID)
	got, _ := e.mem.Fleet.AgentRoll(r.ID)
	if got.State != store.AgentRollFailed || e.mark("a") != api.AgentActive ||
		got.Error != "draining agent a would leave 1 task(s) with nowhere to go: pinned/0 (no other live, uncordoned agent has sluice.agent.selector zone=x) (step draining)" {
		t.Fatalf("roll %+v; a %s", got, e.mark("a"))
	}

	e = newEnv(t)
	r = e.create([]string{"a"}, 1, "1m")
	e.step(r.ID)
	if err := e.mem.Apply(context.Background(), store.MarkAgent{ID: "a", Mark: store.AgentMark{State: api.AgentActive}}); err != nil {
		t.Fatal(err)
	}
	e.step(r.ID)
	if got, _ := e.mem.Fleet.AgentRoll(r.ID); got.Error != "agent a is no longer draining: it was uncordoned or cordoned by hand (step draining)" {
		t.Fatalf("error %q", got.Error)
	}

	e = newEnv(t)
	e.reg.restart("b", time.Time{}) // an agent that does not say when it started
	r = e.create([]string{"b"}, 1, "1m")
	e.step(r.ID)
	e.moveAll()
	e.step(r.ID)
	if e.step(r.ID) {
		t.Fatalf("b back without leaving: %s", e.steps(r.ID))
	}
	e.reg.leave("b")
	e.step(r.ID)
	if got, _ := e.mem.Fleet.AgentRoll(r.ID); !got.Agents[0].SeenGone {
		t.Fatalf("b gone not recorded: %+v", got.Agents[0])
	}
	e.reg.restart("b", time.Time{})
	e.step(r.ID)
	e.step(r.ID)
	e.want(r.ID, "done b:done")
}

// TestCheckSpec: defaults and refusals of a roll's request.
func TestCheckSpec(t *testing.T) {
	spec := store.AgentRollSpec{}
	if err := CheckSpec(&spec); err != nil || spec.BatchSize != 1 || spec.Timeout != "10m0s" {
		t.Fatalf("defaults: %+v %v", spec, err)
	}
	for _, tc := range []struct {
		spec store.AgentRollSpec
		want string
	}{
		{store.AgentRollSpec{BatchSize: -1}, "Invalid batch_size -1: roll at least one agent at a time"},
		{store.AgentRollSpec{Timeout: "soon"}, "Invalid timeout 'soon': give a duration such as 90s or 10m"},
		{store.AgentRollSpec{Timeout: "-1s"}, "Invalid timeout '-1s': give a duration such as 90s or 10m"},
		{store.AgentRollSpec{Agents: []string{"a", "b", "a"}}, "Agent a is named twice in agents"},
	} {
		err := CheckSpec(&tc.spec)
		if e := api.AsError(err); e == nil || e.Code != api.CodeBadRequest || e.Message != tc.want {
			t.Errorf("%+v: %v, want %q", tc.spec, err, tc.want)
		}
	}
	e := newEnv(t)
	if _, err := e.c.Create(context.Background(), spec, nil, "alice"); api.AsError(err) == nil || api.AsError(err).Message != "No registered agent to roll" {
		t.Fatalf("a roll of no agent: %v", err)
	}
}

// TestRollLeavesAnOperatorsCordon: an operator who cordons an agent while
// a roll waits for it to restart takes the mark over; the roll finishes
// the agent but leaves the operator's cordon for the operator to lift.
func TestRollLeavesAnOperatorsCordon(t *testing.T) {
	e := newEnv(t)
	r := e.create([]string{"a"}, 1, "1m")
	e.step(r.ID)
	e.moveAll()
	e.step(r.ID)
	e.want(r.ID, "running a:waiting_restart")
	cur, ok := e.mem.Fleet.Agent("a")
	cmd := drain.MarkCommand("a", cur, ok, drain.Mark{State: api.AgentCordoned, Origin: api.CordonOperator, Principal: "bob"}, e.now)
	if err := e.mem.Apply(context.Background(), cmd); err != nil {
		t.Fatal(err)
	}
	e.reg.restart("a", e.now.Add(time.Second))
	e.step(r.ID)
	e.step(r.ID)
	e.want(r.ID, "done a:done")
	if m, _ := e.mem.Fleet.Agent("a"); m.State != api.AgentCordoned || m.By() != api.CordonOperator || m.Principal != "bob" {
		t.Fatalf("a's mark after the roll: %+v, want bob's cordon kept", m)
	}
}
