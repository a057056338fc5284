// Package transport connects an agent to the coordinator over NATS: it
// serves the agent's endpoints (assign, revoke) with nats.go micro, and keeps
// a session with the leader (register, heartbeat, status reports).
//
//	start ─► register (retry with backoff) ─► heartbeat every lease/3 ─┐
//	             ▲                                                      │
//	             └──────── reply says "unknown" or the leader is gone ◄─┘
//
// Tasks keep running while no coordinator answers.
package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/go-kit/kit/endpoint"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/leasetrust"
	"github.com/sluice-io/sluice/shared/logthrottle"
	"github.com/sluice-io/sluice/shared/natsrpc"
	"github.com/sluice-io/sluice/shared/waker"
	"github.com/sluice-io/sluice/shared/wire"
)

// Worker is what the transport drives.
type Worker interface {
	Assign(ctx context.Context, term int64, assignments []wire.TaskAssignment) (refused []api.TaskID)
	// ObserveIssued records the highest generation the leader of term says
	// it issued (wire.AssignRequest.Issued).
	ObserveIssued(term, issued int64)
	// Revoke stops ids and voids their assignments of term at generation
	// voidGen or older (wire.RevokeRequest).
	Revoke(ctx context.Context, term, voidGen int64, ids []api.TaskID) (stopped []api.TaskID, failed []string)
	Running() []wire.RunningTask
	// Gauges reads the gauges the held tasks of connector report of
	// themselves (wire.GaugesRequest).
	Gauges(connector string) []wire.TaskGauges
	// Signal hands a signal to a running task (wire.SignalRequest) and
	// returns its id; an api.Error says why it could not.
	Signal(ctx context.Context, id api.TaskID, sig connect.Signal) (string, error)
}

// OffsetsApplier carries out offset operations.
type OffsetsApplier interface {
	// ApplySource and Replace return, for a request with CallerWaits, the
	// offsets written (wire.OffsetsReply.Written).
	ApplySource(ctx context.Context, req wire.SourceOffsetsRequest) ([]wire.WrittenOffset, error)
	// ApplySink changes a sink connector's group offsets.
	ApplySink(ctx context.Context, req wire.SinkOffsetsRequest) error
	// Replace replaces every offset of a source connector.
	Replace(ctx context.Context, req wire.OffsetsReplaceRequest) ([]wire.WrittenOffset, error)
}

// ConnectorHost runs the Connector side of Java plugins (docs/plugins.md):
// validation and a connector's lifecycle, which the coordinator never runs
// itself.
type ConnectorHost interface {
	HandleConnector(ctx context.Context, req wire.PluginConnectorRequest) (wire.PluginConnectorReply, error)
}

// LevelSetter sets log levels: the process's named loggers
// (shared/logging.Loggers).
type LevelSetter interface {
	SetLevel(namespace, level string) (changed []string, err error)
}

// Config configures the transport.
type Config struct {
	AgentID string
	// GroupID names the cluster, and so the bucket of its leader lease.
	GroupID string
	Labels  map[string]string
	Version string
	// Plugins and Settings say what the agent can run; they travel with
	// every registration and heartbeat (wire.RegisterRequest).
	Plugins  []api.PluginInfo
	Settings map[string]string
	// HostPlugins are the Java plugins ConnectorHost runs; they travel
	// with every registration and heartbeat as Plugins do.
	HostPlugins []api.PluginInfo
	// ConnectorHost serves the leader's connector operations (nil: the
	// agent has no connector host, and says so to each).
	ConnectorHost ConnectorHost
	Logger        *slog.Logger
	// Loggers receive the cluster's log levels the leader sends (nil: the
	// loggers endpoint is not served).
	Loggers LevelSetter
	// LeaderTrust is the leader keys whose leases the agent follows
	// (leasetrust): a lease none of them signed is ignored — its term is
	// not taken and its command key checks nothing. Nil: every lease is
	// followed.
	LeaderTrust *leasetrust.Trust
	// OnRegistered is called with every registration the leader accepted
	// (nil: nothing is).
	OnRegistered func(wire.RegisterReply)
}

// Transport is an agent's NATS side.
type Transport struct {
	cfg Config
	// faults injects a test's faults (WithFaults; nil: none).
	faults faults.Injector
	// started is when the transport was made: sent with every
	// registration, so the coordinator tells a restarted agent.
	started time.Time
	nc      *nats.Conn
	worker  Worker
	offsets OffsetsApplier
	svc     micro.Service
	// presence answers the leader's presence probes
	// (wire.SubjectAgentPresence) until Deregister.
	presence *nats.Subscription

	mu       sync.Mutex
	term     int64 // newest leadership term seen
	leader   int64 // the term of the leader this agent is registered with
	interval time.Duration
	// agentLease is the lease the leader granted; acked is when the last
	// register or heartbeat that the leader answered was sent (monotonic).
	agentLease time.Duration
	acked      time.Time

	kvMu  sync.Mutex
	lease jetstream.KeyValue // opened by leaseBucket
	// seen is the lease as last read; its Key checks the commands of its
	// term.
	seen wire.LeaderLease
	// warn rate-limits the warnings about refused commands.
	warn *logthrottle.Limiter

	reports chan wire.StatusReport
	// poke wakes the session loop at once: NATS came back.
	poke *waker.Waker
	// ctx ends when Stop is called: connector events retried in the
	// background stop with it. runMu guards ctx and stopped, so that no
	// event's goroutine is added to done once Stop waits for it.
	runMu   sync.Mutex
	ctx     context.Context
	stopped bool
	cancel  context.CancelFunc
	done    sync.WaitGroup
}

// Option configures New beyond its Config.
type Option func(*Transport)

// WithFaults has inj asked at faults.AgentOffsets with every offsets
// request before it is applied, and at faults.AgentGauges with every
// gauges request: its error is answered instead. Tests use it to hold an
// agent inside an offsets write (then kill it) or keep it from answering;
// production code passes none.
func WithFaults(inj faults.Injector) Option {
	return func(t *Transport) { t.faults = inj }
}

// New makes a transport; Start serves and begins the session.
func New(cfg Config, nc *nats.Conn, w Worker, offsets OffsetsApplier, opts ...Option) *Transport {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	t := &Transport{cfg: cfg, nc: nc, worker: w, offsets: offsets, interval: time.Second, reports: make(chan wire.StatusReport, 1024), poke: waker.New(),
		warn: logthrottle.New(time.Minute), started: time.Now().UTC()}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Start mounts the agent's endpoints and starts the session loops.
func (t *Transport) Start() (err error) {
	// First, so that the leader, which probes only registered agents,
	// never finds this one without it. A plain subscription, not a micro
	// endpoint: Stop ends the service while the tasks still stop and
	// commit, and the leader must not take the agent for gone meanwhile.
	presence, err := t.nc.Subscribe(t.subject(wire.SubjectAgentPresence), func(m *nats.Msg) { _ = m.Respond(nil) })
	if err != nil {
		return fmt.Errorf("serve presence: %w", err)
	}
	t.presence = presence
	defer func() {
		if err != nil {
			// Not started: the leader must not find this agent present.
			_ = presence.Unsubscribe()
			t.presence = nil
			if t.svc != nil {
				_ = t.svc.Stop()
			}
		}
	}()
	svc, err := micro.AddService(t.nc, micro.Config{
		Name:        "sluice-agent",
		Version:     t.cfg.Version,
		Description: "Sluice agent " + t.cfg.AgentID,
		Metadata:    map[string]string{"agent_id": t.cfg.AgentID, "group_id": t.cfg.GroupID},
		// The cluster's own queue group: another cluster's agent of the same
		// id never shares a queue with this one.
		QueueGroup: wire.QueueGroup(t.cfg.GroupID),
	})
	if err != nil {
		return err
	}
	t.svc = svc
	// Every endpoint also takes requests too large for one NATS message,
	// in chunks: a large config's assignment, an offsets change of many
	// partitions.
	chunks := natsrpc.NewAssembler(natsrpc.AssemblerOptions{})
	offsetsSlots := natsrpc.Concurrently(maxOffsetsInFlight)
	connectorSlots := natsrpc.Concurrently(maxConnectorOpsInFlight)
	for _, m := range []struct {
		name, template string
		ep             endpoint.Endpoint
		req            func() any
	}{
		{"assign", wire.SubjectAgentAssign, t.assignEndpoint, func() any { return &wire.AssignRequest{} }},
		{"revoke", wire.SubjectAgentRevoke, t.revokeEndpoint, func() any { return &wire.RevokeRequest{} }},
		{"offsets-source", wire.SubjectAgentSourceOffsets, t.sourceOffsetsEndpoint, func() any { return &wire.SourceOffsetsRequest{} }},
		{"offsets-sink", wire.SubjectAgentSinkOffsets, t.sinkOffsetsEndpoint, func() any { return &wire.SinkOffsetsRequest{} }},
		{"offsets-replace", wire.SubjectAgentOffsetsReplace, t.replaceEndpoint, func() any { return &wire.OffsetsReplaceRequest{} }},
		{"connector", wire.SubjectAgentConnector, t.connectorEndpoint, func() any { return &wire.PluginConnectorRequest{} }},
		{"gauges", wire.SubjectAgentGauges, t.gaugesEndpoint, func() any { return &wire.GaugesRequest{} }},
		{"signal", wire.SubjectAgentSignal, t.signalEndpoint, func() any { return &wire.SignalRequest{} }},
	} {
		var opts []natsrpc.MountOption
		if m.name == "connector" {
			// One connector's slow start must not hold up another's.
			opts = append(opts, connectorSlots)
		}
		if strings.HasPrefix(m.name, "offsets") {
			// Offsets requests are handled as they arrive, not one after
			// another: one that waited behind others would start its
			// timeout late and could be applied after the coordinator gave
			// up on it and handed the operation to another agent, beside or
			// after the operations that followed.
			opts = append(opts, offsetsSlots)
		}
		if err := chunks.Mount(svc, m.name, t.subject(m.template), t.termGuard(m.ep), m.req, opts...); err != nil {
			return err
		}
	}
	if err := chunks.Serve(svc, "chunk", t.subject(wire.SubjectAgentChunk)); err != nil {
		return err
	}
	if t.cfg.Loggers != nil {
		if err := chunks.Mount(svc, "loggers", t.subject(wire.SubjectAgentLoggers), t.termGuard(t.loggersEndpoint), func() any { return &wire.LoggersRequest{} }); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.runMu.Lock()
	t.cancel, t.ctx = cancel, ctx
	t.runMu.Unlock()
	t.done.Add(2)
	go t.sessionLoop(ctx)
	go t.reportLoop(ctx)
	return nil
}

// subject fills an agent subject template with this agent's group and id.
func (t *Transport) subject(template string) string {
	return wire.AgentSubject(template, t.cfg.GroupID, t.cfg.AgentID)
}

// Stop ends the session loops and the service (tasks are the worker's).
func (t *Transport) Stop() {
	t.runMu.Lock()
	t.stopped = true
	cancel := t.cancel
	t.runMu.Unlock()
	if cancel != nil {
		cancel()
		t.done.Wait()
	}
	if t.svc != nil {
		_ = t.svc.Stop()
	}
}

// Report queues a task status report for the leader; when the queue is full
// the report is dropped, since the next heartbeat carries every task's state.
func (t *Transport) Report(r wire.StatusReport) {
	select {
	case t.reports <- r:
	default:
	}
}

// maxOffsetsInFlight bounds the offsets requests an agent works on at once;
// one more is refused as unavailable, and the coordinator tries another
// agent.
const maxOffsetsInFlight = 32

// maxConnectorOpsInFlight bounds the connector operations an agent's host
// works on at once.
const maxConnectorOpsInFlight = 32

func (t *Transport) assignEndpoint(ctx context.Context, req any) (any, error) {
	r := req.(*wire.AssignRequest)
	t.cfg.Logger.Debug("assign received", "term", r.Term, "tasks", len(r.Tasks))
	t.worker.ObserveIssued(r.Term, r.Issued)
	refused := t.worker.Assign(ctx, r.Term, r.Tasks)
	return wire.AssignReply{Refused: refused}, nil
}

func (t *Transport) revokeEndpoint(ctx context.Context, req any) (any, error) {
	r := req.(*wire.RevokeRequest)
	t.cfg.Logger.Debug("revoke received", "term", r.Term, "tasks", len(r.Tasks), "generation", r.Generation)
	stopped, failed := t.worker.Revoke(ctx, r.Term, r.Generation, r.Tasks)
	return wire.RevokeReply{Stopped: stopped, Failed: failed}, nil
}

// sourceOffsetsEndpoint carries out a source connector's offsets change
// once the agent's lease is current.
func (t *Transport) sourceOffsetsEndpoint(ctx context.Context, req any) (any, error) {
	r := *req.(*wire.SourceOffsetsRequest)
	ctx, cancel, err := t.whileLeaseCurrent(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	if err := faults.Check(ctx, t.faults, faults.AgentOffsets, r); err != nil {
		return nil, err
	}
	written, err := t.offsets.ApplySource(ctx, r)
	if err != nil {
		return nil, err
	}
	return wire.OffsetsReply{Written: written}, nil
}

// sinkOffsetsEndpoint carries out a sink connector's offsets change once
// the agent's lease is current.
func (t *Transport) sinkOffsetsEndpoint(ctx context.Context, req any) (any, error) {
	r := *req.(*wire.SinkOffsetsRequest)
	ctx, cancel, err := t.whileLeaseCurrent(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	if err := faults.Check(ctx, t.faults, faults.AgentOffsets, r); err != nil {
		return nil, err
	}
	if err := t.offsets.ApplySink(ctx, r); err != nil {
		return nil, err
	}
	return wire.OffsetsReply{}, nil
}

// gaugesEndpoint reads the gauges of the connector's tasks this agent
// holds. A read only, it needs no current lease: only a signed command of
// a current term, as every endpoint does.
func (t *Transport) gaugesEndpoint(ctx context.Context, req any) (any, error) {
	r := req.(*wire.GaugesRequest)
	if err := faults.Check(ctx, t.faults, faults.AgentGauges, *r); err != nil {
		return nil, err
	}
	return wire.GaugesReply{Tasks: t.worker.Gauges(r.Connector)}, nil
}

// signalEndpoint hands a signal to one of the tasks this agent runs. A
// write, it needs the current lease, as offsets operations do: an agent
// the leader may have declared lost no longer acts for it.
func (t *Transport) signalEndpoint(ctx context.Context, req any) (any, error) {
	r := req.(*wire.SignalRequest)
	ctx, cancel, err := t.whileLeaseCurrent(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	id, err := t.worker.Signal(ctx, r.Task, connect.Signal{ID: r.Signal.ID, Type: r.Signal.Type, Data: r.Signal.Data})
	if err != nil {
		return nil, err
	}
	return wire.SignalReply{ID: id}, nil
}

// connectorEndpoint hands a connector operation of the leader to the
// agent's connector host.
func (t *Transport) connectorEndpoint(ctx context.Context, req any) (any, error) {
	r := *req.(*wire.PluginConnectorRequest)
	if t.cfg.ConnectorHost == nil {
		return nil, api.Errorf(api.CodeNotFound, "agent %s has no connector host", t.cfg.AgentID)
	}
	reply, err := t.cfg.ConnectorHost.HandleConnector(ctx, r)
	if err != nil {
		var e *api.Error
		if errors.As(err, &e) {
			return nil, e
		}
		return nil, api.Errorf(api.CodeInternal, "agent %s: connector %s: %s failed: %v", t.cfg.AgentID, r.Name, r.Op, err)
	}
	return reply, nil
}

// ConnectorEvent delivers what a connector the host runs asks for on its
// own to the leader, in the background: best effort, retried while the
// term of the leader this agent is registered with lasts (a new leader
// starts every connector afresh, so an event of the old term means nothing
// to it).
func (t *Transport) ConnectorEvent(ev wire.PluginConnectorEvent) {
	ev.AgentID = t.cfg.AgentID
	t.runMu.Lock()
	ctx := t.ctx
	if ctx == nil || t.stopped {
		t.runMu.Unlock()
		return // not started, or stopping: no leader to tell
	}
	t.done.Add(1)
	t.runMu.Unlock()
	term := t.leaderTerm()
	go func() {
		defer t.done.Done()
		backoff := 100 * time.Millisecond
		for ctx.Err() == nil && term != 0 && t.leaderTerm() == term {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := t.callLeader(cctx, wire.SubjectLeaderConnectorEvent, term, ev, &wire.StatusReply{})
			cancel()
			if err == nil {
				return
			}
			t.cfg.Logger.Debug("connector event not delivered; retrying", "connector", ev.Name, "kind", ev.Kind, "term", term, "err", err)
			sleep(ctx, backoff)
			backoff = min(2*backoff, 2*time.Second)
		}
	}()
}

// loggersEndpoint sets the cluster's log levels, in the order given. A
// level this agent does not know is skipped with a warning, as Kafka Connect
// skips one read from its config topic, so the others still apply.
func (t *Transport) loggersEndpoint(_ context.Context, req any) (any, error) {
	r := req.(*wire.LoggersRequest)
	var changed []string
	for _, l := range r.Levels {
		names, err := t.cfg.Loggers.SetLevel(l.Logger, l.Level)
		if err != nil {
			t.cfg.Logger.Warn("ignoring a cluster log level", "namespace", l.Logger, "log_level", l.Level, "err", err)
			continue
		}
		if len(names) > 0 {
			t.cfg.Logger.Info("log level set", "namespace", l.Logger, "log_level", l.Level, "scope", "cluster", "changed", names)
		}
		changed = append(changed, names...)
	}
	return wire.LoggersReply{Changed: changed}, nil
}

// replaceEndpoint carries out a source offsets replace (a reset, or a
// create's initial offsets) once the agent's lease is current.
func (t *Transport) replaceEndpoint(ctx context.Context, req any) (any, error) {
	r := *req.(*wire.OffsetsReplaceRequest)
	ctx, cancel, err := t.whileLeaseCurrent(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	if t.faults != nil {
		view := wire.SourceOffsetsRequest{Term: r.Term, Connector: r.Connector, Op: wire.OffsetsOpAlter,
			FenceIDs: r.FenceIDs, TxnID: r.TxnID, Topic: r.Topic, Writes: r.Writes, ConnectorTopic: r.ConnectorTopic}
		if len(r.Writes) == 0 {
			view.Op = wire.OffsetsOpReset
		}
		if err := t.faults.Fault(ctx, faults.AgentOffsets, view); err != nil {
			return nil, err
		}
	}
	written, err := t.offsets.Replace(ctx, r)
	if err != nil {
		return nil, err
	}
	return wire.OffsetsReply{Written: written}, nil
}

// leaseCurrent refuses an offsets request unless the leader answered a
// register or heartbeat sent less than a lease ago. A request's timeout
// runs from when its handler starts, so it cannot tell that the request
// waited while this process was paused or cut off; but past its lease the
// leader may have declared this agent lost and moved the operation to
// another agent, and applying it now could overwrite a later change. The
// time is measured from when the acknowledged request was sent, before the
// leader saw it, so the agent gives up no later than the leader does.
func (t *Transport) leaseCurrent() error {
	t.mu.Lock()
	acked, lease := t.acked, t.agentLease
	t.mu.Unlock()
	if acked.IsZero() {
		return api.Errorf(api.CodeUnavailable, "agent %s is not registered with a leader", t.cfg.AgentID)
	}
	if since := time.Since(acked); since > lease {
		return api.Errorf(api.CodeUnavailable, "agent %s has not heard from the leader for %v, longer than its lease of %v: it may have been declared lost",
			t.cfg.AgentID, since.Round(time.Millisecond), lease)
	}
	return nil
}

// Ready reports why the agent is not registered with the leader, or nil:
// the leader acknowledged a register or heartbeat sent less than a lease
// ago (the same test leaseCurrent puts offsets requests to).
func (t *Transport) Ready() error { return t.leaseCurrent() }

// Session returns when the last register or heartbeat the leader
// acknowledged was sent (zero before the first) and the lease it granted.
func (t *Transport) Session() (acked time.Time, lease time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.acked, t.agentLease
}

// whileLeaseCurrent checks the lease as leaseCurrent does and returns a
// context that ends as soon as the lease no longer is: an operation still
// running when the leader may declare this agent lost stops before it can
// commit, since the leader may then have moved it to another agent (or, the
// caller having left, released the connector to later changes).
func (t *Transport) whileLeaseCurrent(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if err := t.leaseCurrent(); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := t.leaseCurrent(); err != nil {
					cancel(err)
					return
				}
			}
		}
	}()
	return ctx, func() { cancel(nil) }, nil
}

func (t *Transport) ack(sent time.Time) {
	t.mu.Lock()
	t.acked = sent
	t.mu.Unlock()
}

func (t *Transport) registration() wire.RegisterRequest {
	return wire.RegisterRequest{AgentID: t.cfg.AgentID, Labels: t.cfg.Labels, Tasks: t.worker.Running(),
		Version: t.cfg.Version, Plugins: t.cfg.Plugins, HostPlugins: t.cfg.HostPlugins, Settings: t.cfg.Settings, StartedAt: t.started}
}

func (t *Transport) sessionLoop(ctx context.Context) {
	defer t.done.Done()
	registered := false
	backoff := 100 * time.Millisecond
	var failingSince, warned time.Time
	for ctx.Err() == nil {
		if !registered {
			var reply wire.RegisterReply
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			term, err := t.currentLeader(rctx)
			sent := time.Now()
			if err == nil {
				err = t.callLeader(rctx, wire.SubjectLeaderRegister, term, t.registration(), &reply)
			}
			if err == nil {
				err = t.leaderLevel(reply.Term, reply.Level)
			}
			cancel()
			if err != nil {
				now := time.Now()
				if failingSince.IsZero() {
					failingSince = now
				}
				// A failure is normal while coordinators start or elect;
				// one that lasts, or a protocol level that differs from
				// the leader's, needs an operator, so it is warned about.
				level := slog.LevelDebug
				stuck := now.Sub(failingSince) >= registerWarnAfter || api.IsCode(err, api.CodeUpgradeRequired)
				if stuck && now.Sub(warned) >= registerWarnEvery {
					level, warned = slog.LevelWarn, now
				}
				t.cfg.Logger.Log(ctx, level, "register failed; retrying", "group", t.cfg.GroupID, "term", term, "protocol_level", wire.ProtocolLevel,
					"err", err, "failing_for", now.Sub(failingSince).Round(time.Second), "backoff", backoff)
				t.poke.Wait(ctx, backoff)
				backoff = min(backoff*2, 2*time.Second)
				continue
			}
			failingSince = time.Time{}
			t.observeTerm(reply.Term)
			t.mu.Lock()
			t.agentLease = time.Duration(reply.LeaseMillis) * time.Millisecond
			t.interval = max(t.agentLease/3, 50*time.Millisecond)
			t.leader = reply.Term
			t.acked = sent
			t.mu.Unlock()
			registered, backoff = true, 100*time.Millisecond
			t.cfg.Logger.Info("registered with coordinator", "term", reply.Term)
			if t.cfg.OnRegistered != nil {
				t.cfg.OnRegistered(reply)
			}
		}
		t.mu.Lock()
		interval := t.interval
		t.mu.Unlock()
		t.poke.Wait(ctx, interval)
		if ctx.Err() != nil {
			return
		}
		// The lease says who leads. A new term means a new leader to
		// register with — the old one may be paused, still holding its
		// subscriptions — and, from now on, commands of older terms are
		// refused.
		lctx, lcancel := context.WithTimeout(ctx, interval)
		term, lerr := t.currentLeader(lctx)
		lcancel()
		if lerr == nil {
			t.observeTerm(term)
			if term != t.leaderTerm() {
				registered = false
				continue
			}
		}
		var hb wire.HeartbeatReply
		hctx, cancel := context.WithTimeout(ctx, interval*2)
		sent := time.Now()
		err := t.callLeader(hctx, wire.SubjectLeaderHeartbeat, t.leaderTerm(), t.registration(), &hb)
		cancel()
		switch {
		case err != nil:
			t.cfg.Logger.Debug("heartbeat failed", "err", err)
			// No responder: the leader of that term is gone; find the new one.
			registered = !api.IsCode(err, api.CodeUnavailable)
		case hb.Unknown:
			registered = false
		case t.leaderLevel(hb.Term, hb.Level) != nil:
			// The term's leader speaks another level, which its
			// register reply would have said: register again, which
			// refuses it and warns.
			t.cfg.Logger.Warn("heartbeat refused", "err", t.leaderLevel(hb.Term, hb.Level))
			registered = false
		default:
			t.observeTerm(hb.Term)
			t.ack(sent)
		}
	}
}

// Deregister tells the coordinator this agent is leaving, after its tasks
// stopped, so they are reassigned at once. Best effort: if no coordinator
// answers, the lease expires instead.
func (t *Transport) Deregister(ctx context.Context) {
	dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req := wire.RegisterRequest{AgentID: t.cfg.AgentID, Labels: t.cfg.Labels, Tasks: []wire.RunningTask{}}
	if err := t.callLeader(dctx, wire.SubjectLeaderDeregister, t.leaderTerm(), req, &wire.HeartbeatReply{}); err != nil {
		// Presence ends with the connection, which the leader notices
		// sooner than the lease.
		t.cfg.Logger.Warn("deregister failed; tasks move when the leader finds this agent gone", "err", err)
	}
	if t.presence != nil {
		_ = t.presence.Unsubscribe()
	}
}

func (t *Transport) reportLoop(ctx context.Context) {
	defer t.done.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case r := <-t.reports:
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if err := t.callLeader(rctx, wire.SubjectLeaderStatus, t.leaderTerm(), r, &wire.StatusReply{}); err != nil {
				t.cfg.Logger.Debug("status report not delivered; the next heartbeat carries it", "task", r.ID.String(), "err", err)
			}
			cancel()
		}
	}
}

// callLeader calls the leader endpoint template of term; a request too
// large for one NATS message (a heartbeat of many tasks) goes in chunks.
func (t *Transport) callLeader(ctx context.Context, template string, term int64, req, resp any) error {
	return natsrpc.Call(ctx, t.nc, wire.LeaderSubject(template, t.cfg.GroupID, term, t.cfg.AgentID), req, resp,
		natsrpc.ChunkVia(wire.LeaderSubject(wire.SubjectLeaderChunk, t.cfg.GroupID, term, t.cfg.AgentID)))
}

func (t *Transport) leaderTerm() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.leader
}

// An agent that has failed to register for registerWarnAfter warns, at most
// once every registerWarnEvery.
const (
	registerWarnAfter = 10 * time.Second
	registerWarnEvery = 30 * time.Second
)

// Poke makes the session read the lease and heartbeat now rather than at
// its next tick: the agent calls it when its NATS connection comes back.
func (t *Transport) Poke() { t.poke.Poke() }

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
