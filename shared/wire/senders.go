package wire

// Command is a request the leader sends to an agent: it names the term of
// the leader that sent it, which the agent checks against the lease.
type Command interface {
	CommandTerm() int64
}

// CommandTerm is the term of the leader that sent the assignment.
func (r *AssignRequest) CommandTerm() int64 { return r.Term }

// CommandTerm is the term of the leader that sent the revoke.
func (r *RevokeRequest) CommandTerm() int64 { return r.Term }

// CommandTerm is the term of the leader that sent the source offsets change.
func (r *SourceOffsetsRequest) CommandTerm() int64 { return r.Term }

// CommandTerm is the term of the leader that sent the sink offsets change.
func (r *SinkOffsetsRequest) CommandTerm() int64 { return r.Term }

// CommandTerm is the term of the leader that sent the replace.
func (r *OffsetsReplaceRequest) CommandTerm() int64 { return r.Term }

// CommandTerm is the term of the leader that sent the log levels.
func (r *LoggersRequest) CommandTerm() int64 { return r.Term }

// CommandTerm is the term of the leader that asked for the gauges.
func (r *GaugesRequest) CommandTerm() int64 { return r.Term }

// CommandTerm is the term of the leader that sent the signal.
func (r *SignalRequest) CommandTerm() int64 { return r.Term }

// AgentReport is a request an agent sends to the leader: it names the
// agent, which the leader checks against the subject it came on.
type AgentReport interface {
	ReportingAgent() string
}

// ReportingAgent is the agent registering, heartbeating or leaving.
func (r *RegisterRequest) ReportingAgent() string { return r.AgentID }

// ReportingAgent is the agent reporting a task's status.
func (r *StatusReport) ReportingAgent() string { return r.AgentID }

// CommandTerm is the term of the leader that sent the connector operation.
func (r *PluginConnectorRequest) CommandTerm() int64 { return r.Term }

// ReportingAgent is the agent whose connector host raised the event.
func (r *PluginConnectorEvent) ReportingAgent() string { return r.AgentID }
