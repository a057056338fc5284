package javahost

import (
	"encoding/json"
	"reflect"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"
)

// The agent↔host protocol (docs/plugins.md, "The protocol"): its version,
// its ops and the JSON bodies each carries, in one place. The Java side is
// connect/javahost (Protocol.java). testdata/frames holds a golden frame of
// every request, reply and notice — the exact bytes on the socket — which
// the Go tests (protocol_test.go) and the Java tests (GoldenFramesTest)
// both decode.

// ProtocolVersion is the version of the agent↔host protocol this agent
// speaks. Each side states its own at host.hello (helloRequest.Protocol,
// helloReply.Protocol) and refuses a peer of another version, naming both:
// the host answers the hello with an error, the agent fails the start.
const ProtocolVersion = 1

// Ops the agent sends the host; each gets exactly one reply.
const (
	// OpHostHello opens the connection: helloRequest, helloReply.
	OpHostHello = "host.hello"
	// OpPluginsList lists the plugin path's plugins: emptyBody,
	// []api.PluginInfo.
	OpPluginsList = "plugins.list"
	// OpConnectorValidate validates a config: connectorConfigRequest,
	// configsReply.
	OpConnectorValidate = "connector.validate"
	// OpConnectorConfigDef lists a class's config keys:
	// connectorClassRequest, configsReply.
	OpConnectorConfigDef = "connector.config_def"
	// OpConnectorStart starts a connector: connectorStartRequest,
	// emptyBody.
	OpConnectorStart = "connector.start"
	// OpConnectorTaskConfigs asks a started connector for its task
	// configs: taskConfigsRequest, taskConfigsReply.
	OpConnectorTaskConfigs = "connector.task_configs"
	// OpConnectorStop stops a connector: connectorRef, emptyBody.
	OpConnectorStop = "connector.stop"
	// OpConnectorAlterOffsets runs a class's alterOffsets:
	// alterOffsetsRequest, alterOffsetsReply.
	OpConnectorAlterOffsets = "connector.alter_offsets"
	// OpTaskStart starts a task: taskStartRequest, taskStartReply.
	OpTaskStart = "task.start"
	// OpTaskPoll polls a source task: taskRef, a binary source batch
	// (batch.go).
	OpTaskPoll = "task.poll"
	// OpTaskCommitRecords acknowledges written records:
	// commitRecordsRequest, emptyBody.
	OpTaskCommitRecords = "task.commit_records"
	// OpTaskCommit is SourceTask.commit(): taskRef, emptyBody.
	OpTaskCommit = "task.commit"
	// OpTaskOpen opens a sink task's partitions: partitionsReq, emptyBody.
	OpTaskOpen = "task.open"
	// OpTaskClose closes a sink task's partitions: partitionsReq,
	// emptyBody.
	OpTaskClose = "task.close"
	// OpTaskPut puts a binary sink batch (batch.go): putReply.
	OpTaskPut = "task.put"
	// OpTaskPreCommit is a sink task's preCommit: offsetsMsg, offsetsReply.
	OpTaskPreCommit = "task.pre_commit"
	// OpTaskStop stops a task: taskRef, emptyBody.
	OpTaskStop = "task.stop"
)

// Ops the host sends the agent: requests, which get a reply, and notices,
// which get none.
const (
	// OpOffsetsRead reads a task's or connector's offsets:
	// offsetsReadRequest, offsetsReadReply.
	OpOffsetsRead = "offsets.read"
	// OpTaskReport has a record written to a sink's dead letter queue:
	// taskReportRequest, emptyBody.
	OpTaskReport = "task.report"
	// OpConnectorReconfigure is ConnectorContext.requestTaskReconfiguration
	// (a notice): connectorRef.
	OpConnectorReconfigure = "connector.reconfigure"
	// OpConnectorError is ConnectorContext.raiseError (a notice):
	// connectorErrorNotice.
	OpConnectorError = "connector.error"
	// OpTaskRequestCommit is SinkTaskContext.requestCommit (a notice):
	// taskRef.
	OpTaskRequestCommit = "task.request_commit"
	// OpTaskRewind is SinkTaskContext.offset(...) (a notice): offsetsMsg.
	OpTaskRewind = "task.rewind"
	// OpTaskPause is SinkTaskContext.pause (a notice): partitionsReq.
	OpTaskPause = "task.pause"
	// OpTaskResume is SinkTaskContext.resume (a notice): partitionsReq.
	OpTaskResume = "task.resume"
)

// opSpec is one op of the protocol: who sends it, whether it is a notice,
// and its bodies' types; nil for a binary body (batch.go).
type opSpec struct {
	op       string
	fromHost bool
	notice   bool
	request  reflect.Type
	reply    reflect.Type
}

// protocolOps is every op of the protocol.
var protocolOps = []opSpec{
	{OpHostHello, false, false, reflect.TypeFor[helloRequest](), reflect.TypeFor[helloReply]()},
	{OpPluginsList, false, false, reflect.TypeFor[emptyBody](), reflect.TypeFor[[]api.PluginInfo]()},
	{OpConnectorValidate, false, false, reflect.TypeFor[connectorConfigRequest](), reflect.TypeFor[configsReply]()},
	{OpConnectorConfigDef, false, false, reflect.TypeFor[connectorClassRequest](), reflect.TypeFor[configsReply]()},
	{OpConnectorStart, false, false, reflect.TypeFor[connectorStartRequest](), reflect.TypeFor[emptyBody]()},
	{OpConnectorTaskConfigs, false, false, reflect.TypeFor[taskConfigsRequest](), reflect.TypeFor[taskConfigsReply]()},
	{OpConnectorStop, false, false, reflect.TypeFor[connectorRef](), reflect.TypeFor[emptyBody]()},
	{OpConnectorAlterOffsets, false, false, reflect.TypeFor[alterOffsetsRequest](), reflect.TypeFor[alterOffsetsReply]()},
	{OpTaskStart, false, false, reflect.TypeFor[taskStartRequest](), reflect.TypeFor[taskStartReply]()},
	{OpTaskPoll, false, false, reflect.TypeFor[taskRef](), nil},
	{OpTaskCommitRecords, false, false, reflect.TypeFor[commitRecordsRequest](), reflect.TypeFor[emptyBody]()},
	{OpTaskCommit, false, false, reflect.TypeFor[taskRef](), reflect.TypeFor[emptyBody]()},
	{OpTaskOpen, false, false, reflect.TypeFor[partitionsReq](), reflect.TypeFor[emptyBody]()},
	{OpTaskClose, false, false, reflect.TypeFor[partitionsReq](), reflect.TypeFor[emptyBody]()},
	{OpTaskPut, false, false, nil, reflect.TypeFor[putReply]()},
	{OpTaskPreCommit, false, false, reflect.TypeFor[offsetsMsg](), reflect.TypeFor[offsetsReply]()},
	{OpTaskStop, false, false, reflect.TypeFor[taskRef](), reflect.TypeFor[emptyBody]()},
	{OpOffsetsRead, true, false, reflect.TypeFor[offsetsReadRequest](), reflect.TypeFor[offsetsReadReply]()},
	{OpTaskReport, true, false, reflect.TypeFor[taskReportRequest](), reflect.TypeFor[emptyBody]()},
	{OpConnectorReconfigure, true, true, reflect.TypeFor[connectorRef](), nil},
	{OpConnectorError, true, true, reflect.TypeFor[connectorErrorNotice](), nil},
	{OpTaskRequestCommit, true, true, reflect.TypeFor[taskRef](), nil},
	{OpTaskRewind, true, true, reflect.TypeFor[offsetsMsg](), nil},
	{OpTaskPause, true, true, reflect.TypeFor[partitionsReq](), nil},
	{OpTaskResume, true, true, reflect.TypeFor[partitionsReq](), nil},
}

// emptyBody is the body "{}": a request that needs no fields, or a reply
// that says only that the op was done.
type emptyBody struct{}

// helloRequest opens the connection with the agent's protocol version.
type helloRequest struct {
	Protocol int `json:"protocol"`
}

// helloReply is the host's version, the Kafka version it runs, and its
// protocol version.
type helloReply struct {
	Version      string `json:"version"`
	KafkaVersion string `json:"kafka_version"`
	Protocol     int    `json:"protocol"`
}

// connectorConfigRequest is connector.validate's request.
type connectorConfigRequest struct {
	Config map[string]string `json:"config"`
}

// connectorClassRequest is connector.config_def's request: the class, and
// the version of it whose keys are asked for (KIP-891; empty: the newest
// the host has).
type connectorClassRequest struct {
	Class   string `json:"class"`
	Version string `json:"version,omitempty"`
}

// configsReply is Kafka Connect's validate entries (connector.validate)
// or key definitions (connector.config_def), and validate's exactly-once
// preflight answers.
type configsReply struct {
	Configs   json.RawMessage       `json:"configs"`
	Preflight *wire.SourcePreflight `json:"preflight,omitempty"`
}

// connectorStartRequest starts connector Name with Config.
type connectorStartRequest struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
}

// taskConfigsRequest asks a started connector for at most MaxTasks task
// configs.
type taskConfigsRequest struct {
	Name     string `json:"name"`
	MaxTasks int    `json:"max_tasks"`
}

// taskConfigsReply is a connector's task configs.
type taskConfigsReply struct {
	Configs []map[string]string `json:"configs"`
}

// connectorRef names a connector: connector.stop's request, the
// connector.reconfigure notice.
type connectorRef struct {
	Name string `json:"name"`
}

// connectorErrorNotice is ConnectorContext.raiseError's exception.
type connectorErrorNotice struct {
	Name    string `json:"name"`
	Message string `json:"message"`
	Trace   string `json:"trace"`
}

// alterOffsetsRequest runs Class's alterOffsets with Config and Offsets.
type alterOffsetsRequest struct {
	Class   string                `json:"class"`
	Config  map[string]string     `json:"config"`
	Offsets []api.ConnectorOffset `json:"offsets"`
}

// alterOffsetsReply is alterOffsets's answer.
type alterOffsetsReply struct {
	Definite bool `json:"definite"`
}

// taskStartRequest starts task ID with its connector's and its own
// config, and the agent's worker settings (converters, exactly-once).
type taskStartRequest struct {
	ID              string            `json:"id"`
	ConnectorConfig map[string]string `json:"connector_config"`
	TaskConfig      map[string]string `json:"task_config"`
	Worker          map[string]string `json:"worker"`
}

// taskStartReply says whether the task is a source or a sink task.
type taskStartReply struct {
	Kind string `json:"kind"`
}

// taskRef names a task.
type taskRef struct {
	ID string `json:"id"`
}

// topicPartition is a partition of a topic.
type topicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// partitionOffset is an offset in a partition.
type partitionOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

// partitionsReq is a task's partitions: task.open, task.close, and the
// task.pause and task.resume notices.
type partitionsReq struct {
	ID         string           `json:"id"`
	Partitions []topicPartition `json:"partitions"`
}

// offsetsMsg is a task's offsets: task.pre_commit's request and the
// task.rewind notice.
type offsetsMsg struct {
	ID      string            `json:"id"`
	Offsets []partitionOffset `json:"offsets"`
}

// offsetsReply is what a sink task's preCommit says may be committed.
type offsetsReply struct {
	Offsets []partitionOffset `json:"offsets"`
}

// committedRecord is a source record Kafka acknowledged, by the host's
// seq for it.
type committedRecord struct {
	Seq       uint32 `json:"seq"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

// commitRecordsRequest is task.commit_records's request.
type commitRecordsRequest struct {
	ID      string            `json:"id"`
	Records []committedRecord `json:"records"`
}

// offsetsReadRequest asks for the offsets of source partitions; ID is a
// task's id, or a started source connector's name.
type offsetsReadRequest struct {
	ID         string           `json:"id"`
	Partitions []map[string]any `json:"partitions"`
}

// offsetsReadReply is one offset (nil: none) per partition asked for.
type offsetsReadReply struct {
	Offsets []map[string]any `json:"offsets"`
}

// failure is a record's failure as the host describes it: Kafka Connect's
// stage, the class that failed, and its exception.
type failure struct {
	Stage     string  `json:"stage"`
	Class     string  `json:"class"`
	Exception string  `json:"exception"`
	Message   *string `json:"message"`
	Trace     string  `json:"trace"`
}

// errantRecord is a record of a put batch, by its index, whose conversion
// or transformation failed and was tolerated.
type errantRecord struct {
	Index int `json:"index"`
	failure
}

// putReply is task.put's reply.
type putReply struct {
	Errant []errantRecord `json:"errant,omitempty"`
}

// recordHeader is a header of a reportedRecord.
type recordHeader struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

// reportedRecord is a record in a task.report request: the consumed one
// when the task reported a record of the batch being put, else the one
// the task's converters made of what it reported.
type reportedRecord struct {
	Topic         string         `json:"topic"`
	Partition     int32          `json:"partition"`
	Offset        int64          `json:"offset"`
	Timestamp     *int64         `json:"timestamp"`
	TimestampType uint8          `json:"timestamp_type"`
	Key           []byte         `json:"key"`
	Value         []byte         `json:"value"`
	Headers       []recordHeader `json:"headers"`
}

// taskReportRequest is task.report's request: the record and its failure.
type taskReportRequest struct {
	ID     string         `json:"id"`
	Record reportedRecord `json:"record"`
	failure
}
