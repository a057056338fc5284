package wire

import "reflect"

// Protocol level. The coordinator↔agent protocol has one version, this
// integer, and every change of a message or a subject that a process of the
// previous level would misread raises it: messages are changed by adding
// new ones, never by editing one. Both sides check it:
//
//   - every request carries the sender's level in LevelHeader (natsrpc.Call
//     sets it), so an agent states its level at register, and the leader
//     refuses a register, heartbeat, status report, deregister or event of
//     another level with api.CodeUpgradeRequired naming both levels;
//   - the leader states its level in RegisterReply.Level and
//     HeartbeatReply.Level, and an agent does not take a registration of
//     another level; it also refuses a command whose header names another
//     level, with the same code and both levels.
//
// The subjects' "v3" (SubjectPrefix) names their layout, which no level
// change alters, so that a process of another level always reaches its
// peer and is told why it is refused, instead of waiting for an answer
// that never comes.
const (
	// ProtocolLevel is the protocol level this build speaks.
	ProtocolLevel = 3
	// LevelHeader is the NATS header that carries the sender's protocol
	// level, in decimal, on every request.
	LevelHeader = "Sluice-Level"
)

// NATS subjects. Every subject names the cluster (its group id) right after
// SubjectPrefix, so that clusters can share one NATS server and its
// permissions can be written per cluster and role (sluice.v3.<group>.>).
// An agent's endpoints are addressed by its id (AgentSubject); the leader's
// endpoints by its term and the calling agent's id as the last token
// (LeaderSubject), so that a NATS server's per-agent publish permissions
// bind an agent's id to its NATS identity. Subjects lists them all.
//
// Templates are filled by the builders in subjects.go, which also encode
// the ids: never fill a template with fmt.Sprintf.
const (
	// SubjectPrefix starts every Sluice subject.
	SubjectPrefix = "sluice.v3"

	// SubjectAgentAssign addresses the assign endpoint of one agent of a
	// group; the command starts or updates tasks.
	SubjectAgentAssign = SubjectPrefix + ".%s.agent.%s.task.assign"
	// SubjectAgentRevoke addresses the revoke endpoint of one agent; the
	// reply comes only after the tasks stopped and committed their offsets.
	SubjectAgentRevoke = SubjectPrefix + ".%s.agent.%s.task.revoke"
	// SubjectAgentSourceOffsets addresses the endpoint of one agent that
	// changes a source connector's offsets (SourceOffsetsRequest).
	SubjectAgentSourceOffsets = SubjectPrefix + ".%s.agent.%s.offsets.source"
	// SubjectAgentSinkOffsets addresses the endpoint of one agent that
	// changes a sink connector's consumer group offsets
	// (SinkOffsetsRequest).
	SubjectAgentSinkOffsets = SubjectPrefix + ".%s.agent.%s.offsets.sink"
	// SubjectAgentOffsetsReplace addresses the endpoint of one agent that
	// replaces all of a source connector's offsets (OffsetsReplaceRequest).
	SubjectAgentOffsetsReplace = SubjectPrefix + ".%s.agent.%s.offsets.replace"
	// SubjectAgentLoggers addresses the loggers endpoint of one agent: the
	// leader sends it the cluster's log levels.
	SubjectAgentLoggers = SubjectPrefix + ".%s.agent.%s.loggers"
	// SubjectAgentConnector addresses the connector endpoint of one agent:
	// a Java connector's operations (PluginConnectorRequest).
	SubjectAgentConnector = SubjectPrefix + ".%s.agent.%s.connector"
	// SubjectAgentChunk addresses the chunk endpoint of one agent: chunks
	// of requests for its other endpoints (chunks.go).
	SubjectAgentChunk = SubjectPrefix + ".%s.agent.%s.chunk"
	// SubjectAgentPresence addresses the presence endpoint of one agent
	// (presence.go).
	SubjectAgentPresence = SubjectPrefix + ".%s.agent.%s.presence"
	// SubjectAgentGauges addresses the gauges endpoint of one agent: the
	// gauges its tasks of a connector report (GaugesRequest).
	SubjectAgentGauges = SubjectPrefix + ".%s.agent.%s.gauges"
	// SubjectAgentSignal addresses the signal endpoint of one agent: a
	// signal for a connector's task it runs (SignalRequest).
	SubjectAgentSignal = SubjectPrefix + ".%s.agent.%s.signal"

	// SubjectLeaderRegister and its siblings are the leader-only endpoints of
	// one term of a group; a deposed leader's subscriptions name an older
	// term, so an agent that read the current lease never reaches them. The
	// last token is the calling agent's id: the leader refuses a request
	// whose agent id is another, so a NATS server that lets each agent's
	// user publish only on subjects ending in its own id keeps one agent
	// from speaking for another.
	SubjectLeaderRegister = SubjectPrefix + ".%s.leader.%s.register.%s"
	// SubjectLeaderHeartbeat is the heartbeat endpoint of a term.
	SubjectLeaderHeartbeat = SubjectPrefix + ".%s.leader.%s.heartbeat.%s"
	// SubjectLeaderStatus is the status-report endpoint of a term.
	SubjectLeaderStatus = SubjectPrefix + ".%s.leader.%s.status.%s"
	// SubjectLeaderDeregister is where an agent that shuts down gracefully
	// hands its tasks back at once.
	SubjectLeaderDeregister = SubjectPrefix + ".%s.leader.%s.deregister.%s"
	// SubjectLeaderConnectorEvent is where an agent publishes the events of
	// the connectors its host runs (PluginConnectorEvent).
	SubjectLeaderConnectorEvent = SubjectPrefix + ".%s.leader.%s.connector.event.%s"
	// SubjectLeaderChunk addresses the chunk endpoint of the leader of a
	// term for one agent. A chunk sent here may only carry a request for a
	// subject of the same agent: the receiver refuses one whose Subject
	// names another.
	SubjectLeaderChunk = SubjectPrefix + ".%s.leader.%s.chunk.%s"
)

// Direction says who sends a subject's requests.
type Direction int

const (
	// ToAgent is a command the leader sends to one agent (AgentSubject).
	ToAgent Direction = iota + 1
	// ToLeader is a request an agent sends to the leader of a term
	// (LeaderSubject).
	ToLeader
)

// String names the direction.
func (d Direction) String() string {
	switch d {
	case ToAgent:
		return "leader→agent"
	case ToLeader:
		return "agent→leader"
	}
	return "unknown"
}

// Subject is one row of the subject table: an endpoint, who calls it, and
// the messages it takes and answers with. Request and Reply are the
// message types (not pointers); nil for a message without a body.
type Subject struct {
	// Name is the endpoint's name: its subject's tokens after the agent's
	// id (ToAgent) or the term (ToLeader, but the agent's id), as the
	// request metrics name it.
	Name      string
	Template  string
	Direction Direction
	Request   reflect.Type
	Reply     reflect.Type
}

// Subjects is every NATS subject of the protocol. Each request type's
// pointer has a Validate method, which the receiving endpoint runs before
// anything else (natsrpc) and answers api.CodeBadRequest naming the field.
var Subjects = []Subject{
	{"task.assign", SubjectAgentAssign, ToAgent, reflect.TypeFor[AssignRequest](), reflect.TypeFor[AssignReply]()},
	{"task.revoke", SubjectAgentRevoke, ToAgent, reflect.TypeFor[RevokeRequest](), reflect.TypeFor[RevokeReply]()},
	{"offsets.source", SubjectAgentSourceOffsets, ToAgent, reflect.TypeFor[SourceOffsetsRequest](), reflect.TypeFor[OffsetsReply]()},
	{"offsets.sink", SubjectAgentSinkOffsets, ToAgent, reflect.TypeFor[SinkOffsetsRequest](), reflect.TypeFor[OffsetsReply]()},
	{"offsets.replace", SubjectAgentOffsetsReplace, ToAgent, reflect.TypeFor[OffsetsReplaceRequest](), reflect.TypeFor[OffsetsReply]()},
	{"loggers", SubjectAgentLoggers, ToAgent, reflect.TypeFor[LoggersRequest](), reflect.TypeFor[LoggersReply]()},
	{"connector", SubjectAgentConnector, ToAgent, reflect.TypeFor[PluginConnectorRequest](), reflect.TypeFor[PluginConnectorReply]()},
	{"chunk", SubjectAgentChunk, ToAgent, reflect.TypeFor[RequestChunk](), reflect.TypeFor[ChunkReply]()},
	{"presence", SubjectAgentPresence, ToAgent, nil, nil},
	{"gauges", SubjectAgentGauges, ToAgent, reflect.TypeFor[GaugesRequest](), reflect.TypeFor[GaugesReply]()},
	{"signal", SubjectAgentSignal, ToAgent, reflect.TypeFor[SignalRequest](), reflect.TypeFor[SignalReply]()},
	{"register", SubjectLeaderRegister, ToLeader, reflect.TypeFor[RegisterRequest](), reflect.TypeFor[RegisterReply]()},
	{"heartbeat", SubjectLeaderHeartbeat, ToLeader, reflect.TypeFor[HeartbeatRequest](), reflect.TypeFor[HeartbeatReply]()},
	{"status", SubjectLeaderStatus, ToLeader, reflect.TypeFor[StatusReport](), reflect.TypeFor[StatusReply]()},
	{"deregister", SubjectLeaderDeregister, ToLeader, reflect.TypeFor[RegisterRequest](), reflect.TypeFor[HeartbeatReply]()},
	{"connector.event", SubjectLeaderConnectorEvent, ToLeader, reflect.TypeFor[PluginConnectorEvent](), reflect.TypeFor[StatusReply]()},
	{"chunk", SubjectLeaderChunk, ToLeader, reflect.TypeFor[RequestChunk](), reflect.TypeFor[ChunkReply]()},
}

// SubjectOf returns the row of template.
func SubjectOf(template string) (Subject, bool) {
	for _, s := range Subjects {
		if s.Template == template {
			return s, true
		}
	}
	return Subject{}, false
}
