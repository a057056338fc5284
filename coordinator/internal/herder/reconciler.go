package herder

import (
	"context"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/validate"
	"github.com/sluice-io/sluice/coordinator/internal/fleet"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/drain"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/prestop"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/rebalance"
	"github.com/sluice-io/sluice/coordinator/internal/reconciler"
	"github.com/sluice-io/sluice/coordinator/internal/scheduler"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/labels"
	"github.com/sluice-io/sluice/shared/wire"
)

// The herder wires the reconciler (coordinator/internal/reconciler) and the
// fleet controllers (fleet/drain, fleet/rebalance, fleet/prestop) to the rest: recPorts
// are the reconciler's ports, satisfied by the herder's stores and
// connector logic; the methods below keep the herder's call sites short.

// newReconciler builds the reconciler and the fleet controllers of h.
func (h *Herder) newReconciler() {
	p := recPorts{h}
	h.rec = reconciler.New(reconciler.Config{
		GroupID: h.cfg.GroupID, WorkerID: h.cfg.WorkerID, Version: h.cfg.Version,
		AgentLease: h.cfg.AgentLease, AgentProbe: h.cfg.AgentProbe, PlacementSettle: h.cfg.PlacementSettle, TaskShutdownTimeout: h.cfg.TaskShutdownTimeout,
		LivenessTopic: h.cfg.LivenessTopic, ExactlyOnce: h.cfg.ExactlyOnce, DialNATS: h.cfg.DialNATS, NC: h.nc,
		Term: h.term.Load, RPC: h.rpc, Statuses: p, Fleet: p, Connectors: p, Listener: p,
		Metrics: h.cfg.Metrics, Logger: h.log, Faults: h.faults,
	})
	h.agents = h.rec.Table()
	h.drains = drain.New(h.rec, p, h.log)
	h.rebalances = rebalance.New(h.rec, p, reconciler.RealClock{}, operationID, h.log)
	// h.fleet is opened later, as the herder starts.
	applyFleet := func(ctx context.Context, cmds ...store.Command) error { return h.fleet.Apply(ctx, cmds...) }
	h.preStops = prestop.New(p, h.agents, applyFleet, h.trigger, h.log)
	h.moveDone = h.rec.Watch()
}

// runFleet drives the drains, the rebalance and the lifts of pre-stop
// drains until ctx ends.
func (h *Herder) runFleet(ctx context.Context) {
	fleet.Run(ctx, fleet.Tick, h.fleet.State.Changed, h.moveDone, h.drains.Step, h.rebalances.Step, h.preStops.Step)
}

// trigger asks the reconcile loop for a pass.
func (h *Herder) trigger() { h.rec.Trigger() }

// RegisteredAgents counts the agents that registered and hold a lease.
func (h *Herder) RegisteredAgents() int { return len(h.agents.Registered()) }

// StopAssigning makes this coordinator send no more assignments, for as
// long as it runs. It is for stopping a whole cluster that runs in one
// process (sluice dev): called before the agents stop, the tasks of an agent
// that leaves are not handed to an agent that is about to leave too (where
// they would start only to be stopped, or fail as its clients close).
// Revokes, statuses and agent registrations go on as before.
func (h *Herder) StopAssigning() { h.rec.StopAssigning() }

// recPorts is the herder as the reconciler and the fleet controllers see it.
type recPorts struct{ h *Herder }

var (
	_ reconciler.Statuses   = recPorts{}
	_ reconciler.Fleet      = recPorts{}
	_ reconciler.Connectors = recPorts{}
	_ reconciler.Listener   = recPorts{}
	_ drain.Marks           = recPorts{}
	_ rebalance.Store       = recPorts{}
)

// The status topic (reconciler.Statuses).

func (p recPorts) Connector(name string) (store.InstanceStatus, bool) {
	return p.h.statuses.State.Connector(name)
}
func (p recPorts) Task(name string, task int) (store.InstanceStatus, bool) {
	return p.h.statuses.State.Task(name, task)
}
func (p recPorts) TaskIDs(name string) []int   { return p.h.statuses.State.TaskIDs(name) }
func (p recPorts) Topics(name string) []string { return p.h.statuses.State.Topics(name) }
func (p recPorts) MaxGeneration() int64        { return p.h.statuses.State.MaxGeneration() }
func (p recPorts) TaskOwners() map[string]map[int]store.InstanceStatus {
	return p.h.statuses.State.TaskOwners()
}

// The fleet topic (reconciler.Fleet, drain.Marks, rebalance.Store).

func (p recPorts) Agents() map[string]store.AgentMark { return p.h.fleet.State.Agents() }
func (p recPorts) Rebalance() *store.Rebalance        { return p.h.fleet.State.Rebalance() }
func (p recPorts) Put(ctx context.Context, r *store.Rebalance) error {
	return p.h.fleet.Apply(ctx, store.PutRebalance{Rebalance: r})
}

// The connectors (reconciler.Connectors).

func (p recPorts) All() []store.Connector                  { return p.h.configs.State.All() }
func (p recPorts) Get(name string) (store.Connector, bool) { return p.h.configs.State.Get(name) }
func (p recPorts) Changed() <-chan struct{}                { return p.h.configs.State.Changed() }
func (p recPorts) BeforePass(ctx context.Context)          { p.h.ensureWriter(ctx) }
func (p recPorts) TryLock(name string) (func(), bool)      { return p.h.locks.TryLock(name) }
func (p recPorts) ReservedTopics(conns []store.Connector) map[string]string {
	return p.h.admit.ReservedTopics(conns)
}

func (p recPorts) Shape(c store.Connector) reconciler.Shape {
	h := p.h
	s := reconciler.Shape{Policy: h.admit.Policy(c.Name)}
	if pc, ok := h.plugins.Choice(c.Config); ok {
		s.Plugin, s.Source = pc.Placement(), pc.Kind == connect.KindSource
		// The agents get the version resolved, exactly: a Java one, and a
		// built-in's when the config names a version at all (a range an
		// agent's own host could meet with a Java version must not make
		// that agent run the Java plugin where the leader chose the
		// built-in).
		if pc.Java() {
			s.PluginVersion = pc.Pinned
		} else if c.Config[validate.ConnectorVersionConfig] != "" {
			s.PluginVersion = pc.Version
		}
	}
	return s
}

func (p recPorts) SchedulerTask(id api.TaskID) (scheduler.Task, bool) {
	t := scheduler.Task{ID: id}
	c, ok := p.h.configs.State.Get(id.Connector)
	if !ok {
		return t, true
	}
	sel, err := labels.Parse(c.Config[labels.SelectorKey])
	if err != nil {
		return t, false
	}
	t.Selector = sel
	if pc, ok := p.h.plugins.Choice(c.Config); ok {
		t.Plugin = pc.Placement()
	}
	return t, true
}

func (p recPorts) PutTaskConfigs(ctx context.Context, name string, tasks []map[string]string) error {
	return p.h.configs.Apply(ctx, store.PutTaskConfigs{Name: name, Tasks: tasks})
}

func (p recPorts) PutFencingCount(ctx context.Context, name string, count int) error {
	return p.h.configs.Apply(ctx, store.PutFencingCount{Name: name, Count: count})
}

func (p recPorts) Fence(ctx context.Context, c store.Connector) error {
	h := p.h
	return h.offs.Calls().SendSource(ctx, wire.SourceOffsetsRequest{Term: h.term.Load(), Connector: c.Name, Op: wire.OffsetsOpAlter, FenceIDs: h.offs.FenceIDs(c.Name, c)})
}

// The rest of the leadership (reconciler.Listener).

// AgentsGone tells the host of Java connectors that agents left or lost
// their leases: the connectors they ran start again on other agents.
func (p recPorts) AgentsGone(ids []string) {
	if remote := p.h.remote.Load(); remote != nil && len(ids) > 0 {
		remote.AgentsGone(ids)
	}
}

// HostAgentJoined starts at once the Java connectors that found no agent
// with their plugin: waiting out their backoff would leave them down for
// up to a minute with an agent able to run them.
func (p recPorts) HostAgentJoined() {
	remote, m := p.h.remote.Load(), p.h.instances.Load()
	if remote == nil || m == nil {
		return
	}
	for _, name := range remote.Waiting() {
		m.Restart(name)
	}
}

func (p recPorts) Registered(id string) { p.h.levels.Registered(id) }

// ConnectorEvent hands a Java connector's event to its instance.
func (p recPorts) ConnectorEvent(ev wire.PluginConnectorEvent) {
	if remote := p.h.remote.Load(); remote != nil {
		p.h.log.Debug("connector event", "agent", ev.AgentID, "connector", ev.Name, "kind", ev.Kind)
		remote.Event(ev)
	}
}
