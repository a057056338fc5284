package api

import "time"

// AuditRecord is one record of the audit topic: one write received through
// the REST API, as the coordinator that received it from the client saw it
// (docs/security.md). It is the record's value, as JSON; the record's
// key is the connector's name ("" when the write names none).
type AuditRecord struct {
	// Time is when the request arrived.
	Time time.Time `json:"time"`
	// Principal is who sent it: the authenticated caller, "anonymous"
	// without authentication.
	Principal string `json:"principal"`
	// Source is the client's address (host:port) as the receiving
	// coordinator saw it.
	Source string `json:"source"`
	// Coordinator is the REST address (worker id) of the coordinator that
	// received the request.
	Coordinator string `json:"coordinator,omitempty"`
	// Operation is a short name of what the request does, such as
	// "connector.create" or "offsets.reset"; "unknown" for a path or method
	// that is no route of the API.
	Operation string `json:"operation"`
	// Method, Path and Query are the request's, as sent.
	Method string `json:"method"`
	Path   string `json:"path"`
	Query  string `json:"query,omitempty"`
	// Connector is the connector the request names, when it names one.
	Connector string `json:"connector,omitempty"`
	// Before and After are the connector's config and target state just
	// before the request and once its answer was known; nil when the
	// connector did not exist then (or the request names no connector).
	Before *AuditState `json:"before"`
	After  *AuditState `json:"after"`
	// Status is the HTTP status of the answer.
	Status int `json:"status"`
	// Error is the answer's message when Status is 400 or more.
	Error string `json:"error,omitempty"`
	// ConfigsOmitted reports that Before and After lost their configs
	// (their target states are kept) because the record would not have
	// fit in one Kafka record with them.
	ConfigsOmitted bool `json:"configs_omitted,omitempty"`
}

// AuditState is a connector's config, its values of PASSWORD-type keys
// masked as "[hidden]", and its target state as REST names it (RUNNING,
// PAUSED or STOPPED).
type AuditState struct {
	Config      map[string]string `json:"config"`
	TargetState string            `json:"target_state"`
}

// AuditLog is the body of GET /sluice/audit.
type AuditLog struct {
	// Records match the query, newest first.
	Records []AuditRecord `json:"records"`
	// More reports that older records may match the query than those
	// returned: the limit was reached, or the read stopped at its bound
	// (it reads at most the newest 100000 records of the topic, or of the
	// time since "since").
	More bool `json:"more"`
	// Unwritten counts the audit records the answering coordinator could
	// not write to the topic since it started (each is also logged).
	Unwritten int64 `json:"unwritten"`
}
