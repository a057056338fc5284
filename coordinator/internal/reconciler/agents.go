package reconciler

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/agentrpc"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// Endpoints are the leader-only agent endpoints of one term, served on a
// NATS connection of their own when the reconciler can dial one.
type Endpoints struct {
	svc  micro.Service
	conn *nats.Conn // owned: closed with the endpoints; nil when shared
}

// Close stops the endpoints. Closing their own connection is what makes
// them surely gone: micro drains subscriptions, and one drained while NATS
// is away is sent to the server again on reconnect and never unsubscribed
// — it would swallow the requests of agents still on the old term.
func (a Endpoints) Close() {
	_ = a.svc.Stop()
	if a.conn != nil {
		a.conn.Close()
	}
}

// ServeAgents serves the leader-only endpoints of term.
func (r *Reconciler) ServeAgents(term int64) (Endpoints, error) {
	nc := r.cfg.NC
	var own *nats.Conn
	if r.cfg.DialNATS != nil {
		var err error
		if own, err = r.cfg.DialNATS(fmt.Sprintf("sluice-coordinator-term-%d", term)); err != nil {
			return Endpoints{}, fmt.Errorf("connect to NATS for the agent endpoints of term %d: %w", term, err)
		}
		nc = own
	}
	svc, err := agentrpc.Serve(nc, r.cfg.GroupID, term, agentrpc.Service{Version: r.cfg.Version, WorkerID: r.cfg.WorkerID}, agentrpc.Endpoints{
		Register:   endpoints{r}.registerEndpoint,
		Heartbeat:  endpoints{r}.heartbeatEndpoint,
		Deregister: endpoints{r}.deregisterEndpoint,
		Status:     endpoints{r}.statusEndpoint,
		// Connector events of Java connectors on agents' hosts.
		ConnectorEvent: endpoints{r}.connectorEventEndpoint,
	})
	if err != nil {
		if own != nil {
			own.Close()
		}
		return Endpoints{}, fmt.Errorf("serve the agent endpoints of term %d: %w", term, err)
	}
	return Endpoints{svc: svc, conn: own}, nil
}

// endpoints are the agent endpoints' handlers. They update memory and
// answer at once: status records go to the term's status queue, so a slow
// broker never holds a heartbeat (and so never costs an agent its lease).
type endpoints struct{ r *Reconciler }

// deregisterEndpoint forgets an agent that left gracefully (its tasks have
// stopped and committed), so the next reconcile places them elsewhere — or,
// when it was the last agent, keeps them for it (Table.leave).
func (e endpoints) deregisterEndpoint(ctx context.Context, req any) (any, error) {
	r := e.r
	q := req.(*wire.RegisterRequest)
	if err := q.Validate(); err != nil {
		return nil, err
	}
	r.table.leave(q.AgentID, r.now())
	r.cfg.Listener.AgentsGone([]string{q.AgentID})
	r.log.Info("agent left", "agent", q.AgentID)
	r.Trigger()
	return wire.HeartbeatReply{Level: wire.ProtocolLevel, Term: r.cfg.Term()}, nil
}

func (e endpoints) registerEndpoint(ctx context.Context, req any) (any, error) {
	r := e.r
	q := req.(*wire.RegisterRequest)
	if err := q.Validate(); err != nil {
		return nil, err
	}
	r.log.Info("agent registered", "agent", q.AgentID, "labels", q.Labels, "tasks", len(q.Tasks))
	r.Observe(q, true)
	r.cfg.Listener.Registered(q.AgentID)
	reply := wire.RegisterReply{Level: wire.ProtocolLevel, Term: r.cfg.Term(), LeaseMillis: r.cfg.AgentLease.Milliseconds()}
	if r.cfg.LivenessTopic != "" {
		reply.LivenessTopic, reply.LivenessMillis = r.cfg.LivenessTopic, LivenessEvery.Milliseconds()
	}
	return reply, nil
}

func (e endpoints) heartbeatEndpoint(ctx context.Context, req any) (any, error) {
	r := e.r
	q := req.(*wire.HeartbeatRequest)
	if err := q.Validate(); err != nil {
		return nil, err
	}
	if !r.Observe(q, false) {
		return wire.HeartbeatReply{Level: wire.ProtocolLevel, Term: r.cfg.Term(), Unknown: true}, nil
	}
	return wire.HeartbeatReply{Level: wire.ProtocolLevel, Term: r.cfg.Term()}, nil
}

// Observe records a registration or heartbeat, adopts the tasks the agent
// reports that nothing else is placed for (a restarted coordinator learns
// where tasks run), and queues their statuses. A heartbeat from an agent
// the coordinator does not know returns false: it must register.
// Reconcile runs again only when the report changed something.
func (r *Reconciler) Observe(q *wire.RegisterRequest, register bool) bool {
	o := r.table.observe(q, register, r.now())
	// A task at a generation never issued stays in the agent's report, so
	// that the planner replaces or revokes that instance as a zombie.
	for _, t := range o.forged {
		r.ignoreGeneration("heartbeat", q.AgentID, t.ID, t.Generation)
	}
	if !o.known {
		return false
	}
	if o.restarted {
		r.cfg.Listener.AgentsGone([]string{q.AgentID})
	}
	if o.changed {
		r.Trigger()
		if len(q.HostPlugins) > 0 {
			// A new agent with a host, or a host with new plugins: a
			// connector waiting for one need not wait out its backoff.
			r.cfg.Listener.HostAgentJoined()
		}
	}
	var recs []records.Record
	for _, t := range q.Tasks {
		recs = append(recs, r.taskStatusRecords(q.AgentID, t.ID, t.Generation, t.State, t.Trace, nil)...)
	}
	r.status.Queue(recs...)
	return true
}

func (e endpoints) statusEndpoint(ctx context.Context, req any) (any, error) {
	r := e.r
	q := req.(*wire.StatusReport)
	if err := q.Validate(); err != nil {
		return nil, err
	}
	if !r.table.Issued(q.Generation) {
		r.ignoreGeneration("status", q.AgentID, q.ID, q.Generation)
		return wire.StatusReply{}, nil
	}
	r.status.Queue(r.taskStatusRecords(q.AgentID, q.ID, q.Generation, q.State, q.Trace, q.Topics)...)
	if q.State != "" && q.State != api.StateUnassigned {
		r.confirmMove(q.AgentID, q.ID, q.Generation)
	}
	return wire.StatusReply{}, nil
}

// connectorEventEndpoint hands a Java connector's event to its instance.
func (e endpoints) connectorEventEndpoint(ctx context.Context, req any) (any, error) {
	r := e.r
	ev := req.(*wire.PluginConnectorEvent)
	if ev.Name == "" || ev.Kind == "" {
		return nil, api.Errorf(api.CodeBadRequest, "a connector event needs a connector name and a kind")
	}
	r.cfg.Listener.ConnectorEvent(*ev)
	return wire.StatusReply{}, nil
}

// taskStatusRecords returns the status-topic records that an agent's report
// of a task calls for: none when the report comes from an owner or
// generation that is no longer current, or says nothing new.
func (r *Reconciler) taskStatusRecords(agent string, id api.TaskID, gen int64, state, trace string, topics []string) []records.Record {
	p, ok := r.table.Placement(id)
	if !ok || p.Agent != agent || p.Generation != gen {
		return nil
	}
	st, has := r.status.Task(id.Connector, id.Task)
	return reportRecords(agent, id, gen, state, trace, topics, st, has, r.cfg.Statuses.Topics(id.Connector), r.now())
}

// reportRecords decides the records of a current owner's report of task
// id: its status when it says something new (cur, has: what the leader
// last decided), and a record for each topic not yet known to be used.
func reportRecords(agent string, id api.TaskID, gen int64, state, trace string, topics []string, cur store.InstanceStatus, has bool, knownTopics []string, now time.Time) []records.Record {
	var recs []records.Record
	if !has || cur.State != state || cur.Trace != trace || cur.WorkerID != agent || cur.Generation != gen {
		if state != "" && state != api.StateUnassigned {
			recs = append(recs, store.PutTaskStatus{Connector: id.Connector, Task: id.Task, State: state, Trace: trace, Worker: agent, Generation: gen}.Record())
		}
	}
	known := map[string]bool{}
	for _, t := range knownTopics {
		known[t] = true
	}
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
