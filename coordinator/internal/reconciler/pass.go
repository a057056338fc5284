package reconciler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"reflect"
	"sync"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/instances"
	"github.com/sluice-io/sluice/coordinator/internal/metrics"
	"github.com/sluice-io/sluice/coordinator/internal/planner"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/labels"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/tenancy"
	"github.com/sluice-io/sluice/shared/wire"
)

// reconcileLoop reconciles until ctx ends (leadership is revoked): on a
// config change, when something asks for it (an agent's report changed, a
// restart), every lease/4, and the moment an agent's lease runs out.
func (r *Reconciler) reconcileLoop(ctx context.Context, m Instances) {
	tick := time.NewTicker(max(r.cfg.AgentLease/4, 50*time.Millisecond))
	defer tick.Stop()
	expiry := time.NewTimer(time.Hour)
	defer expiry.Stop()
	for {
		changed, computed := r.cfg.Connectors.Changed(), m.Changed()
		start := time.Now()
		r.Pass(ctx, m)
		r.cfg.Metrics.ObserveReconcile(time.Since(start))
	wait:
		for {
			// A paused agent is replaced when its lease runs out, not up
			// to a tick (a quarter lease) later. The timer is cheap to
			// wake for: an agent that heartbeated meanwhile only moves it
			// on, without a pass.
			expiry.Reset(r.untilExpiry())
			select {
			case <-ctx.Done():
				return
			case <-changed:
			case <-computed:
			case <-r.kick:
			case <-tick.C:
			case <-expiry.C:
				if !r.anyExpired(r.now()) {
					continue
				}
			}
			break wait
		}
	}
}

// untilExpiry is how long until the first agent's lease runs out or a
// start's settle window ends, or an hour when neither is ahead.
func (r *Reconciler) untilExpiry() time.Duration {
	next, ok := r.table.nextWake()
	if !ok {
		return time.Hour
	}
	return max(next.Sub(r.now()), 0)
}

// anyExpired reports whether an agent's lease ran out, or a start's settle
// window ended, by now.
func (r *Reconciler) anyExpired(now time.Time) bool {
	next, ok := r.table.nextWake()
	return ok && !now.Before(next)
}

// Pass makes the world match the committed configs once: connector
// statuses, task configs of started connectors, and the placement of
// every task.
func (r *Reconciler) Pass(ctx context.Context, m Instances) {
	cs := r.cfg.Connectors
	cs.BeforePass(ctx)
	conns := cs.All()
	want := make([]instances.Connector, len(conns))
	for i, c := range conns {
		want[i] = instances.Connector{Name: c.Name, Config: c.Config, TargetState: c.TargetState}
	}
	m.Sync(want)
	holds := r.ensureAllTaskConfigs(ctx, m, conns)
	desired := map[api.TaskID]planner.Desired{}
	reserved := cs.ReservedTopics(conns)
	last := r.lastAgents()
	for i, c := range conns {
		r.ensureConnectorStatus(c)
		if c.TargetState == records.TargetStopped {
			continue
		}
		shape := cs.Shape(c)
		if !r.ensureFenced(ctx, c, shape) {
			continue
		}
		for id, d := range desiredTasks(c, shape, holds[i], reserved, last) {
			desired[id] = d
		}
	}
	out := r.plan(desired, r.now())
	r.sendRevokes(ctx, out.Revokes)
	r.sendAssigns(ctx, out.Assigns)
	r.writeTaskStatuses(out.Unassigned, out.Reasons, out.Removed)
}

// lastAgents returns the agent that last ran a task, as its status says (""
// if none has), for the tasks placement may ask about: those not placed on
// a registered agent (a placed task stays where it is). The others are not
// looked up, so a pass over many tasks decodes no status it does not need.
func (r *Reconciler) lastAgents() func(api.TaskID) string {
	agents, placed := r.table.AgentsAndPlacements()
	registered := make(map[string]bool, len(agents))
	for _, a := range agents {
		registered[a.ID] = a.Registered
	}
	return func(id api.TaskID) string {
		if p, ok := placed[id]; ok && registered[p.Agent] {
			return ""
		}
		st, _ := r.status.Task(id.Connector, id.Task)
		return st.WorkerID
	}
}

// pluginVersionKey is KIP-891's connector.plugin.version.
const pluginVersionKey = "connector.plugin.version"

// desiredTasks are the tasks of connector c that should run, as the
// planner takes them; last names the agent that last ran each.
func desiredTasks(c store.Connector, shape Shape, hold bool, reserved map[string]string, last func(api.TaskID) string) map[api.TaskID]planner.Desired {
	// A selector that does not parse places the tasks nowhere: running
	// them anywhere could run a file source on a host without its file.
	sel, selErr := labels.Parse(c.Config[labels.SelectorKey])
	var selError string
	if selErr != nil {
		selError = selErr.Error()
	}
	conn := c.Config
	if v := shape.PluginVersion; v != "" && conn[pluginVersionKey] != v {
		conn = maps.Clone(conn)
		conn[pluginVersionKey] = v
	}
	out := make(map[api.TaskID]planner.Desired, len(c.Tasks))
	for i, tc := range c.Tasks {
		id := api.TaskID{Connector: c.Name, Task: i}
		// A change of the tenant's rules changes the hash, so the tasks
		// restart under them (and fail, with a trace, if they break them).
		out[id] = planner.Desired{ID: id, ConnConfig: conn, TaskConfig: tc, Hash: configHash(conn, tc) + tenancy.Fingerprint(shape.Policy), Tenant: shape.Policy,
			Paused: c.TargetState == records.TargetPaused, Selector: sel, SelectorError: selError, Plugin: shape.Plugin, Hold: hold, ReservedTopics: reserved,
			LastAgent: last(id)}
	}
	return out
}

// plan expires lost agents and runs the planner on the agents and
// placements of this instant, then installs the placements it computed.
// The plan itself holds the table's lock but does no I/O.
func (r *Reconciler) plan(desired map[api.TaskID]planner.Desired, now time.Time) planner.Output {
	// The fleet state's own lock, taken before the table's, never inside.
	cordoned := r.cordoned()
	out, expired := r.table.plan(desired, cordoned, now)
	var lost []string
	for _, a := range expired {
		r.log.Warn("agent lost: lease expired", "agent", a.ID, "last_seen", a.LastSeen)
		r.cfg.Metrics.AgentLost(metrics.LostLease)
		lost = append(lost, a.ID)
	}
	// Java connectors on the lost agents start again elsewhere.
	if len(lost) > 0 {
		r.cfg.Listener.AgentsGone(lost)
	}
	return out
}

// sendRevokes stops tasks, all agents in parallel, and waits (bounded by the
// task shutdown timeout) so that a moved task stops before it starts again.
func (r *Reconciler) sendRevokes(ctx context.Context, revokes map[string][]api.TaskID) {
	var wg sync.WaitGroup
	for agent, ids := range revokes {
		wg.Go(func() {
			if _, err := r.RevokeTasks(ctx, agent, ids); err != nil {
				r.log.Warn("revoke failed", "agent", agent, "tasks", len(ids), "err", err)
			}
		})
	}
	wg.Wait()
}

// RevokeTasks stops ids on agent, waiting up to the task shutdown timeout.
// It also voids every assignment of those tasks issued so far: one still
// in flight to the agent is refused when it arrives after the revoke.
func (r *Reconciler) RevokeTasks(ctx context.Context, agent string, ids []api.TaskID) (wire.RevokeReply, error) {
	rctx, cancel := context.WithTimeout(ctx, r.cfg.TaskShutdownTimeout)
	defer cancel()
	req := wire.RevokeRequest{Term: r.cfg.Term(), Tasks: ids, Generation: r.table.Generation()}
	reply, err := r.cfg.RPC.Revoke(rctx, agent, req)
	if err == nil {
		r.table.ForgetReported(agent, reply.Stopped)
	}
	return reply, err
}

// sendAssigns sends each agent its assignments without waiting for the
// answers: an agent that hangs (paused, partitioned) must not hold up the
// reconcile loop, which also notices lost agents. Assignments are
// idempotent, and none is sent to an agent while one is in flight to it:
// a pass that had to skip the agent asks for another once the one in
// flight is answered (a burst of resumes plans new tasks in every pass,
// which would otherwise wait for the agent's next heartbeat). A lost one
// is sent again when the agent's next heartbeat shows the task missing.
// They go in requests that each fit one NATS message, so a failed one
// (a config too large to send) holds up no other.
func (r *Reconciler) sendAssigns(ctx context.Context, assigns map[string][]wire.TaskAssignment) {
	if r.assignStopped.Load() {
		return
	}
	term := r.cfg.Term()
	for agent, tasks := range assigns {
		slot := &assignSlot{}
		if v, busy := r.assigning.LoadOrStore(agent, slot); busy {
			inFlight := v.(*assignSlot)
			inFlight.skipped.Store(true)
			if cur, ok := r.assigning.Load(agent); !ok || cur != inFlight {
				r.Trigger() // answered meanwhile, perhaps before it saw the flag
			}
			continue
		}
		go func() {
			defer func() {
				r.assigning.Delete(agent)
				if slot.skipped.Load() {
					r.Trigger()
				}
			}()
			actx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			refused, failed := r.cfg.RPC.Assign(actx, agent, term, r.table.Generation(), tasks)
			if ctx.Err() == nil {
				for _, f := range failed {
					r.assignFailed(agent, f)
				}
			}
			if len(refused) > 0 {
				r.forgetRefused(agent, tasks, refused)
			}
		}()
	}
}

// forgetRefused drops the placements an agent refused (a revoke overtook
// them), unless they changed since, so that the next pass places those
// tasks again at a new generation instead of resending the void one.
func (r *Reconciler) forgetRefused(agent string, sent []wire.TaskAssignment, refused []api.TaskID) {
	gens := make(map[api.TaskID]int64, len(sent))
	for _, a := range sent {
		gens[a.ID] = a.Generation
	}
	r.table.forgetIf(agent, refused, gens)
	// Placed again at once the first time; refusals that repeat (a revoke
	// voided generations this leader has yet to issue) wait for the next
	// tick, and are logged once a period, so that they never loop hot.
	if r.warnDue("refused/" + agent) {
		r.log.Info("assignments refused: a revoke overtook them; placing them again", "agent", agent, "tasks", len(refused))
		r.Trigger()
	}
}

// ensureFenced keeps Kafka Connect's exactly-once invariant: before the
// tasks of a new task count run, every transactional id an earlier
// generation may hold is fenced, and the tasks-fencing record then says the
// count that is safe to run. Without exactly-once support (or for sinks) it
// has nothing to do. It reports whether the tasks may run.
func (r *Reconciler) ensureFenced(ctx context.Context, c store.Connector, shape Shape) bool {
	if !needsFencing(r.cfg.ExactlyOnce, c, shape) {
		return true
	}
	if err := r.cfg.Connectors.Fence(ctx, c); err != nil {
		r.log.Warn("fencing before the new tasks start failed; retrying", "connector", c.Name, "err", err)
		return false
	}
	if err := r.cfg.Connectors.PutFencingCount(ctx, c.Name, len(c.Tasks)); err != nil {
		r.log.Warn("writing the task-count record failed; retrying", "connector", c.Name, "err", err)
		return false
	}
	return true
}

// needsFencing reports whether c's tasks must be fenced before they run:
// an exactly-once source whose task count is not the one last fenced.
func needsFencing(exactlyOnce bool, c store.Connector, shape Shape) bool {
	return exactlyOnce && len(c.Tasks) > 0 && c.FencingCount != len(c.Tasks) && shape.Source
}

// ensureConnectorStatus keeps the connector's status in line with its target.
func (r *Reconciler) ensureConnectorStatus(c store.Connector) {
	st, ok := r.status.Connector(c.Name)
	if state, write := connectorStatusDue(c.TargetState, st, ok, r.cfg.WorkerID); write {
		r.status.Queue(ConnectorStatusRecord(c.Name, state, "", r.cfg.WorkerID))
	}
}

// connectorStatusDue decides whether a connector with target state target
// and status st (ok: it has one) needs its status written, and which
// state: one this coordinator wrote that matches the target stays, and so
// do a failure of a started connector and a restart under way.
func connectorStatusDue(target string, st store.InstanceStatus, ok bool, workerID string) (string, bool) {
	want := map[string]string{records.TargetStarted: api.StateRunning, records.TargetPaused: api.StatePaused, records.TargetStopped: api.StateStopped}[target]
	if ok && st.WorkerID == workerID && (st.State == want || st.State == api.StateFailed && want == api.StateRunning || st.State == api.StateRestarting) {
		return "", false
	}
	return want, true
}

// ensureTaskConfigs commits the task configs the connector's instance last
// computed, if they differ from the committed ones. The instances manager
// computes them only when they can change (a start, a config change, a
// restart, the connector's own request) and reports failures on the
// connector's status itself. It returns the connector as it now stands, and
// hold when its committed task configs are still not the ones its config
// calls for (its tasks are then left as they run until they are).
func (r *Reconciler) ensureTaskConfigs(ctx context.Context, m Instances, c store.Connector) (store.Connector, bool) {
	ts, ok := m.TaskConfigs(c.Name)
	if !ok || !ts.Current {
		return c, true // not computed yet for this config, or failing: keep what runs
	}
	if reflect.DeepEqual(ts.Configs, c.Tasks) {
		return c, false
	}
	// Lock order: the connector's lock, then whatever the config store
	// takes to write; never the table's, which is not held here.
	cs := r.cfg.Connectors
	unlock, ok := cs.TryLock(c.Name)
	if !ok {
		return c, true // a request holds the connector: the next pass retries
	}
	defer unlock()
	// Re-check under the lock: a stop or delete may have landed meanwhile.
	cur, ok := cs.Get(c.Name)
	if !ok || cur.Version != c.Version || cur.TargetState != records.TargetStarted {
		return c, true
	}
	if err := cs.PutTaskConfigs(ctx, c.Name, ts.Configs); err != nil {
		r.log.Warn("writing task configs failed", "connector", c.Name, "err", err)
		return c, true
	}
	// Written and applied: plan with the new task configs in this pass.
	if cur, ok = cs.Get(c.Name); !ok {
		return c, true
	}
	return cur, !reflect.DeepEqual(ts.Configs, cur.Tasks)
}

// taskConfigWriters bounds the task config writes of one reconcile pass in
// flight at once. Written together they share transactions (the config
// store's group commit), so a burst — 100 connectors resumed at once —
// costs a few transactions instead of one after the other.
const taskConfigWriters = 32

// ensureAllTaskConfigs runs ensureTaskConfigs for every started connector
// of conns, the writes at once, and updates conns in place; it returns
// each connector's hold.
func (r *Reconciler) ensureAllTaskConfigs(ctx context.Context, m Instances, conns []store.Connector) []bool {
	holds := make([]bool, len(conns))
	sem := make(chan struct{}, taskConfigWriters)
	var wg sync.WaitGroup
	for i := range conns {
		if conns[i].TargetState != records.TargetStarted {
			continue
		}
		if ts, ok := m.TaskConfigs(conns[i].Name); !ok || !ts.Current || reflect.DeepEqual(ts.Configs, conns[i].Tasks) {
			conns[i], holds[i] = r.ensureTaskConfigs(ctx, m, conns[i]) // nothing to write: no I/O
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			conns[i], holds[i] = r.ensureTaskConfigs(ctx, m, conns[i])
		})
	}
	wg.Wait()
	return holds
}

// configHash identifies a task's connector and task config, so a change of
// either restarts the task with a new generation.
func configHash(conn, task map[string]string) string {
	b, _ := json.Marshal([]map[string]string{conn, task})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
