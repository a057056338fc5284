package herder

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/micro"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/shared/natsrpc"
	"github.com/sluice-io/sluice/shared/records"
)

// agentInfo is what the coordinator knows of an agent.
type agentInfo struct {
	id     string
	labels map[string]string
	// registered is false for an agent only presumed alive because the
	// status topic says it ran tasks; it gets no new tasks until it registers.
	registered bool
	lastSeen   time.Time
	// reported is the agent's last account of its tasks.
	reported map[v1.TaskID]v1.RunningTask
}

// placement is where a task runs and which generation of it.
type placement struct {
	agent      string
	generation int64
	hash       string
	paused     bool
}

// serveAgents serves the leader-only endpoints on the subjects of term: a
// deposed leader's subscriptions name an older term, so agents that read the
// current lease never reach them.
func (h *Herder) serveAgents(term int64) (micro.Service, error) {
	svc, err := micro.AddService(h.nc, micro.Config{
		Name:        "sluice-leader",
		Version:     h.cfg.Version,
		Description: "Sluice coordinator, leader endpoints",
		Metadata:    map[string]string{"worker_id": h.cfg.WorkerID, "term": strconv.FormatInt(term, 10)},
		QueueGroup:  v1.QueueGroup(h.cfg.GroupID),
	})
	if err != nil {
		return nil, fmt.Errorf("serve agent endpoints: %w", err)
	}
	mounts := []struct {
		name, subject string
		ep            func(context.Context, any) (any, error)
		req           func() any
	}{
		{"register", v1.SubjectLeaderRegister, h.registerEndpoint, func() any { return &v1.RegisterRequest{} }},
		{"heartbeat", v1.SubjectLeaderHeartbeat, h.heartbeatEndpoint, func() any { return &v1.HeartbeatRequest{} }},
		{"deregister", v1.SubjectLeaderDeregister, h.deregisterEndpoint, func() any { return &v1.RegisterRequest{} }},
		{"status", v1.SubjectLeaderStatus, h.statusEndpoint, func() any { return &v1.StatusReport{} }},
	}
	for _, m := range mounts {
		if err := natsrpc.Mount(svc, m.name, v1.LeaderSubject(m.subject, h.cfg.GroupID, term), m.ep, m.req); err != nil {
			_ = svc.Stop()
			return nil, err
		}
	}
	if err := h.refuseLegacyAgents(svc, term); err != nil {
		_ = svc.Stop()
		return nil, err
	}
	return svc, nil
}

// deregisterEndpoint forgets an agent that left gracefully (its tasks have
// stopped and committed), so the next reconcile places them elsewhere.
func (h *Herder) deregisterEndpoint(ctx context.Context, req any) (any, error) {
	r := req.(*v1.RegisterRequest)
	if err := r.Validate(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	delete(h.agents, r.AgentID)
	h.mu.Unlock()
	h.log.Info("agent left", "agent", r.AgentID)
	h.trigger()
	return v1.HeartbeatReply{Type: v1.TypeHeartbeatReply, Term: h.term.Load()}, nil
}

func (h *Herder) registerEndpoint(ctx context.Context, req any) (any, error) {
	r := req.(*v1.RegisterRequest)
	if err := r.Validate(); err != nil {
		return nil, err
	}
	h.log.Info("agent registered", "agent", r.AgentID, "labels", r.Labels, "tasks", len(r.Tasks))
	h.observeAgent(r, true)
	return v1.RegisterReply{Type: v1.TypeRegisterReply, Term: h.term.Load(), LeaseMillis: h.cfg.AgentLease.Milliseconds()}, nil
}

func (h *Herder) heartbeatEndpoint(ctx context.Context, req any) (any, error) {
	r := req.(*v1.HeartbeatRequest)
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if !h.observeAgent(r, false) {
		return v1.HeartbeatReply{Type: v1.TypeHeartbeatReply, Term: h.term.Load(), Unknown: true}, nil
	}
	return v1.HeartbeatReply{Type: v1.TypeHeartbeatReply, Term: h.term.Load()}, nil
}

// observeAgent records a registration or heartbeat. A heartbeat from an
// agent the coordinator does not know returns false: it must register.
func (h *Herder) observeAgent(r *v1.RegisterRequest, register bool) bool {
	h.mu.Lock()
	a := h.agents[r.AgentID]
	if a == nil || (!register && !a.registered) {
		if !register {
			h.mu.Unlock()
			return false
		}
		a = &agentInfo{id: r.AgentID}
		h.agents[r.AgentID] = a
	}
	a.registered = true
	a.labels = maps.Clone(r.Labels)
	a.lastSeen = time.Now()
	a.reported = make(map[v1.TaskID]v1.RunningTask, len(r.Tasks))
	for _, t := range r.Tasks {
		a.reported[t.ID] = t
		if t.Generation > h.gen {
			h.gen = t.Generation
		}
		p := h.placed[t.ID]
		switch {
		case p == nil:
			// Adopt: a restarted coordinator learns where tasks run.
			h.placed[t.ID] = &placement{agent: a.id, generation: t.Generation, hash: t.ConfigHash}
		case p.agent == a.id && p.generation == t.Generation && p.hash == "":
			// Adopted from the status topic: the agent now says which config it runs.
			p.hash = t.ConfigHash
		}
	}
	h.mu.Unlock()
	h.trigger()
	// One write for the whole report: an agent whose hundred tasks all
	// changed state (a resume, a restart) costs one status-topic write, not
	// a hundred in a row while other agents' heartbeats wait.
	var recs []records.Record
	for _, t := range r.Tasks {
		recs = append(recs, h.taskStatusRecords(r.AgentID, t.ID, t.Generation, t.State, t.Trace, nil)...)
	}
	h.writeStatus(recs, "agent", r.AgentID)
	return true
}

func (h *Herder) statusEndpoint(ctx context.Context, req any) (any, error) {
	r := req.(*v1.StatusReport)
	if err := r.Validate(); err != nil {
		return nil, err
	}
	h.recordTaskStatus(r.AgentID, r.ID, r.Generation, r.State, r.Trace, r.Topics)
	return v1.StatusReply{Type: v1.TypeStatusReply}, nil
}

// recordTaskStatus writes an agent's report of a task to the status topic,
// unless it comes from an owner or generation that is no longer current.
func (h *Herder) recordTaskStatus(agent string, id v1.TaskID, gen int64, state, trace string, topics []string) {
	h.writeStatus(h.taskStatusRecords(agent, id, gen, state, trace, topics), "task", id.String())
}

// taskStatusRecords returns the status-topic records that an agent's report
// of a task calls for: none when the report comes from an owner or
// generation that is no longer current, or says nothing new.
func (h *Herder) taskStatusRecords(agent string, id v1.TaskID, gen int64, state, trace string, topics []string) []records.Record {
	h.mu.Lock()
	p := h.placed[id]
	current := p != nil && p.agent == agent && p.generation == gen
	h.mu.Unlock()
	if !current {
		return nil
	}
	var recs []records.Record
	if st, ok := h.statuses.State.Task(id.Connector, id.Task); !ok || st.State != state || st.Trace != trace || st.WorkerID != agent || st.Generation != gen {
		if state != "" && state != v1.StateUnassigned {
			recs = append(recs, records.Record{Key: records.TaskStatusKey(id.Connector, id.Task), Value: records.EncodeStatus(state, trace, agent, gen)})
		}
	}
	known := map[string]bool{}
	for _, t := range h.statuses.State.Topics(id.Connector) {
		known[t] = true
	}
	for _, t := range topics {
		if !known[t] {
			recs = append(recs, records.Record{Key: records.TopicStatusKey(id.Connector, t), Value: records.EncodeTopicUse(records.TopicUse{
				Name: t, Connector: id.Connector, Task: id.Task, DiscoverTimestamp: time.Now().UnixMilli(),
			})})
		}
	}
	return recs
}

// writeStatus writes recs to the status topic; a failure is logged with
// whose report it was (the next report that differs writes again).
func (h *Herder) writeStatus(recs []records.Record, kind, who string) {
	if len(recs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.statuses.Write(ctx, recs...); err != nil {
		h.log.Warn("status write failed", kind, who, "err", err)
	}
}

// adoptFromStatus presumes that the agents named in the status topic still
// run their tasks, so a restarted coordinator neither marks them unassigned
// nor places them elsewhere before those agents had a chance to report.
func (h *Herder) adoptFromStatus(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if g := h.statuses.State.MaxGeneration(); g > h.gen {
		h.gen = g
	}
	for conn, tasks := range h.statuses.State.TaskOwners() {
		for n, st := range tasks {
			if st.State != v1.StateRunning && st.State != v1.StatePaused && st.State != v1.StateFailed {
				continue
			}
			a := h.agents[st.WorkerID]
			if a == nil {
				a = &agentInfo{id: st.WorkerID, lastSeen: now}
				h.agents[st.WorkerID] = a
			}
			h.placed[v1.TaskID{Connector: conn, Task: n}] = &placement{agent: st.WorkerID, generation: st.Generation}
		}
	}
}

// RegisteredAgents counts the agents that registered and hold a lease.
func (h *Herder) RegisteredAgents() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, a := range h.agents {
		if a.registered {
			n++
		}
	}
	return n
}
