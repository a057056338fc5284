package herder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/coordinator/internal/instances"
	"github.com/sluice-io/sluice/coordinator/internal/metrics"
	"github.com/sluice-io/sluice/coordinator/internal/planner"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/labels"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/tenancy"
)

// reconcileLoop reconciles until ctx ends (leadership is revoked): on a
// config change, when something asks for it (an agent's report changed, a
// restart), every lease/4, and the moment an agent's lease runs out.
func (h *Herder) reconcileLoop(ctx context.Context, m *instances.Manager) {
	tick := time.NewTicker(max(h.cfg.AgentLease/4, 50*time.Millisecond))
	defer tick.Stop()
	expiry := time.NewTimer(time.Hour)
	defer expiry.Stop()
	for {
		changed, computed := h.configs.State.Changed(), m.Changed()
		start := time.Now()
		h.reconcile(ctx, m)
		h.cfg.Metrics.ObserveReconcile(time.Since(start))
	wait:
		for {
			// A paused agent is replaced when its lease runs out, not up
			// to a tick (a quarter lease) later. The timer is cheap to
			// wake for: an agent that heartbeated meanwhile only moves it
			// on, without a pass.
			expiry.Reset(h.untilExpiry())
			select {
			case <-ctx.Done():
				return
			case <-changed:
			case <-computed:
			case <-h.kick:
			case <-tick.C:
			case now := <-expiry.C:
				if !h.anyExpired(now) {
					continue
				}
			}
			break wait
		}
	}
}

// untilExpiry is how long until the first agent's lease runs out, or an
// hour when there is no agent.
func (h *Herder) untilExpiry() time.Duration {
	h.mu.Lock()
	next, ok := h.agents.NextExpiry()
	h.mu.Unlock()
	if !ok {
		return time.Hour
	}
	return max(time.Until(next), 0)
}

// anyExpired reports whether an agent's lease ran out by now.
func (h *Herder) anyExpired(now time.Time) bool {
	h.mu.Lock()
	next, ok := h.agents.NextExpiry()
	h.mu.Unlock()
	return ok && !now.Before(next)
}

// reconcile makes the world match the committed configs: connector statuses,
// task configs of started connectors, and the placement of every task.
func (h *Herder) reconcile(ctx context.Context, m *instances.Manager) {
	h.ensureWriter(ctx)
	conns := h.configs.State.All()
	want := make([]instances.Connector, len(conns))
	for i, c := range conns {
		want[i] = instances.Connector{Name: c.Name, Config: c.Config, TargetState: c.TargetState}
	}
	m.Sync(want)
	holds := h.ensureAllTaskConfigs(ctx, m, conns)
	desired := map[v1.TaskID]planner.Desired{}
	reserved := h.reservedTopics(conns)
	for i, c := range conns {
		h.ensureConnectorStatus(c)
		hold := holds[i]
		if c.TargetState == records.TargetStopped || !h.ensureFenced(ctx, c) {
			continue
		}
		// A selector that does not parse places the tasks nowhere: running
		// them anywhere could run a file source on a host without its file.
		sel, selErr := labels.Parse(c.Config[labels.SelectorKey])
		var selError, class string
		if selErr != nil {
			selError = selErr.Error()
		}
		if p, ok := h.choosePlugin(c.Config); ok {
			class = p.placement()
		}
		// A change of the tenant's rules changes the hash, so the tasks
		// restart under them (and fail, with a trace, if they break them).
		policy := h.policyOf(c.Name)
		needs := ""
		if h.ownOffsetsTopic(c.Config) != "" {
			needs = v1.FeatureConnectorOffsetsTopic
		}
		for i, tc := range c.Tasks {
			id := v1.TaskID{Connector: c.Name, Task: i}
			desired[id] = planner.Desired{ID: id, ConnConfig: c.Config, TaskConfig: tc, Hash: configHash(c.Config, tc) + tenancy.Fingerprint(policy), Tenant: policy,
				Paused: c.TargetState == records.TargetPaused, Selector: sel, SelectorError: selError, Plugin: class, Needs: needs, Hold: hold, ReservedTopics: reserved}
		}
	}
	out := h.plan(desired, time.Now())
	h.sendRevokes(ctx, out.Revokes)
	h.sendAssigns(ctx, out.Assigns)
	h.writeTaskStatuses(out.Unassigned, out.Reasons, out.Removed)
}

// plan expires lost agents and runs the planner on the agents and
// placements of this instant, then installs the placements it computed.
// It holds the lock but does no I/O.
func (h *Herder) plan(desired map[v1.TaskID]planner.Desired, now time.Time) planner.Output {
	h.mu.Lock()
	defer h.mu.Unlock()
	var lost []string
	for _, a := range h.agents.Expire(now) {
		h.log.Warn("agent lost: lease expired", "agent", a.ID, "last_seen", a.LastSeen)
		h.cfg.Metrics.AgentLost(metrics.LostLease)
		lost = append(lost, a.ID)
	}
	// Java connectors on the lost agents start again elsewhere; the host
	// only marks them (no herder lock), their workers do the rest.
	h.agentsGone(lost)
	out := planner.Plan(planner.Input{Desired: desired, Agents: h.agents.Agents(), Placements: h.placed.All(), Generation: h.placed.Generation(),
		Cordoned: h.cordoned(), Moves: h.planMoves()})
	h.placed.Replace(out.Placements, out.Generation)
	return out
}

// sendRevokes stops tasks, all agents in parallel, and waits (bounded by the
// task shutdown timeout) so that a moved task stops before it starts again.
func (h *Herder) sendRevokes(ctx context.Context, revokes map[string][]v1.TaskID) {
	var wg sync.WaitGroup
	for agent, ids := range revokes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := h.revoke(ctx, agent, ids); err != nil {
				h.log.Warn("revoke failed", "agent", agent, "tasks", len(ids), "err", err)
			}
		}()
	}
	wg.Wait()
}

// revoke stops ids on agent, waiting up to the task shutdown timeout. It
// also voids every assignment of those tasks issued so far: one still in
// flight to the agent is refused when it arrives after the revoke.
func (h *Herder) revoke(ctx context.Context, agent string, ids []v1.TaskID) (v1.RevokeReply, error) {
	rctx, cancel := context.WithTimeout(ctx, h.cfg.TaskShutdownTimeout)
	defer cancel()
	h.mu.Lock()
	req := v1.RevokeRequest{Term: h.term.Load(), Tasks: ids, Generation: h.placed.Generation()}
	h.mu.Unlock()
	reply, err := h.rpc.Revoke(rctx, agent, req)
	if err == nil {
		h.mu.Lock()
		h.agents.ForgetReported(agent, reply.Stopped)
		h.mu.Unlock()
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
func (h *Herder) sendAssigns(ctx context.Context, assigns map[string][]v1.TaskAssignment) {
	if h.assignStopped.Load() {
		return
	}
	term := h.term.Load()
	for agent, tasks := range assigns {
		slot := &assignSlot{}
		if v, busy := h.assigning.LoadOrStore(agent, slot); busy {
			inFlight := v.(*assignSlot)
			inFlight.skipped.Store(true)
			if cur, ok := h.assigning.Load(agent); !ok || cur != inFlight {
				h.trigger() // answered meanwhile, perhaps before it saw the flag
			}
			continue
		}
		go func() {
			defer func() {
				h.assigning.Delete(agent)
				if slot.skipped.Load() {
					h.trigger()
				}
			}()
			actx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			h.mu.Lock()
			issued := h.placed.Generation()
			h.mu.Unlock()
			refused, failed := h.rpc.Assign(actx, agent, term, issued, tasks)
			if ctx.Err() == nil {
				for _, f := range failed {
					h.assignFailed(agent, f)
				}
			}
			if len(refused) > 0 {
				h.forgetRefused(agent, tasks, refused)
			}
		}()
	}
}

// assignSlot is an assignment in flight to an agent.
type assignSlot struct {
	// skipped: a pass had assignments for the agent and did not send them.
	skipped atomic.Bool
}

// forgetRefused drops the placements an agent refused (a revoke overtook
// them), unless they changed since, so that the next pass places those
// tasks again at a new generation instead of resending the void one.
func (h *Herder) forgetRefused(agent string, sent []v1.TaskAssignment, refused []v1.TaskID) {
	gens := make(map[v1.TaskID]int64, len(sent))
	for _, a := range sent {
		gens[a.ID] = a.Generation
	}
	h.mu.Lock()
	for _, id := range refused {
		h.placed.ForgetIf(id, agent, gens[id])
	}
	h.mu.Unlock()
	// Placed again at once the first time; refusals that repeat (a revoke
	// voided generations this leader has yet to issue) wait for the next
	// tick, and are logged once a period, so that they never loop hot.
	if h.warnDue("refused/" + agent) {
		h.log.Info("assignments refused: a revoke overtook them; placing them again", "agent", agent, "tasks", len(refused))
		h.trigger()
	}
}

// writeTaskStatuses marks tasks without an agent UNASSIGNED and removes the
// statuses of tasks that no longer exist. An UNASSIGNED task has no worker
// id: no agent runs it. (Kafka Connect shows the worker that last ran it,
// which writes UNASSIGNED as it lets the task go; the coordinator is no
// worker, and most of these tasks never ran anywhere.)
func (h *Herder) writeTaskStatuses(unassigned []v1.TaskID, reasons map[v1.TaskID]string, removed []v1.TaskID) {
	var recs []records.Record
	for _, id := range unassigned {
		st, ok := h.taskStatus(id.Connector, id.Task)
		if ok && st.State == v1.StateUnassigned && st.Trace == reasons[id] && st.WorkerID == "" {
			continue
		}
		// Keep the task's own generation: a cluster-wide one would be
		// higher than the generation its agent reports when it comes back
		// and adopts it, and that report would then be ignored.
		var gen int64
		if ok {
			gen = st.Generation
		}
		recs = append(recs, records.Record{Key: records.TaskStatusKey(id.Connector, id.Task), Value: records.EncodeStatus(v1.StateUnassigned, reasons[id], "", gen)})
	}
	for _, id := range removed {
		if _, ok := h.taskStatus(id.Connector, id.Task); ok {
			recs = append(recs, records.Record{Key: records.TaskStatusKey(id.Connector, id.Task)})
		}
	}
	h.queueStatus(recs...)
	// Statuses of tasks beyond a connector's current task count (it shrank,
	// or it stopped) are removed too.
	h.pruneTaskStatuses()
}

func (h *Herder) pruneTaskStatuses() {
	var recs []records.Record
	for conn := range h.statuses.State.TaskOwners() {
		c, ok := h.configs.State.Get(conn)
		n := 0
		if ok && c.TargetState != records.TargetStopped {
			n = len(c.Tasks)
		}
		for _, task := range h.statuses.State.TaskIDs(conn) {
			if task >= n {
				h.mu.Lock()
				placed := h.placed.Placed(v1.TaskID{Connector: conn, Task: task})
				h.mu.Unlock()
				if _, has := h.taskStatus(conn, task); !placed && has {
					recs = append(recs, records.Record{Key: records.TaskStatusKey(conn, task)})
				}
			}
		}
	}
	h.queueStatus(recs...)
}

// ensureFenced keeps Kafka Connect's exactly-once invariant: before the
// tasks of a new task count run, every transactional id an earlier
// generation may hold is fenced, and the tasks-fencing record then says the
// count that is safe to run. Without exactly-once support (or for sinks) it
// has nothing to do. It reports whether the tasks may run.
func (h *Herder) ensureFenced(ctx context.Context, c store.Connector) bool {
	if !h.cfg.ExactlyOnce || len(c.Tasks) == 0 || c.FencingCount == len(c.Tasks) {
		return true
	}
	if p, ok := h.pluginOf(c.Config); !ok || p.Kind != connect.KindSource {
		return true
	}
	req := v1.OffsetsRequest{Term: h.term.Load(), Connector: c.Name, Type: v1.TypeSource, Op: v1.OffsetsOpAlter, FenceIDs: h.offs.FenceIDs(c.Name, c)}
	if err := h.offs.Calls().Send(ctx, req); err != nil {
		h.log.Warn("fencing before the new tasks start failed; retrying", "connector", c.Name, "err", err)
		return false
	}
	if err := h.configs.Apply(ctx, store.PutFencingCount{Name: c.Name, Count: len(c.Tasks)}); err != nil {
		h.log.Warn("writing the task-count record failed; retrying", "connector", c.Name, "err", err)
		return false
	}
	return true
}

// ensureConnectorStatus keeps the connector's status in line with its target.
func (h *Herder) ensureConnectorStatus(c store.Connector) {
	want := map[string]string{records.TargetStarted: v1.StateRunning, records.TargetPaused: v1.StatePaused, records.TargetStopped: v1.StateStopped}[c.TargetState]
	st, ok := h.connectorStatus(c.Name)
	if ok && st.WorkerID == h.cfg.WorkerID && (st.State == want || st.State == v1.StateFailed && want == v1.StateRunning || st.State == v1.StateRestarting) {
		return
	}
	h.queueConnectorStatus(c.Name, want, "")
}

// queueConnectorStatus queues a connector's status record.
func (h *Herder) queueConnectorStatus(name, state, trace string) {
	h.queueStatus(connectorStatusRecord(name, state, trace, h.cfg.WorkerID))
}

func connectorStatusRecord(name, state, trace, workerID string) records.Record {
	return store.PutConnectorStatus{Name: name, State: state, Trace: trace, Worker: workerID}.Record()
}

// ensureTaskConfigs commits the task configs the connector's instance last
// computed, if they differ from the committed ones. The instances manager
// computes them only when they can change (a start, a config change, a
// restart, the connector's own request) and reports failures on the
// connector's status itself. It returns the connector as it now stands, and
// hold when its committed task configs are still not the ones its config
// calls for (its tasks are then left as they run until they are).
func (h *Herder) ensureTaskConfigs(ctx context.Context, m *instances.Manager, c store.Connector) (store.Connector, bool) {
	ts, ok := m.TaskConfigs(c.Name)
	if !ok || !ts.Current {
		return c, true // not computed yet for this config, or failing: keep what runs
	}
	if reflect.DeepEqual(ts.Configs, c.Tasks) {
		return c, false
	}
	unlock, ok := h.locks.TryLock(c.Name)
	if !ok {
		return c, true // a request holds the connector: the next pass retries
	}
	defer unlock()
	// Re-check under the lock: a stop or delete may have landed meanwhile.
	cur, ok := h.configs.State.Get(c.Name)
	if !ok || cur.Version != c.Version || cur.TargetState != records.TargetStarted {
		return c, true
	}
	if err := h.configs.Apply(ctx, store.PutTaskConfigs{Name: c.Name, Tasks: ts.Configs}); err != nil {
		h.log.Warn("writing task configs failed", "connector", c.Name, "err", err)
		return c, true
	}
	// Written and applied: plan with the new task configs in this pass.
	if cur, ok = h.configs.State.Get(c.Name); !ok {
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
func (h *Herder) ensureAllTaskConfigs(ctx context.Context, m *instances.Manager, conns []store.Connector) []bool {
	holds := make([]bool, len(conns))
	sem := make(chan struct{}, taskConfigWriters)
	var wg sync.WaitGroup
	for i := range conns {
		if conns[i].TargetState != records.TargetStarted {
			continue
		}
		if ts, ok := m.TaskConfigs(conns[i].Name); !ok || !ts.Current || reflect.DeepEqual(ts.Configs, conns[i].Tasks) {
			conns[i], holds[i] = h.ensureTaskConfigs(ctx, m, conns[i]) // nothing to write: no I/O
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			conns[i], holds[i] = h.ensureTaskConfigs(ctx, m, conns[i])
		}()
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
