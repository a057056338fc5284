package herder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/coordinator/internal/scheduler"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/labels"
	"github.com/sluice-io/sluice/shared/natsrpc"
	"github.com/sluice-io/sluice/shared/records"
)

// desiredTask is a task that should run, from the committed configs.
type desiredTask struct {
	id         v1.TaskID
	connConfig map[string]string
	taskConfig map[string]string
	hash       string
	paused     bool
	selector   map[string]string
	// hold keeps a running task as it is: its connector's new task configs
	// are not committed yet, and restarting it now with the old ones would
	// only restart it again once they are.
	hold bool
}

// reconcileLoop reconciles until ctx ends (leadership is revoked).
func (h *Herder) reconcileLoop(ctx context.Context) {
	tick := time.NewTicker(max(h.cfg.AgentLease/4, 50*time.Millisecond))
	defer tick.Stop()
	for {
		changed := h.configs.State.Changed()
		h.reconcile(ctx)
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-h.kick:
		case <-tick.C:
		}
	}
}

// reconcile makes the world match the committed configs: connector statuses,
// task configs of started connectors, and the placement of every task.
func (h *Herder) reconcile(ctx context.Context) {
	h.ensureWriter(ctx)
	conns := h.configs.State.All()
	desired := map[v1.TaskID]desiredTask{}
	for _, c := range conns {
		h.ensureConnectorStatus(ctx, c)
		hold := false
		if c.TargetState == records.TargetStarted {
			c, hold = h.ensureTaskConfigs(ctx, c)
		}
		if c.TargetState == records.TargetStopped || !h.ensureFenced(ctx, c) {
			continue
		}
		sel, _ := labels.Parse(c.Config[labels.SelectorKey])
		for i, tc := range c.Tasks {
			id := v1.TaskID{Connector: c.Name, Task: i}
			desired[id] = desiredTask{id: id, connConfig: c.Config, taskConfig: tc, hash: configHash(c.Config, tc),
				paused: c.TargetState == records.TargetPaused, selector: sel, hold: hold}
		}
	}
	assigns, revokes, unassigned, removed := h.plan(desired, time.Now())
	h.sendRevokes(ctx, revokes)
	h.sendAssigns(ctx, assigns)
	h.writeTaskStatuses(ctx, unassigned, removed)
}

// plan expires lost agents, runs the scheduler and works out the commands
// to send. It holds the lock but does no I/O.
func (h *Herder) plan(desired map[v1.TaskID]desiredTask, now time.Time) (assigns map[string][]v1.TaskAssignment, revokes map[string][]v1.TaskID, unassigned, removed []v1.TaskID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	assigns, revokes = map[string][]v1.TaskAssignment{}, map[string][]v1.TaskID{}
	for id, a := range h.agents {
		if now.Sub(a.lastSeen) > h.cfg.AgentLease {
			h.log.Warn("agent lost: lease expired", "agent", id, "last_seen", a.lastSeen)
			delete(h.agents, id)
		}
	}
	var live []scheduler.Agent
	for _, a := range h.agents {
		if a.registered {
			live = append(live, scheduler.Agent{ID: a.id, Labels: a.labels})
		}
	}
	current := map[v1.TaskID]string{}
	var tasks []scheduler.Task
	for id, d := range desired {
		p := h.placed[id]
		if p != nil {
			if a := h.agents[p.agent]; a != nil && !a.registered {
				continue // presumed running on an agent not yet heard from
			}
			current[id] = p.agent
		}
		tasks = append(tasks, scheduler.Task{ID: id, Selector: d.selector})
	}
	target := scheduler.Assign(tasks, live, current)

	// Tasks that must stop where they are: no longer desired, moved, or
	// their agent is gone.
	for id, p := range h.placed {
		_, want := desired[id]
		a := h.agents[p.agent]
		if a != nil && !a.registered && want {
			continue
		}
		if agent, ok := target[id]; want && ok && agent == p.agent {
			continue
		}
		if a != nil {
			revokes[p.agent] = append(revokes[p.agent], id)
		}
		delete(h.placed, id)
		if !want {
			removed = append(removed, id)
		}
	}
	for id, d := range desired {
		agent, ok := target[id]
		if !ok {
			if p := h.placed[id]; p == nil {
				unassigned = append(unassigned, id)
			}
			continue
		}
		p := h.placed[id]
		a := h.agents[agent]
		switch {
		case p != nil && d.hold && p.paused == d.paused:
			continue
		case p == nil || p.hash != d.hash:
			h.gen++
			p = &placement{agent: agent, generation: h.gen, hash: d.hash, paused: d.paused}
			h.placed[id] = p
		case p.paused != d.paused:
			p.paused = d.paused
		default:
			// Resend only what the agent does not report running at this generation.
			if rt, ok := a.reported[id]; ok && rt.Generation == p.generation && (rt.State == v1.StatePaused) == p.paused {
				continue
			}
		}
		assigns[agent] = append(assigns[agent], v1.TaskAssignment{ID: id, Generation: p.generation, ConnectorConfig: d.connConfig,
			TaskConfig: d.taskConfig, ConfigHash: d.hash, Paused: d.paused})
	}
	// Tasks an agent runs that are not placed on it: zombies. (A task placed
	// on it at a newer generation is restarted by its assignment instead.)
	for _, a := range h.agents {
		if !a.registered {
			continue
		}
		for id := range a.reported {
			if p := h.placed[id]; (p == nil || p.agent != a.id) && !containsTask(revokes[a.id], id) {
				revokes[a.id] = append(revokes[a.id], id)
			}
		}
	}
	return assigns, revokes, unassigned, removed
}

func containsTask(ids []v1.TaskID, id v1.TaskID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
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
	req := v1.RevokeRequest{Term: h.term.Load(), Tasks: ids, Generation: h.gen}
	h.mu.Unlock()
	var reply v1.RevokeReply
	err := natsrpc.Call(rctx, h.nc, v1.AgentSubject(v1.SubjectAgentRevoke, h.cfg.GroupID, agent), req, &reply)
	if err == nil {
		h.mu.Lock()
		if a := h.agents[agent]; a != nil {
			for _, id := range reply.Stopped {
				delete(a.reported, id)
			}
		}
		h.mu.Unlock()
	}
	return reply, err
}

// sendAssigns sends each agent its assignments without waiting for the
// answers: an agent that hangs (paused, partitioned) must not hold up the
// reconcile loop, which also notices lost agents. Assignments are
// idempotent, and one still in flight to an agent is not sent again; a lost
// one is sent again when the agent's next heartbeat shows the task missing.
func (h *Herder) sendAssigns(ctx context.Context, assigns map[string][]v1.TaskAssignment) {
	term := h.term.Load()
	for agent, tasks := range assigns {
		if _, busy := h.assigning.LoadOrStore(agent, true); busy {
			continue
		}
		go func() {
			defer h.assigning.Delete(agent)
			actx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			var reply v1.AssignReply
			err := natsrpc.Call(actx, h.nc, v1.AgentSubject(v1.SubjectAgentAssign, h.cfg.GroupID, agent), v1.AssignRequest{Term: term, Tasks: tasks}, &reply)
			if err != nil && ctx.Err() == nil {
				h.log.Warn("assign failed", "agent", agent, "tasks", len(tasks), "err", err)
			}
			if len(reply.Refused) > 0 {
				h.forgetRefused(agent, tasks, reply.Refused)
			}
		}()
	}
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
		if p := h.placed[id]; p != nil && p.agent == agent && p.generation == gens[id] {
			delete(h.placed, id)
		}
	}
	h.mu.Unlock()
	h.log.Info("assignments refused: a revoke overtook them; placing them again", "agent", agent, "tasks", len(refused))
	h.trigger()
}

// writeTaskStatuses marks tasks without an agent UNASSIGNED and removes the
// statuses of tasks that no longer exist.
func (h *Herder) writeTaskStatuses(ctx context.Context, unassigned, removed []v1.TaskID) {
	var recs []records.Record
	for _, id := range unassigned {
		if st, ok := h.statuses.State.Task(id.Connector, id.Task); ok && st.State == v1.StateUnassigned {
			continue
		}
		// Keep the task's own generation: a cluster-wide one would be
		// higher than the generation its agent reports when it comes back
		// and adopts it, and that report would then be ignored.
		var gen int64
		if st, ok := h.statuses.State.Task(id.Connector, id.Task); ok {
			gen = st.Generation
		}
		recs = append(recs, records.Record{Key: records.TaskStatusKey(id.Connector, id.Task), Value: records.EncodeStatus(v1.StateUnassigned, "", h.cfg.WorkerID, gen)})
	}
	for _, id := range removed {
		if _, ok := h.statuses.State.Task(id.Connector, id.Task); ok {
			recs = append(recs, records.Record{Key: records.TaskStatusKey(id.Connector, id.Task)})
		}
	}
	if err := h.statuses.Write(ctx, recs...); err != nil {
		h.log.Warn("status write failed", "err", err)
	}
	// Statuses of tasks beyond a connector's current task count (it shrank,
	// or it stopped) are removed too.
	h.pruneTaskStatuses(ctx)
}

func (h *Herder) pruneTaskStatuses(ctx context.Context) {
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
				_, placed := h.placed[v1.TaskID{Connector: conn, Task: task}]
				h.mu.Unlock()
				if !placed {
					recs = append(recs, records.Record{Key: records.TaskStatusKey(conn, task)})
				}
			}
		}
	}
	if err := h.statuses.Write(ctx, recs...); err != nil {
		h.log.Warn("status prune failed", "err", err)
	}
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
	req := v1.OffsetsRequest{Term: h.term.Load(), Connector: c.Name, Type: v1.TypeSource, Op: v1.OffsetsOpAlter, FenceIDs: h.fenceIDs(c.Name, c)}
	if err := h.sendOffsets(ctx, req); err != nil {
		h.log.Warn("fencing before the new tasks start failed; retrying", "connector", c.Name, "err", err)
		return false
	}
	if err := h.configs.Write(ctx, records.Record{Key: records.FencingKey(c.Name), Value: records.EncodeFencing(len(c.Tasks))}); err != nil {
		h.log.Warn("writing the task-count record failed; retrying", "connector", c.Name, "err", err)
		return false
	}
	return true
}

// ensureConnectorStatus keeps the connector's status in line with its target.
func (h *Herder) ensureConnectorStatus(ctx context.Context, c store.Connector) {
	want := map[string]string{records.TargetStarted: v1.StateRunning, records.TargetPaused: v1.StatePaused, records.TargetStopped: v1.StateStopped}[c.TargetState]
	st, ok := h.statuses.State.Connector(c.Name)
	if ok && st.WorkerID == h.cfg.WorkerID && (st.State == want || st.State == v1.StateFailed && want == v1.StateRunning || st.State == v1.StateRestarting) {
		return
	}
	h.writeConnectorStatus(ctx, c.Name, want, "")
}

func (h *Herder) writeConnectorStatus(ctx context.Context, name, state, trace string) {
	rec := records.Record{Key: records.ConnectorStatusKey(name), Value: records.EncodeStatus(state, trace, h.cfg.WorkerID, 0)}
	if err := h.statuses.Write(ctx, rec); err != nil {
		h.log.Warn("connector status write failed", "connector", name, "err", err)
	}
}

// ensureTaskConfigs runs the connector's task split and commits the task
// configs if they changed. A failure marks the connector FAILED. It returns
// the connector as it now stands, and hold when its committed task configs
// are still not the ones its config calls for (its tasks are then left as
// they run until they are).
func (h *Herder) ensureTaskConfigs(ctx context.Context, c store.Connector) (store.Connector, bool) {
	tasks, err := h.generateTaskConfigs(c.Config)
	if err != nil {
		h.writeConnectorStatus(ctx, c.Name, v1.StateFailed, err.Error())
		return c, false
	}
	if reflect.DeepEqual(tasks, c.Tasks) {
		if st, ok := h.statuses.State.Connector(c.Name); ok && st.State == v1.StateFailed {
			h.writeConnectorStatus(ctx, c.Name, v1.StateRunning, "")
		}
		return c, false
	}
	unlock, ok := h.tryLock(c.Name)
	if !ok {
		return c, true // a request holds the connector: the next pass retries
	}
	defer unlock()
	// Re-check under the lock: a stop or delete may have landed meanwhile.
	cur, ok := h.configs.State.Get(c.Name)
	if !ok || cur.Version != c.Version || cur.TargetState != records.TargetStarted {
		return c, true
	}
	if err := h.configs.Write(ctx, taskConfigRecords(c.Name, tasks)...); err != nil {
		h.log.Warn("writing task configs failed", "connector", c.Name, "err", err)
		return c, true
	}
	// Written and applied: plan with the new task configs in this pass.
	if cur, ok = h.configs.State.Get(c.Name); !ok {
		return c, true
	}
	return cur, !reflect.DeepEqual(tasks, cur.Tasks)
}

// generateTaskConfigs asks the connector plugin for its task configs, and
// adds what Kafka Connect adds: task.class, and a sink's topic selection.
func (h *Herder) generateTaskConfigs(props map[string]string) ([]map[string]string, error) {
	class := props["connector.class"]
	p, ok := h.reg.Lookup(class)
	if !ok {
		return nil, v1.Errorf(v1.CodeBadRequest, "Failed to find any class that implements Connector and which name matches %s", class)
	}
	maxTasks := 1
	if s := strings.TrimSpace(props["tasks.max"]); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			maxTasks = n
		}
	}
	conn := p.NewConnector()
	tasks, err := conn.TaskConfigs(props, maxTasks)
	if err != nil {
		return nil, err
	}
	_, isSink := conn.(connect.SinkConnector)
	out := make([]map[string]string, len(tasks))
	for i, tc := range tasks {
		m := maps.Clone(tc)
		if m == nil {
			m = map[string]string{}
		}
		m["task.class"] = strings.TrimSuffix(p.Class, "Connector") + "Task"
		if isSink {
			for _, k := range []string{"topics", "topics.regex"} {
				if v, ok := props[k]; ok {
					m[k] = v
				}
			}
		}
		out[i] = m
	}
	return out, nil
}

// taskConfigRecords writes a task set the way Kafka Connect does: every task
// config, then the commit record that makes them take effect together.
func taskConfigRecords(name string, tasks []map[string]string) []records.Record {
	recs := make([]records.Record, 0, len(tasks)+1)
	for i, tc := range tasks {
		recs = append(recs, records.Record{Key: records.TaskKey(name, i), Value: records.EncodeProperties(tc)})
	}
	return append(recs, records.Record{Key: records.CommitKey(name), Value: records.EncodeCommit(len(tasks))})
}

// configHash identifies a task's connector and task config, so a change of
// either restarts the task with a new generation.
func configHash(conn, task map[string]string) string {
	b, _ := json.Marshal([]map[string]string{conn, task})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
