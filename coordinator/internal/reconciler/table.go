package reconciler

import (
	"maps"
	"sync"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/placements"
	"github.com/sluice-io/sluice/coordinator/internal/planner"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
	"github.com/sluice-io/sluice/coordinator/internal/scheduler"
	"github.com/sluice-io/sluice/shared/wire"
)

// Table is what the leader knows of its agents and their tasks in one term:
// the agent registry, the placements, the moves in flight and what each
// drain moved, and the Java plugins every host announced. One mutex guards
// them all, so that a plan sees them at one instant; no other lock is
// taken while it is held, and no I/O is done under it. Every method takes
// the time it decides at as an argument.
type Table struct {
	mu     sync.Mutex
	lease  time.Duration
	agents *registry.Registry
	placed *placements.Table
	// moves are the tasks fleet operations are moving between agents, and
	// drained what each agent's latest drain moved: both the term's.
	moves   map[api.TaskID]activeMove
	drained map[string]DrainTally
	// hostSeen are the Java plugins agents announced, kept across terms: a
	// connector of one stays a Java connector while no agent with it is live.
	hostSeen map[registry.PluginKey]api.PluginInfo
	// start is placement at a start (startup.go); departed are the agents
	// that left gracefully this term, and when.
	start    startup
	departed map[string]time.Time
}

// NewTable makes an empty table whose agents hold a lease of lease, and
// whose starts hold their backlog for settle (startup.go; 0: never).
func NewTable(lease, settle time.Duration) *Table {
	t := &Table{lease: lease, start: startup{settle: settle}}
	t.Reset()
	return t
}

// Reset forgets every agent, placement and move: a term starts from what
// the topics and the agents' own reports say, never from an earlier term's
// memory. The host plugins seen stay. It opens a start.
func (t *Table) Reset() {
	t.mu.Lock()
	t.agents = registry.New(t.lease)
	t.placed = placements.New()
	t.moves, t.drained = map[api.TaskID]activeMove{}, map[string]DrainTally{}
	t.departed = map[string]time.Time{}
	t.start.begin()
	t.mu.Unlock()
}

// Presume presumes that the task owners the status topic names still run
// their tasks, heard from at now, that the agents in returning — which
// last ran tasks that no agent runs now — may come back, within a lease of
// now, and that generations up to maxGen were issued.
func (t *Table) Presume(owners map[api.TaskID]Owner, returning []string, maxGen int64, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.placed.ObserveGeneration(maxGen)
	for id, o := range owners {
		t.agents.Presume(o.Agent, now)
		t.placed.Presume(id, o.Agent, o.Generation)
	}
	for _, id := range returning {
		t.agents.Presume(id, now)
	}
}

// leave forgets agent id, which left gracefully at now (its tasks stopped
// and committed): they are placed elsewhere at once. Unless it was the last
// registered agent: then the fleet is stopping as a whole (a restart of
// every agent, sluice dev stopping), nobody could take them, and every
// agent that left within a lease is presumed again from when it left, so
// that its tasks wait for it rather than go to whichever agent registers
// first (startup.go).
func (t *Table) leave(id string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.agents.Remove(id)
	for a, at := range t.departed {
		if now.Sub(at) > t.lease {
			delete(t.departed, a)
		}
	}
	t.departed[id] = now
	if len(t.agents.Registered()) > 0 {
		return
	}
	for a, at := range t.departed {
		t.agents.Presume(a, at)
		// Its tasks stopped: they are unplaced, and wait for it.
		t.placed.ForgetAgent(a)
	}
}

// Owner is the agent that runs a task, at a generation.
type Owner struct {
	Agent      string
	Generation int64
}

// observation is what an agent's registration or heartbeat told.
type observation struct {
	known, changed bool
	// restarted: the agent registered again as a new process.
	restarted bool
	// forged are reported tasks at a generation never issued.
	forged []wire.RunningTask
}

// observe records a registration (register) or heartbeat at now and adopts
// the tasks the agent reports that nothing else is placed for.
func (t *Table) observe(q *wire.RegisterRequest, register bool, now time.Time) observation {
	t.mu.Lock()
	defer t.mu.Unlock()
	prev, wasKnown := t.agents.Get(q.AgentID)
	var o observation
	o.known, o.changed = t.agents.Observe(q, register, now)
	// An agent that registers again with a later start is a new process:
	// the connectors its old host ran are gone with it, though no lease ran
	// out (it came back within it).
	o.restarted = o.known && register && wasKnown && prev.Registered && !q.StartedAt.IsZero() && !prev.StartedAt.Equal(q.StartedAt)
	if !o.known {
		return o
	}
	if register {
		// Back: should it leave again, its own leaving counts, not this.
		delete(t.departed, q.AgentID)
	}
	if t.hostSeen == nil {
		t.hostSeen = map[registry.PluginKey]api.PluginInfo{}
	}
	for _, p := range q.HostPlugins {
		t.hostSeen[registry.PluginKey{Class: p.Class, Version: p.Version}] = p
	}
	for _, rt := range q.Tasks {
		if !t.placed.Adopt(q.AgentID, rt) {
			o.forged = append(o.forged, rt)
		}
	}
	return o
}

// Touch keeps the lease of the agents heard at now on another path than
// NATS (liveness beats).
func (t *Table) Touch(ids []string, now time.Time) {
	t.mu.Lock()
	for _, id := range ids {
		t.agents.Touch(id, now)
	}
	t.mu.Unlock()
}

// Agents are every agent this leader knows (registered or presumed).
func (t *Table) Agents() []registry.Agent {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.agents.Agents()
}

// Placements are every task's placement.
func (t *Table) Placements() map[api.TaskID]placements.Placement {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.placed.All()
}

// AgentsAndPlacements are both at one instant.
func (t *Table) AgentsAndPlacements() ([]registry.Agent, map[api.TaskID]placements.Placement) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.agents.Agents(), t.placed.All()
}

// Placement is task id's placement; false when it is placed nowhere.
func (t *Table) Placement(id api.TaskID) (placements.Placement, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.placed.Get(id)
}

// Known reports whether agent id registered or is presumed.
func (t *Table) Known(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.agents.Known(id)
}

// Registered are the registered agents, sorted.
func (t *Table) Registered() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.agents.Registered()
}

// LastSeen is when agent was last heard from; false when unknown.
func (t *Table) LastSeen(agent string) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.agents.LastSeen(agent)
}

// Holders are, at one instant, every known agent and the tasks of
// connector that any agent reports or that are placed: who may hold one of
// its tasks.
func (t *Table) Holders(connector string) (agents []string, tasks []api.TaskID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, a := range t.agents.Agents() {
		agents = append(agents, a.ID)
	}
	return agents, append(t.agents.ReportedOf(connector), t.placed.OfConnector(connector)...)
}

// ForgetReported drops ids from what agent reports (they stopped).
func (t *Table) ForgetReported(agent string, ids []api.TaskID) {
	t.mu.Lock()
	t.agents.ForgetReported(agent, ids)
	t.mu.Unlock()
}

// Generation is the highest task generation issued so far; Issued reports
// whether gen may have been issued (placements.Table.Issued).
func (t *Table) Generation() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.placed.Generation()
}

// Issued reports whether gen is one this leader may have issued: positive,
// and at most the highest it issued or read from the status topic.
func (t *Table) Issued(gen int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.placed.Issued(gen)
}

// Restart gives tasks a new generation, so their agents restart them.
func (t *Table) Restart(ids []api.TaskID) {
	t.mu.Lock()
	for _, id := range ids {
		t.placed.Restart(id)
	}
	t.mu.Unlock()
}

// forgetIf drops the placements of refused unless they changed since they
// were sent at gens.
func (t *Table) forgetIf(agent string, refused []api.TaskID, gens map[api.TaskID]int64) {
	t.mu.Lock()
	for _, id := range refused {
		t.placed.ForgetIf(id, agent, gens[id])
	}
	t.mu.Unlock()
}

// Plugins are the built-in plugins of the live agents.
func (t *Table) Plugins() map[string]api.PluginInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.agents.Plugins()
}

// HostPlugins are the Java plugins of live agents' hosts.
func (t *Table) HostPlugins() map[registry.PluginKey]api.PluginInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.agents.HostPlugins()
}

// KnownHostPlugins are the Java plugins of live agents' hosts and those of
// every host seen since this process started: a connector of one stays a
// Java connector while no agent with it is live.
func (t *Table) KnownHostPlugins() map[registry.PluginKey]api.PluginInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.agents.HostPlugins()
	for k, info := range t.hostSeen {
		if _, ok := out[k]; !ok {
			out[k] = info
		}
	}
	return out
}

// plan expires the agents whose lease ran out by now and runs the planner
// on the agents and placements of this instant (cordoned agents take no new
// task), then installs the placements it computed. It returns the plan and
// the agents lost.
func (t *Table) plan(desired map[api.TaskID]planner.Desired, cordoned map[string]bool, now time.Time) (planner.Output, []registry.Agent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	lost := t.agents.Expire(now)
	agents, placed := t.agents.Agents(), t.placed.All()
	out := planner.Plan(planner.Input{Desired: desired, Agents: agents, Placements: placed, Generation: t.placed.Generation(),
		Cordoned: cordoned, Moves: t.planMovesLocked(), Settling: t.start.holds(now, agents, desired, placed)})
	t.placed.Replace(out.Placements, out.Generation)
	return out, lost
}

// nextWake is the earliest instant a pass has something to do that no
// event announces: an agent's lease runs out, or a start's settle window
// ends. False with neither.
func (t *Table) nextWake() (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	next, ok := t.agents.NextExpiry()
	if end, settling := t.start.settleEnd(); settling && (!ok || end.Before(next)) {
		next, ok = end, true
	}
	return next, ok
}

// judgeAbsent decides whether agent id, absent from NATS since since, is
// lost at now, and forgets it if so. beatsFresh: liveness beats reach the
// leader. Every agent writes liveness beats, so one absent from NATS may
// only be cut off from it: while beats reach this leader, it is lost once it
// has not been heard for livenessGrace (its beats come every LivenessEvery).
func (t *Table) judgeAbsent(id string, since, now time.Time, beatsFresh bool) (absence, registry.Agent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a, ok := t.agents.Get(id)
	lost := ok && a.Registered && a.LastSeen.Before(since)
	if ok && a.Registered && beatsFresh {
		if now.Sub(a.LastSeen) < livenessGrace {
			return absentWait, a
		}
		lost = true
	}
	if !lost {
		return absentAlive, a
	}
	t.agents.Remove(id)
	return absentLost, a
}

// view is the table at one instant as a Snapshot starts from.
type view struct {
	agents  []registry.Agent
	placed  map[api.TaskID]placements.Placement
	moves   map[api.TaskID]MoveInfo
	drained map[string]DrainTally
}

// view retires the moves done by now and returns the table as it stands;
// timedOut are the moves given up.
func (t *Table) view(now time.Time) (v view, timedOut []activeMove) {
	t.mu.Lock()
	defer t.mu.Unlock()
	timedOut = t.retireMovesLocked(now)
	v = view{agents: t.agents.Agents(), placed: t.placed.All(), moves: make(map[api.TaskID]MoveInfo, len(t.moves)), drained: maps.Clone(t.drained)}
	for id, m := range t.moves {
		v.moves[id] = MoveInfo{From: m.From, To: m.To, Owner: m.owner, Since: m.since, Drain: m.drain}
	}
	return v, timedOut
}

// SchedulerAgent is a registered agent as the scheduler sees it.
func SchedulerAgent(a registry.Agent, cordoned bool) scheduler.Agent {
	return scheduler.Agent{ID: a.ID, Labels: a.Labels, Plugins: a.PlacementPlugins(), Cordoned: cordoned}
}
