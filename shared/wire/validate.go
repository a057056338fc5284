package wire

import (
	"strings"

	"github.com/sluice-io/sluice/api"
)

// Validator is a request that checks its own shape. Every request type of
// the subject table (Subjects) is one; the receiving endpoint runs Validate
// before anything else and answers its error, an api.CodeBadRequest that
// names the field.
type Validator interface {
	Validate() error
}

// badField is the refusal of a request whose field is wrong.
func badField(msg, field, problem string) error {
	return api.Errorf(api.CodeBadRequest, "%s: %s %s", msg, field, problem)
}

// validTerm checks the leadership term every command carries.
func validTerm(msg string, term int64) error {
	if term <= 0 || term > MaxLeaderTerm {
		return badField(msg, "term", "must be a leadership term (1 to 2^53)")
	}
	return nil
}

// validTaskID checks a task id at field.
func validTaskID(msg, field string, id TaskID) error {
	if id.Connector == "" {
		return badField(msg, field+".connector", "must not be empty")
	}
	if id.Task < 0 {
		return badField(msg, field+".task", "must not be negative")
	}
	return nil
}

// validOffsetsChange checks what a source's and a sink's offsets change
// both carry: the term, the connector and the operation kind.
func validOffsetsChange(msg string, term int64, connector, op string) error {
	if err := validTerm(msg, term); err != nil {
		return err
	}
	if connector == "" {
		return badField(msg, "connector", "must not be empty")
	}
	if op != OffsetsOpAlter && op != OffsetsOpReset {
		return badField(msg, "op", `must be "alter" or "reset"`)
	}
	return nil
}

// Validate checks that every assignment names a task and a generation.
func (r *AssignRequest) Validate() error {
	const msg = "assign request"
	if err := validTerm(msg, r.Term); err != nil {
		return err
	}
	if r.Issued < 0 {
		return badField(msg, "issued", "must not be negative")
	}
	for _, a := range r.Tasks {
		if err := validTaskID(msg, "tasks[].id", a.ID); err != nil {
			return err
		}
		if a.Generation < 0 {
			return badField(msg, "tasks[].generation", "must not be negative")
		}
	}
	return nil
}

// Validate checks the term and the task ids.
func (r *RevokeRequest) Validate() error {
	const msg = "revoke request"
	if err := validTerm(msg, r.Term); err != nil {
		return err
	}
	if r.Generation < 0 {
		return badField(msg, "generation", "must not be negative")
	}
	for _, id := range r.Tasks {
		if err := validTaskID(msg, "tasks[]", id); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks that the change names a connector and, when it writes,
// the transactional id and the topic it writes under.
func (r *SourceOffsetsRequest) Validate() error {
	const msg = "source offsets request"
	if err := validOffsetsChange(msg, r.Term, r.Connector, r.Op); err != nil {
		return err
	}
	if len(r.Writes) > 0 && r.TxnID == "" {
		return badField(msg, "txn_id", "must be set for writes")
	}
	if len(r.Writes) > 0 && r.Topic == "" {
		return badField(msg, "topic", "must be set for writes")
	}
	return validWrites(msg, r.Writes, r.ConnectorTopic)
}

// Validate checks that the change names a connector and its group, and,
// for an alter, every partition's topic.
func (r *SinkOffsetsRequest) Validate() error {
	const msg = "sink offsets request"
	if err := validOffsetsChange(msg, r.Term, r.Connector, r.Op); err != nil {
		return err
	}
	if r.Group == "" {
		return badField(msg, "group", "must not be empty")
	}
	for _, o := range r.Offsets {
		if o.Topic == "" {
			return badField(msg, "offsets[].topic", "must not be empty")
		}
		if o.Partition < 0 {
			return badField(msg, "offsets[].partition", "must not be negative")
		}
	}
	return nil
}

// Validate checks that the replace names a connector, the transactional id
// it writes under and the offsets topic.
func (r *OffsetsReplaceRequest) Validate() error {
	const msg = "offsets replace request"
	if err := validTerm(msg, r.Term); err != nil {
		return err
	}
	switch {
	case r.Connector == "":
		return badField(msg, "connector", "must not be empty")
	case r.TxnID == "":
		return badField(msg, "txn_id", "must not be empty")
	case r.Topic == "":
		return badField(msg, "topic", "must not be empty")
	}
	return validWrites(msg, r.Writes, r.ConnectorTopic)
}

// validWrites checks offsets-topic writes: each has a key, and one
// confined to a topic is confined to one of the request's.
func validWrites(msg string, writes []OffsetWrite, connectorTopic string) error {
	for _, w := range writes {
		if w.Key == "" {
			return badField(msg, "writes[].key", "must not be empty")
		}
		if w.Topic != "" && connectorTopic == "" {
			return badField(msg, "writes[].topic", "is only set with a connector_topic")
		}
	}
	return nil
}

// Validate checks the term and that every level names a logger and a level.
func (r *LoggersRequest) Validate() error {
	const msg = "loggers request"
	if err := validTerm(msg, r.Term); err != nil {
		return err
	}
	for _, l := range r.Levels {
		if strings.TrimSpace(l.Level) == "" {
			return badField(msg, "levels[].level", "must not be empty")
		}
	}
	return nil
}

// Validate checks the term and the connector.
func (r *GaugesRequest) Validate() error {
	const msg = "gauges request"
	if err := validTerm(msg, r.Term); err != nil {
		return err
	}
	if r.Connector == "" {
		return badField(msg, "connector", "must not be empty")
	}
	return nil
}

// Validate checks the term, the task and the signal's type.
func (r *SignalRequest) Validate() error {
	const msg = "signal request"
	if err := validTerm(msg, r.Term); err != nil {
		return err
	}
	if err := validTaskID(msg, "task", r.Task); err != nil {
		return err
	}
	if r.Signal.Type == "" {
		return badField(msg, "signal.type", "must not be empty")
	}
	return nil
}

// Validate checks the op and the fields it needs.
func (r *PluginConnectorRequest) Validate() error {
	const msg = "connector request"
	if err := validTerm(msg, r.Term); err != nil {
		return err
	}
	switch r.Op {
	case PluginOpValidate:
		if r.Class == "" && r.Config["connector.class"] == "" {
			return badField(msg, "config.connector.class", "must be set for "+r.Op)
		}
	case PluginOpStart:
		if r.Name == "" {
			return badField(msg, "name", "must not be empty for "+r.Op)
		}
		if r.Class == "" && r.Config["connector.class"] == "" {
			return badField(msg, "config.connector.class", "must be set for "+r.Op)
		}
	case PluginOpTaskConfigs:
		if r.Name == "" {
			return badField(msg, "name", "must not be empty for "+r.Op)
		}
		if r.MaxTasks < 0 {
			return badField(msg, "max_tasks", "must not be negative")
		}
	case PluginOpStop:
		if r.Name == "" {
			return badField(msg, "name", "must not be empty for "+r.Op)
		}
	case PluginOpConfigDef, PluginOpAlterOffsets:
		if r.Class == "" {
			return badField(msg, "class", "must not be empty for "+r.Op)
		}
	default:
		return badField(msg, "op", "is unknown: "+r.Op)
	}
	return nil
}

// Validate checks that the event names its connector and a known kind.
func (r *PluginConnectorEvent) Validate() error {
	const msg = "connector event"
	switch {
	case r.AgentID == "":
		return badField(msg, "agent_id", "must not be empty")
	case r.Name == "":
		return badField(msg, "name", "must not be empty")
	}
	switch r.Kind {
	case PluginEventReconfigure, PluginEventError, PluginEventHostLost:
		return nil
	}
	return badField(msg, "kind", "is unknown: "+r.Kind)
}

// Validate checks the chunk's stream, subject and place in its stream; the
// receiver bounds its size itself.
func (r *RequestChunk) Validate() error {
	const msg = "chunk"
	switch {
	case r.Stream == "" || len(r.Stream) > MaxChunkStream:
		return badField(msg, "stream", "must have 1 to 64 characters")
	case r.Subject == "":
		return badField(msg, "subject", "must not be empty")
	case r.Seq < 0:
		return badField(msg, "seq", "must not be negative")
	}
	return nil
}

// MaxChunkStream bounds the length of a chunk's stream id.
const MaxChunkStream = 64
