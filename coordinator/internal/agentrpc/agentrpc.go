// Package agentrpc is the coordinator's side of the NATS contract with its
// agents, in one place: the commands the leader sends to one agent (assign,
// revoke, offsets, loggers) and the leader-only endpoints agents call (register,
// heartbeat, deregister, status).
//
//	leader ──assign / revoke / offsets / loggers / gauges / signal──► sluice.….agent.<id>.…   (Client)
//	leader ──connector (a Java connector's validate, start, …)──► sluice.….agent.<id>.connector   (Client)
//	agent  ──register / heartbeat / status / deregister / connector event──► sluice.….leader.<term>.…   (Serve)
//
// It only moves messages: what they mean is the herder's.
package agentrpc

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-kit/kit/endpoint"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/metrics"
	"github.com/sluice-io/sluice/shared/cmdsig"
	"github.com/sluice-io/sluice/shared/natsrpc"
	"github.com/sluice-io/sluice/shared/wire"
)

// Client sends the leader's commands to agents of one cluster.
type Client struct {
	nc      *nats.Conn
	group   string
	keys    func(term int64) *cmdsig.Key
	metrics *metrics.Metrics
}

// NewClient returns a client for the agents of the cluster named group.
// keys returns the signing key of a term this process leads (nil for any
// other term); every command is signed with the key of its term, and agents
// refuse one that is not. Every request is recorded on m (nil: nowhere)
// by the command its subject names (Kind).
func NewClient(nc *nats.Conn, group string, keys func(term int64) *cmdsig.Key, m *metrics.Metrics) *Client {
	// Every command's error counter and latency histogram are there from
	// the start, at 0, so that a rate() or an alert over them has a series
	// before the first request or failure.
	for _, t := range commands {
		m.DeclareNATSKind(Kind(t))
	}
	return &Client{nc: nc, group: group, keys: keys, metrics: m}
}

// commands are the subject templates of every command a leader sends: the
// subject table's rows to agents (presence is a probe, not a command).
var commands = func() []string {
	var out []string
	for _, s := range wire.Subjects {
		if s.Direction == wire.ToAgent && s.Request != nil {
			out = append(out, s.Template)
		}
	}
	return out
}()

// Kind is the command of an agent subject template (wire.SubjectAgent*):
// its name in the subject table (task.assign, offsets.source, chunk…). It
// labels the NATS request metrics.
func Kind(template string) string {
	if s, ok := wire.SubjectOf(template); ok {
		return s.Name
	}
	return template
}

// call sends req, a command of term, signed, to the agent endpoint template
// of agent; a request too large for one NATS message goes in chunks to the
// agent's chunk endpoint.
func (c *Client) call(ctx context.Context, template, agent string, term int64, req, resp any) error {
	key := c.keys(term)
	if key == nil {
		return api.Errorf(api.CodeConflict, "this coordinator does not lead term %d: it cannot sign a command of it", term)
	}
	chunks := wire.AgentSubject(wire.SubjectAgentChunk, c.group, agent)
	observe := natsrpc.Observe(func(subject string, took time.Duration, err error) {
		kind := Kind(template)
		if subject == chunks {
			kind = Kind(wire.SubjectAgentChunk)
		}
		c.metrics.ObserveNATS(kind, took, err)
	})
	return natsrpc.Call(ctx, c.nc, wire.AgentSubject(template, c.group, agent), req, resp,
		natsrpc.ChunkVia(chunks), natsrpc.SignWith(key.Sign), observe)
}

// SourceOffsets has agent change a source connector's offsets.
func (c *Client) SourceOffsets(ctx context.Context, agent string, req wire.SourceOffsetsRequest) ([]wire.WrittenOffset, error) {
	var reply wire.OffsetsReply
	err := c.call(ctx, wire.SubjectAgentSourceOffsets, agent, req.Term, req, &reply)
	return reply.Written, err
}

// SinkOffsets has agent change a sink connector's group offsets.
func (c *Client) SinkOffsets(ctx context.Context, agent string, req wire.SinkOffsetsRequest) error {
	return c.call(ctx, wire.SubjectAgentSinkOffsets, agent, req.Term, req, &wire.OffsetsReply{})
}

// ReplaceOffsets has agent replace every offset of a source connector
// (wire.OffsetsReplaceRequest).
func (c *Client) ReplaceOffsets(ctx context.Context, agent string, req wire.OffsetsReplaceRequest) ([]wire.WrittenOffset, error) {
	var reply wire.OffsetsReply
	err := c.call(ctx, wire.SubjectAgentOffsetsReplace, agent, req.Term, req, &reply)
	return reply.Written, err
}

// Loggers sets the cluster's log levels on agent.
func (c *Client) Loggers(ctx context.Context, agent string, req wire.LoggersRequest) error {
	return c.call(ctx, wire.SubjectAgentLoggers, agent, req.Term, req, &wire.LoggersReply{})
}

// Connector has agent's connector host carry out an operation on a Java
// connector (wire.PluginConnectorRequest).
func (c *Client) Connector(ctx context.Context, agent string, req wire.PluginConnectorRequest) (wire.PluginConnectorReply, error) {
	var reply wire.PluginConnectorReply
	err := c.call(ctx, wire.SubjectAgentConnector, agent, req.Term, req, &reply)
	return reply, err
}

// Gauges asks agent for the gauges its tasks of a connector report
// (wire.GaugesRequest).
func (c *Client) Gauges(ctx context.Context, agent string, req wire.GaugesRequest) (wire.GaugesReply, error) {
	var reply wire.GaugesReply
	err := c.call(ctx, wire.SubjectAgentGauges, agent, req.Term, req, &reply)
	return reply, err
}

// Signal has agent hand a signal to a connector's task it runs
// (wire.SignalRequest).
func (c *Client) Signal(ctx context.Context, agent string, req wire.SignalRequest) (wire.SignalReply, error) {
	var reply wire.SignalReply
	err := c.call(ctx, wire.SubjectAgentSignal, agent, req.Term, req, &reply)
	return reply, err
}

// Endpoints are the leader-only handlers agents call. Each receives the
// decoded request pointer: *wire.RegisterRequest for register, heartbeat and
// deregister, *wire.StatusReport for status, *wire.PluginConnectorEvent for
// connector events.
type Endpoints struct {
	Register, Heartbeat, Deregister, Status, ConnectorEvent endpoint.Endpoint
}

// LevelMismatch is the refusal of a request from agent, which speaks
// protocol level level (0: it states none).
func LevelMismatch(agent string, level int) *api.Error {
	return api.Errorf(api.CodeUpgradeRequired, "agent %s speaks Sluice protocol level %d; this coordinator speaks level %d: run agents and coordinators of the same protocol level",
		agent, level, wire.ProtocolLevel)
}

// Service describes the serving coordinator in micro's discovery.
type Service struct {
	Version  string
	WorkerID string
}

// Serve mounts the leader endpoints of term. A deposed leader's
// subscriptions name an older term, so agents that read the current lease
// never reach them; stop the returned service when leadership ends.
func Serve(nc *nats.Conn, group string, term int64, info Service, eps Endpoints) (micro.Service, error) {
	svc, err := micro.AddService(nc, micro.Config{
		Name:        "sluice-leader",
		Version:     info.Version,
		Description: "Sluice coordinator, leader endpoints",
		Metadata:    map[string]string{"worker_id": info.WorkerID, "term": strconv.FormatInt(term, 10), "group_id": group},
		// Per cluster: clusters sharing a NATS server never share a queue.
		QueueGroup: wire.QueueGroup(group),
	})
	if err != nil {
		return nil, fmt.Errorf("serve agent endpoints: %w", err)
	}
	mounts := []struct {
		name, subject string
		ep            endpoint.Endpoint
		req           func() any
	}{
		{"register", wire.SubjectLeaderRegister, eps.Register, func() any { return &wire.RegisterRequest{} }},
		{"heartbeat", wire.SubjectLeaderHeartbeat, eps.Heartbeat, func() any { return &wire.HeartbeatRequest{} }},
		{"deregister", wire.SubjectLeaderDeregister, eps.Deregister, func() any { return &wire.RegisterRequest{} }},
		{"status", wire.SubjectLeaderStatus, eps.Status, func() any { return &wire.StatusReport{} }},
		{"connector-event", wire.SubjectLeaderConnectorEvent, eps.ConnectorEvent, func() any { return &wire.PluginConnectorEvent{} }},
	}
	// A request too large for one NATS message (a heartbeat of many
	// tasks) comes in chunks.
	chunks := natsrpc.NewAssembler(natsrpc.AssemblerOptions{})
	for _, m := range mounts {
		if m.ep == nil {
			continue // a caller that serves no such endpoint
		}
		if err := chunks.Mount(svc, m.name, wire.LeaderSubjectAgents(m.subject, group, term), sameAgent(m.ep), m.req); err != nil {
			_ = svc.Stop()
			return nil, err
		}
	}
	if err := chunks.Serve(svc, "chunk", wire.LeaderSubjectAgents(wire.SubjectLeaderChunk, group, term)); err != nil {
		_ = svc.Stop()
		return nil, err
	}
	return svc, nil
}

// sameAgent refuses a request of another protocol level than this
// coordinator's (wire.ProtocolLevel), naming both, and one whose agent id
// is not the one its subject names. The subject is what a NATS server's
// permissions check: with a user per agent allowed to publish only on
// subjects ending in its own id, this check is what keeps an agent from
// registering, heartbeating or reporting as another.
func sameAgent(next endpoint.Endpoint) endpoint.Endpoint {
	return func(ctx context.Context, req any) (any, error) {
		r, ok := req.(wire.AgentReport)
		if !ok {
			return nil, api.Errorf(api.CodeInternal, "agent endpoint: unexpected request %T", req)
		}
		id := r.ReportingAgent()
		got, ok := natsrpc.ReceivedFrom(ctx)
		if !ok {
			return nil, api.Errorf(api.CodeInternal, "agent endpoint: the request's subject is not known")
		}
		if level := got.Level(); level != wire.ProtocolLevel {
			return nil, LevelMismatch(id, level)
		}
		subjectID, err := wire.LeaderSubjectAgent(got.Subject)
		if err != nil {
			return nil, api.Errorf(api.CodeBadRequest, "%v", err)
		}
		if subjectID != id {
			return nil, api.Errorf(api.CodeForbidden, "a request on %s names agent %q; an agent may only speak for itself (%q)", got.Subject, id, subjectID)
		}
		return next(ctx, req)
	}
}
