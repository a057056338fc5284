package herder

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/coordinator/internal/agentrpc"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
)

// agentEndpoints are the leader-only endpoints of one term, served on a
// NATS connection of their own when the herder can dial one.
type agentEndpoints struct {
	svc  micro.Service
	conn *nats.Conn // owned: closed with the endpoints; nil when shared
}

// close stops the endpoints. Closing their own connection is what makes
// them surely gone: micro drains subscriptions, and one drained while NATS
// is away is sent to the server again on reconnect and never unsubscribed
// — it would swallow the requests of agents still on the old term.
func (a agentEndpoints) close() {
	_ = a.svc.Stop()
	if a.conn != nil {
		a.conn.Close()
	}
}

// serveAgents serves the leader-only endpoints of term.
func (h *Herder) serveAgents(term int64) (agentEndpoints, error) {
	nc := h.nc
	var own *nats.Conn
	if h.cfg.DialNATS != nil {
		var err error
		if own, err = h.cfg.DialNATS(fmt.Sprintf("sluice-coordinator-term-%d", term)); err != nil {
			return agentEndpoints{}, fmt.Errorf("connect to NATS for the agent endpoints of term %d: %w", term, err)
		}
		nc = own
	}
	svc, err := agentrpc.Serve(nc, h.cfg.GroupID, term, agentrpc.Service{Version: h.cfg.Version, WorkerID: h.cfg.WorkerID, Logger: h.log}, agentrpc.Endpoints{
		Register:   h.registerEndpoint,
		Heartbeat:  h.heartbeatEndpoint,
		Deregister: h.deregisterEndpoint,
		Status:     h.statusEndpoint,
		// Connector events of Java connectors on agents' hosts.
		ConnectorEvent: h.connectorEventEndpoint,
	})
	if err != nil {
		if own != nil {
			own.Close()
		}
		return agentEndpoints{}, err
	}
	return agentEndpoints{svc: svc, conn: own}, nil
}

// The agent endpoints below update memory and answer at once: status
// records go to the leadership's status queue, so a slow broker never holds
// a heartbeat (and so never costs an agent its lease).

// deregisterEndpoint forgets an agent that left gracefully (its tasks have
// stopped and committed), so the next reconcile places them elsewhere.
func (h *Herder) deregisterEndpoint(ctx context.Context, req any) (any, error) {
	r := req.(*v1.RegisterRequest)
	if err := r.Validate(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.agents.Remove(r.AgentID)
	h.mu.Unlock()
	h.agentsGone([]string{r.AgentID})
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
	h.loggersRegistered(r.AgentID)
	reply := v1.RegisterReply{Type: v1.TypeRegisterReply, Term: h.term.Load(), LeaseMillis: h.cfg.AgentLease.Milliseconds()}
	if h.cfg.LivenessTopic != "" {
		reply.LivenessTopic, reply.LivenessMillis = h.cfg.LivenessTopic, livenessEvery.Milliseconds()
	}
	return reply, nil
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

// observeAgent records a registration or heartbeat, adopts the tasks the
// agent reports that nothing else is placed for (a restarted coordinator
// learns where tasks run), and queues their statuses. A heartbeat from an
// agent the coordinator does not know returns false: it must register.
// Reconcile runs again only when the report changed something.
func (h *Herder) observeAgent(r *v1.RegisterRequest, register bool) bool {
	h.mu.Lock()
	prev, wasKnown := h.agents.Get(r.AgentID)
	known, changed := h.agents.Observe(r, register, time.Now())
	// An agent that registers again with a later start is a new process:
	// the connectors its old host ran are gone with it, though no lease ran
	// out (it came back within it).
	restarted := known && register && wasKnown && prev.Registered && !r.StartedAt.IsZero() && !prev.StartedAt.Equal(r.StartedAt)
	if known {
		h.rememberHostPlugins(r.HostPlugins)
	}
	var forged []v1.RunningTask
	if known {
		for _, t := range r.Tasks {
			if !h.placed.Adopt(r.AgentID, t) {
				forged = append(forged, t)
			}
		}
	}
	h.mu.Unlock()
	// A task at a generation never issued stays in the agent's report, so
	// that the planner replaces or revokes that instance as a zombie.
	for _, t := range forged {
		h.ignoreGeneration("heartbeat", r.AgentID, t.ID, t.Generation)
	}
	if !known {
		return false
	}
	if restarted {
		h.agentsGone([]string{r.AgentID})
	}
	if changed {
		h.trigger()
		if len(r.HostPlugins) > 0 {
			// A new agent with a host, or a host with new plugins: a
			// connector waiting for one need not wait out its backoff.
			h.hostAgentJoined()
		}
	}
	var recs []records.Record
	for _, t := range r.Tasks {
		recs = append(recs, h.taskStatusRecords(r.AgentID, t.ID, t.Generation, t.State, t.Trace, nil)...)
	}
	h.queueStatus(recs...)
	return true
}

func (h *Herder) statusEndpoint(ctx context.Context, req any) (any, error) {
	r := req.(*v1.StatusReport)
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if !h.issuedGeneration(r.Generation) {
		h.ignoreGeneration("status", r.AgentID, r.ID, r.Generation)
		return v1.StatusReply{Type: v1.TypeStatusReply}, nil
	}
	h.queueStatus(h.taskStatusRecords(r.AgentID, r.ID, r.Generation, r.State, r.Trace, r.Topics)...)
	if r.State != "" && r.State != v1.StateUnassigned {
		h.confirmMove(r.AgentID, r.ID, r.Generation)
	}
	return v1.StatusReply{Type: v1.TypeStatusReply}, nil
}

// connectorEventEndpoint hands a Java connector's event to its instance.
func (h *Herder) connectorEventEndpoint(ctx context.Context, req any) (any, error) {
	ev := req.(*v1.PluginConnectorEvent)
	if ev.Name == "" || ev.Kind == "" {
		return nil, v1.Errorf(v1.CodeBadRequest, "a connector event needs a connector name and a kind")
	}
	if remote := h.remote.Load(); remote != nil {
		h.log.Debug("connector event", "agent", ev.AgentID, "connector", ev.Name, "kind", ev.Kind)
		remote.Event(*ev)
	}
	return v1.StatusReply{Type: v1.TypeStatusReply}, nil
}

// hostAgentJoined starts at once the Java connectors that found no agent
// with their plugin, now that an agent with Java plugins registered or
// changed them: waiting out their backoff would leave them down for up to
// a minute with an agent able to run them.
func (h *Herder) hostAgentJoined() {
	remote, m := h.remote.Load(), h.instances.Load()
	if remote == nil || m == nil {
		return
	}
	for _, name := range remote.Waiting() {
		m.Restart(name)
	}
}

// agentsGone tells the host of Java connectors that agents left or lost
// their leases: the connectors they ran start again on other agents.
func (h *Herder) agentsGone(ids []string) {
	if remote := h.remote.Load(); remote != nil && len(ids) > 0 {
		remote.AgentsGone(ids)
	}
}

// taskStatusRecords returns the status-topic records that an agent's report
// of a task calls for: none when the report comes from an owner or
// generation that is no longer current, or says nothing new.
func (h *Herder) taskStatusRecords(agent string, id v1.TaskID, gen int64, state, trace string, topics []string) []records.Record {
	h.mu.Lock()
	p, ok := h.placed.Get(id)
	h.mu.Unlock()
	if !ok || p.Agent != agent || p.Generation != gen {
		return nil
	}
	var recs []records.Record
	if st, ok := h.taskStatus(id.Connector, id.Task); !ok || st.State != state || st.Trace != trace || st.WorkerID != agent || st.Generation != gen {
		if state != "" && state != v1.StateUnassigned {
			recs = append(recs, store.PutTaskStatus{Connector: id.Connector, Task: id.Task, State: state, Trace: trace, Worker: agent, Generation: gen}.Record())
		}
	}
	known := map[string]bool{}
	for _, t := range h.statuses.State.Topics(id.Connector) {
		known[t] = true
	}
	now := time.Now()
	for _, t := range topics {
		// A topic name longer than Kafka's limit is no topic a task used
		// (MarkTopicUse.Valid).
		use := store.MarkTopicUse{Connector: id.Connector, Task: id.Task, Topic: t, At: now}
		if !known[t] && use.Valid() == nil {
			recs = append(recs, use.Record())
		}
	}
	return recs
}

// adoptFromStatus presumes that the agents named in the status topic still
// run their tasks, so a restarted coordinator neither marks them unassigned
// nor places them elsewhere before those agents had a chance to report.
func (h *Herder) adoptFromStatus(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.placed.ObserveGeneration(h.statuses.State.MaxGeneration())
	for conn, tasks := range h.statuses.State.TaskOwners() {
		for n, st := range tasks {
			if st.State != v1.StateRunning && st.State != v1.StatePaused && st.State != v1.StateFailed {
				continue
			}
			h.agents.Presume(st.WorkerID, now)
			h.placed.Presume(v1.TaskID{Connector: conn, Task: n}, st.WorkerID, st.Generation)
		}
	}
}

// RegisteredAgents counts the agents that registered and hold a lease.
func (h *Herder) RegisteredAgents() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.agents.Registered())
}
