package fleetrest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/connectors"
	"github.com/sluice-io/sluice/coordinator/internal/connlock"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/maintenance"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/rebalance"
	"github.com/sluice-io/sluice/coordinator/internal/placements"
	"github.com/sluice-io/sluice/coordinator/internal/reconciler/reconcilertest"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
	"github.com/sluice-io/sluice/coordinator/internal/scheduler"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// fakeAgents is the leader's view of its agents.
type fakeAgents struct {
	agents []registry.Agent
	placed map[api.TaskID]placements.Placement
}

func (f fakeAgents) AgentsAndPlacements() ([]registry.Agent, map[api.TaskID]placements.Placement) {
	return f.agents, f.placed
}

func (f fakeAgents) Known(id string) bool {
	for _, a := range f.agents {
		if a.ID == id {
			return true
		}
	}
	return false
}

// rebalanceStore keeps the rebalance in the memory state's fleet.
type rebalanceStore struct{ mem *store.Memory }

func (r rebalanceStore) Rebalance() *store.Rebalance { return r.mem.Fleet.Rebalance() }
func (r rebalanceStore) Put(ctx context.Context, rb *store.Rebalance) error {
	return r.mem.Apply(ctx, store.PutRebalance{Rebalance: rb})
}

// env is a fake leader: the real commands on in-memory states, the real
// maintenance and rebalance controllers, a placement world and a clock.
type env struct {
	mem     *store.Memory
	world   *reconcilertest.World
	now     time.Time
	leading bool
	changed int
	s       *Service
}

var t0 = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

func newEnv(t *testing.T, connectors ...string) *env {
	t.Helper()
	e := &env{mem: store.NewMemory(), world: reconcilertest.New(t0), now: t0, leading: true}
	for _, n := range connectors {
		if err := e.mem.Apply(context.Background(), store.CreateConnector{Name: n, Config: map[string]string{"name": n}}); err != nil {
			t.Fatal(err)
		}
	}
	e.mem.Txns = nil
	e.world.Agent("a", nil).Agent("b", map[string]string{"zone": "b"})
	agents := fakeAgents{agents: []registry.Agent{
		{ID: "a", Registered: true, LastSeen: t0, Labels: map[string]string{}},
		{ID: "b", Registered: true, LastSeen: t0, Labels: map[string]string{"zone": "b"}},
	}}
	writeFailed := func(err error, what string, args ...any) error {
		return api.Errorf(api.CodeInternal, "%s: %v", fmt.Sprintf(what, args...), err)
	}
	newID := func(now time.Time) string { return "op-" + now.Format("150405") }
	maint := maintenance.New(maintenance.Config{Configs: e.mem.Config, Windows: e.mem.Fleet, Store: e.mem, Locks: connlock.New(nil),
		Clock: func() time.Time { return e.now }, NewID: newID, Changed: func() { e.changed++ }, WriteFailed: writeFailed})
	rb := rebalance.New(e.world, rebalanceStore{e.mem}, clockFunc(func() time.Time { return e.now }), newID, slog.New(slog.DiscardHandler))
	e.s = New(Config{Fleet: e.mem.Fleet, Agents: agents, Snapshot: e.world.Snapshot, Apply: e.mem.Apply,
		Leading: func() bool { return e.leading }, CatchUp: func(context.Context) error { return nil },
		Select: func(sel api.Selector) ([]string, error) {
			if len(sel.Names) == 0 {
				return nil, api.Errorf(api.CodeBadRequest, "no names")
			}
			return sel.Names, nil
		},
		Exists:      func(name string) bool { _, ok := e.mem.Config.Get(name); return ok },
		Maintenance: maint, Rebalances: rb, AgentLease: 10 * time.Second,
		Clock: func() time.Time { return e.now }, Principal: func(context.Context) string { return "alice" },
		Changed: func() { e.changed++ }, WriteFailed: writeFailed, Logger: slog.New(slog.DiscardHandler)})
	return e
}

// clockFunc is a rebalance.Clock.
type clockFunc func() time.Time

func (c clockFunc) Now() time.Time { return c() }

func code(err error) int {
	if e := api.AsError(err); e != nil {
		return int(e.Code)
	}
	return 0
}

// TestAgentCallsNeedTheLeader: every agents call on a coordinator that
// does not lead answers Kafka Connect's stale-configuration 409.
func TestAgentCallsNeedTheLeader(t *testing.T) {
	e := newEnv(t)
	e.leading = false
	ctx := context.Background()
	calls := map[string]error{}
	_, calls["list"] = e.s.ListAgents(ctx)
	_, calls["get"] = e.s.GetAgent(ctx, "a")
	_, calls["cordon"] = e.s.CordonAgent(ctx, "a")
	_, calls["uncordon"] = e.s.UncordonAgent(ctx, "a")
	_, calls["drain"] = e.s.DrainAgent(ctx, "a", false, api.CordonOperator)
	_, calls["drain status"] = e.s.DrainStatus(ctx, "a")
	_, calls["rebalance"] = e.s.Rebalance(ctx, 0, true)
	for name, err := range calls {
		if code(err) != int(api.CodeConflict) || api.AsError(err).Message != connectors.StaleMessage {
			t.Errorf("%s on a follower: %v", name, err)
		}
	}
}

// TestCordonRecordsWhoAndWhen: a cordon is written with the clock's time
// and the caller, asks for a reconcile pass, and shows; cordoning again
// keeps when it started; uncordoning removes the mark; an unknown agent is
// a 404 and writes nothing.
func TestCordonRecordsWhoAndWhen(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	info, err := e.s.CordonAgent(ctx, "a")
	if err != nil || info.State != api.AgentCordoned {
		t.Fatalf("cordon: %+v %v", info, err)
	}
	m, _ := e.mem.Fleet.Agent("a")
	if !m.StartedAt.Equal(t0) || m.Principal != "alice" || e.changed != 1 {
		t.Fatalf("mark %+v, %d passes asked", m, e.changed)
	}
	e.now = t0.Add(time.Minute)
	if _, err := e.s.CordonAgent(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if m, _ := e.mem.Fleet.Agent("a"); !m.StartedAt.Equal(t0) {
		t.Fatalf("a second cordon moved its start to %v", m.StartedAt)
	}
	if info, err := e.s.UncordonAgent(ctx, "a"); err != nil || info.State != api.AgentActive {
		t.Fatalf("uncordon: %+v %v", info, err)
	}
	if _, ok := e.mem.Fleet.Agent("a"); ok {
		t.Fatal("uncordoned agent still marked")
	}
	txns := len(e.mem.Txns)
	if _, err := e.s.CordonAgent(ctx, "ghost"); code(err) != int(api.CodeNotFound) || api.AsError(err).Message != "Agent ghost not found" {
		t.Fatalf("cordon of an unknown agent: %v", err)
	}
	if len(e.mem.Txns) != txns {
		t.Fatal("a refused cordon wrote something")
	}
}

// TestDrainRefusesToStrandTasks: a drain that would leave a task nowhere
// to go is refused (409 naming it and why) unless forced, and writes
// nothing; forced, the agent is marked draining with force.
func TestDrainRefusesToStrandTasks(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.world.Place(scheduler.Task{ID: api.TaskID{Connector: "pinned", Task: 0}, Selector: map[string]string{"zone": "a"}}, "a")
	_, err := e.s.DrainAgent(ctx, "a", false, api.CordonOperator)
	want := "Draining agent a would leave 1 task(s) with nowhere to go: pinned/0 (no other live, uncordoned agent has sluice.agent.selector zone=a); drain it with force=true to unassign them"
	if code(err) != int(api.CodeConflict) || api.AsError(err).Message != want {
		t.Fatalf("drain: %v", err)
	}
	if len(e.mem.Txns) != 0 {
		t.Fatal("a refused drain wrote something")
	}
	if _, err := e.s.DrainStatus(ctx, "a"); code(err) != int(api.CodeNotFound) || api.AsError(err).Message != "Agent a is not draining" {
		t.Fatalf("status of an agent not draining: %v", err)
	}
	st, err := e.s.DrainAgent(ctx, "a", true, api.CordonOperator)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := e.mem.Fleet.Agent("a"); m.State != api.AgentDraining || !m.Force {
		t.Fatalf("forced drain marked %+v (status %+v)", m, st)
	}
}

// TestListAgentsShowsMarkedAbsentAgents: an agent away but still marked is
// listed with its mark; registered ones show their lease's end.
func TestListAgentsShowsMarkedAbsentAgents(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.mem.Apply(ctx, store.MarkAgent{ID: "gone", Mark: store.AgentMark{State: api.AgentCordoned, StartedAt: t0}}); err != nil {
		t.Fatal(err)
	}
	list, err := e.s.ListAgents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range list.Agents {
		ids = append(ids, a.ID+":"+a.State)
	}
	if got := strings.Join(ids, ","); got != "a:active,b:active,gone:cordoned" {
		t.Fatalf("agents %s", got)
	}
	if !list.Agents[0].LeaseExpires.Equal(t0.Add(10 * time.Second)) {
		t.Fatalf("lease expires %v", list.Agents[0].LeaseExpires)
	}
}

// TestMaintenanceChecksBeforeTheController: a bad state is a 400 and a
// refused grant a 403, before anything is written; a window opened shows
// as the REST API has it, and closing it checks the grants again.
func TestMaintenanceChecksBeforeTheController(t *testing.T) {
	e := newEnv(t, "c1", "c2")
	ctx := context.Background()
	if _, err := e.s.OpenMaintenance(ctx, api.MaintenanceRequest{Selector: api.Selector{Names: []string{"c1"}}, State: "running"}, nil); code(err) != int(api.CodeBadRequest) ||
		api.AsError(err).Message != `Invalid "state" 'running': a maintenance window's state is STOPPED or PAUSED` {
		t.Fatalf("bad state: %v", err)
	}
	deny := func(c string) error {
		if c == "c2" {
			return errors.New("no grant for c2")
		}
		return nil
	}
	req := api.MaintenanceRequest{Selector: api.Selector{Names: []string{"c1", "c2"}}, State: "stopped", Reason: "patching"}
	if _, err := e.s.OpenMaintenance(ctx, req, deny); code(err) != int(api.CodeForbidden) || api.AsError(err).Message != "no grant for c2" {
		t.Fatalf("refused grant: %v", err)
	}
	if len(e.mem.Txns) != 0 {
		t.Fatal("a refused window wrote something")
	}
	w, err := e.s.OpenMaintenance(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.State != api.StateStopped || w.Principal != "alice" || !w.OpenedAt.Equal(t0) || len(w.Connectors) != 2 || w.Selector.Names[1] != "c2" {
		t.Fatalf("window %+v", w)
	}
	got, err := e.s.MaintenanceWindow(ctx, w.ID)
	if err != nil || got.ID != w.ID || got.Reason != "patching" {
		t.Fatalf("get window: %+v %v", got, err)
	}
	if list, _ := e.s.MaintenanceWindows(ctx); len(list.Windows) != 1 {
		t.Fatalf("windows %+v", list)
	}
	if _, err := e.s.CloseMaintenance(ctx, w.ID, deny); code(err) != int(api.CodeForbidden) {
		t.Fatalf("close without the grant: %v", err)
	}
	if _, err := e.s.CloseMaintenance(ctx, w.ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.MaintenanceWindow(ctx, w.ID); code(err) != int(api.CodeNotFound) {
		t.Fatalf("closed window: %v", err)
	}
}

// TestRebalanceAnswers: no rebalance yet is a 404; a dry run answers the
// plan and records nothing; a rebalance started shows.
func TestRebalanceAnswers(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.s.RebalanceStatus(ctx); code(err) != int(api.CodeNotFound) || api.AsError(err).Message != "No rebalance was started" {
		t.Fatalf("status before any: %v", err)
	}
	for i := 0; i < 4; i++ {
		e.world.Place(scheduler.Task{ID: api.TaskID{Connector: "c", Task: i}}, "a")
	}
	plan, err := e.s.Rebalance(ctx, 0, true)
	if err != nil || !plan.DryRun || len(plan.Moves) != 2 {
		t.Fatalf("dry run: %+v %v", plan, err)
	}
	if e.mem.Fleet.Rebalance() != nil {
		t.Fatal("a dry run recorded a rebalance")
	}
	r, err := e.s.Rebalance(ctx, 0, false)
	if err != nil || r.DryRun || len(r.Moves) != 2 {
		t.Fatalf("rebalance: %+v %v", r, err)
	}
	got, err := e.s.RebalanceStatus(ctx)
	if err != nil || got.ID != r.ID || len(got.Moves) != 2 {
		t.Fatalf("status: %+v %v", got, err)
	}
}

// TestRolloutTargetsMustExist: a rollout naming a connector that does not
// exist is a 404 naming it; a refused grant is a 403; an unknown rollout
// is a 404 for every call on it.
func TestRolloutTargetsMustExist(t *testing.T) {
	e := newEnv(t, "c1")
	ctx := context.Background()
	if _, err := e.s.rolloutTargets(api.Selector{Names: []string{"c1", "nope"}}); code(err) != int(api.CodeNotFound) || api.AsError(err).Message != "Connector nope not found" {
		t.Fatalf("targets: %v", err)
	}
	names, err := e.s.rolloutTargets(api.Selector{Names: []string{"c1"}})
	if err != nil || len(names) != 1 {
		t.Fatalf("targets: %v %v", names, err)
	}
	for name, call := range map[string]func() error{
		"get":    func() error { _, err := e.s.Rollout(ctx, "r1"); return err },
		"pause":  func() error { _, err := e.s.PauseRollout(ctx, "r1", nil); return err },
		"resume": func() error { _, err := e.s.ResumeRollout(ctx, "r1", nil); return err },
		"abort":  func() error { _, err := e.s.AbortRollout(ctx, "r1", nil); return err },
	} {
		if err := call(); code(err) != int(api.CodeNotFound) {
			t.Errorf("%s of an unknown rollout: %v", name, err)
		}
	}
	if list, err := e.s.Rollouts(ctx); err != nil || len(list.Rollouts) != 0 {
		t.Fatalf("rollouts: %+v %v", list, err)
	}
}

// TestViewsCopyEveryField: the REST views carry every field of the stored
// records, and a change to a view leaves the record as it was.
func TestViewsCopyEveryField(t *testing.T) {
	w := store.Window{ID: "w", Selector: store.Selector{Match: "orders-*"}, State: api.StatePaused, Reason: "r", Principal: "p", OpenedAt: t0,
		Connectors: []store.WindowConnector{{Name: "orders-1", Previous: api.StateRunning, Outcome: "restored", State: api.StateRunning}}}
	v := windowView(w)
	if v.ID != "w" || v.Selector.Match != "orders-*" || v.State != api.StatePaused || v.Reason != "r" || v.Principal != "p" || !v.OpenedAt.Equal(t0) ||
		v.Connectors[0] != (api.MaintenanceConnector{Name: "orders-1", Previous: api.StateRunning, Outcome: "restored", State: api.StateRunning}) {
		t.Fatalf("window view %+v", v)
	}
	v.Connectors[0].Name = "changed"
	if w.Connectors[0].Name != "orders-1" {
		t.Fatal("changing the view changed the record")
	}
	r := store.Rebalance{ID: "r", DryRun: true, State: "running", MaxMoves: 3, Before: map[string]int{"a": 2}, After: map[string]int{"a": 1},
		Moves: []store.RebalanceMove{{Connector: "c", Task: 1, From: "a", To: "b", State: "moved"}}}
	rv := rebalanceView(r)
	if rv.ID != "r" || !rv.DryRun || rv.State != "running" || rv.MaxMoves != 3 || rv.Before["a"] != 2 || rv.After["a"] != 1 ||
		rv.Moves[0] != (api.TaskMove{Connector: "c", Task: 1, From: "a", To: "b", State: "moved"}) {
		t.Fatalf("rebalance view %+v", rv)
	}
	spec := specRecord(api.RolloutRequest{Selector: api.Selector{Names: []string{"x"}}, OnFailure: "pause",
		Health: api.RolloutHealth{RunningFor: "30s", MaxFailedTasks: 1}})
	if spec.Names[0] != "x" || spec.OnFailure != "pause" || spec.Health.RunningFor != "30s" || spec.Health.MaxFailedTasks != 1 {
		t.Fatalf("spec %+v", spec)
	}
	rov := rolloutView(store.Rollout{ID: "ro", State: "running", Principal: "p", CreatedAt: t0, Spec: spec,
		Batches: []store.RolloutBatch{{State: "verifying", Connectors: []store.RolloutConnector{{Name: "x", WasRunning: true}}}}})
	if rov.ID != "ro" || rov.Request.Selector.Names[0] != "x" || rov.Request.OnFailure != "pause" || rov.Batches[0].State != "verifying" || !rov.Batches[0].Connectors[0].WasRunning {
		t.Fatalf("rollout view %+v", rov)
	}
}
