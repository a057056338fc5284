package api

// ConnectorLag is the body of GET /sluice/connectors/{name}/lag: a sink
// connector's consumer lag, per partition of the topics it consumes, as its
// consumer group stands in Kafka.
type ConnectorLag struct {
	Connector string `json:"connector"`
	// TotalLag is the sum of the partitions' lags.
	TotalLag   int64          `json:"total_lag"`
	Partitions []PartitionLag `json:"partitions"`
}

// PartitionLag is a sink's consumer lag on one partition.
type PartitionLag struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// EndOffset is the partition's end offset (the next record's).
	EndOffset int64 `json:"end_offset"`
	// CommittedOffset is the group's committed offset, -1 when it
	// committed none on the partition.
	CommittedOffset int64 `json:"committed_offset"`
	// Lag is EndOffset − CommittedOffset, or EndOffset minus the log
	// start offset when nothing is committed: the records the sink would
	// still consume.
	Lag int64 `json:"lag"`
}

// Readiness is the body of a 200 answer to GET /readyz: the coordinator
// started and has read its topics to their end, so it answers reads. It
// stays ready while NATS or the leader is away (writes then answer 503
// at once); Checks say what works and what does not.
type Readiness struct {
	Status string `json:"status"`
	// Role is leader or follower.
	Role string `json:"role"`
	// Leader is the leader's REST address ("" while none is known).
	Leader string `json:"leader"`
	// Checks are every check's outcome, those that do not decide
	// readiness included (NATS, the leader).
	Checks []HealthCheck `json:"checks,omitempty"`
}

// HealthCheck is one check of a readiness answer.
type HealthCheck struct {
	// Name is the check's name: started, kafka, nats, leader.
	Name string `json:"name"`
	// OK is whether it passed.
	OK bool `json:"ok"`
	// Required is whether readiness depends on it.
	Required bool `json:"required"`
	// Message says what failed, and since when if known.
	Message string `json:"message,omitempty"`
}

// ConnectorGauges is the body of GET /sluice/connectors/{name}/gauges: the
// gauges each running task of the connector reports of itself (a
// replication slot's lag, a snapshot's progress), as its agent read them
// when asked. The same values are on the agents' /metrics as
// sluice_connector_<name>.
type ConnectorGauges struct {
	Connector string `json:"connector"`
	// Tasks are the connector's tasks, by id; a task whose agent did not
	// answer has Error set instead of gauges.
	Tasks []TaskGauges `json:"tasks"`
}

// TaskGauges are the gauges of one task.
type TaskGauges struct {
	ID int `json:"id"`
	// WorkerID is the agent the task is placed on ("" for a task placed
	// nowhere).
	WorkerID string `json:"worker_id"`
	// Gauges are sorted by name, then labels; empty for a task that
	// reports none (not every connector does) or has not started yet.
	Gauges []Gauge `json:"gauges"`
	// Error says why the task's gauges could not be read: its agent did
	// not answer in time, or does not run it (yet).
	Error string `json:"error,omitempty"`
}

// Gauge is one measurement a task reports of itself (connect.Gauge): Name
// without Sluice's sluice_connector_ prefix, Labels telling apart the
// gauges of one name (a table, a stream).
type Gauge struct {
	Name   string            `json:"name"`
	Help   string            `json:"help,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	Value  float64           `json:"value"`
}
