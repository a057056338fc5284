package v1

import "fmt"

// NATS subjects come in pairs: a wildcard that a server subscribes to and a
// template that addresses one target. The version is part of every subject.
const (
	// SubjectPrefix starts every Sluice subject.
	SubjectPrefix = "sluice.v1"

	// SubjectAgentAssignAll is subscribed to by every agent; SubjectAgentAssign
	// addresses one agent by id. The command starts or updates tasks.
	SubjectAgentAssignAll = "sluice.v1.agent.*.task.assign"
	// SubjectAgentAssign addresses the assign endpoint of one agent.
	SubjectAgentAssign = "sluice.v1.agent.%s.task.assign"
	// SubjectAgentRevokeAll and SubjectAgentRevoke stop tasks; the reply
	// comes only after the tasks stopped and committed their offsets.
	SubjectAgentRevokeAll = "sluice.v1.agent.*.task.revoke"
	// SubjectAgentRevoke addresses the revoke endpoint of one agent.
	SubjectAgentRevoke = "sluice.v1.agent.%s.task.revoke"
)

// AgentSubject fills an agent subject template with an agent id.
func AgentSubject(template, agentID string) string {
	return fmt.Sprintf(template, agentID)
}

// Message types, carried in the Type field of every reply so a reader can
// tell which version of a message it holds.
const (
	TypeRegisterReply  = "sluice.v1.register_reply"
	TypeHeartbeatReply = "sluice.v1.heartbeat_reply"
	TypeStatusReply    = "sluice.v1.status_reply"
	TypeAssignReply    = "sluice.v1.assign_reply"
	TypeRevokeReply    = "sluice.v1.revoke_reply"
)
