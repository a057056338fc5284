package wire

// Offset operations are executed by an agent: the coordinator validates the
// request and checks the connector's state, then sends one
// SourceOffsetsRequest (SubjectAgentSourceOffsets) or SinkOffsetsRequest
// (SubjectAgentSinkOffsets), or one OffsetsReplaceRequest
// (SubjectAgentOffsetsReplace) for a change that replaces all of a source
// connector's offsets (a reset, a create's initial offsets).

// Offset operation kinds.
const (
	// OffsetsOpAlter sets (or, with a null offset, removes) the offsets
	// it lists and leaves the others.
	OffsetsOpAlter = "alter"
	// OffsetsOpReset removes every offset of the connector.
	OffsetsOpReset = "reset"
)

// OffsetWrite is one offsets-topic record: the key's JSON text and the
// value's JSON text, nil for a tombstone.
type OffsetWrite struct {
	Key   string  `json:"key"`
	Value *string `json:"value"`
	// Topic, when set, confines the write to that one of the request's
	// topics (a restore puts each topic back as it was); empty: every
	// topic of the request. Only set with a ConnectorTopic.
	Topic string `json:"topic,omitempty"`
}

// SinkPartitionOffset is one partition of a sink's consumer group.
type SinkPartitionOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Offset is nil to delete the partition's committed offset.
	Offset *int64 `json:"offset"`
}

// SourceOffsetsRequest asks an agent to change a source connector's
// offsets, all or nothing: every transactional id that may hold the
// connector's offsets (FenceIDs) is fenced first, then Writes go in one
// transaction under TxnID. A request without Writes only fences.
type SourceOffsetsRequest struct {
	Term      int64  `json:"term"`
	Connector string `json:"connector"`
	// Op is OffsetsOpAlter or OffsetsOpReset.
	Op       string        `json:"op"`
	FenceIDs []string      `json:"fence_ids,omitempty"`
	TxnID    string        `json:"txn_id,omitempty"`
	Topic    string        `json:"topic,omitempty"`
	Writes   []OffsetWrite `json:"writes,omitempty"`
	// ConnectorTopic is the connector's own offsets topic (KIP-618), ""
	// when it has none: Writes then go to it and to Topic, in the same
	// transaction.
	ConnectorTopic string `json:"connector_topic,omitempty"`
	// CallerWaits: see OffsetsReply.Written.
	CallerWaits bool `json:"caller_waits,omitempty"`
}

// SinkOffsetsRequest asks an agent to change a sink connector's consumer
// group offsets, all or nothing: alter commits or deletes the listed
// partitions' offsets; reset deletes the group.
type SinkOffsetsRequest struct {
	Term      int64  `json:"term"`
	Connector string `json:"connector"`
	// Op is OffsetsOpAlter or OffsetsOpReset.
	Op      string                `json:"op"`
	Group   string                `json:"group"`
	Offsets []SinkPartitionOffset `json:"offsets,omitempty"`
}

// OffsetsReplaceRequest asks an agent to replace all of a source
// connector's offsets with Writes, all or nothing: it fences every id in
// FenceIDs, then reads the offsets topic to its end itself and writes, in
// one transaction under TxnID, a tombstone for every key of every partition
// of the connector that holds an offset, except the keys Writes names, and
// then Writes. A reset is a replace with no Writes.
//
// The agent reading the keys itself keeps the request as small as what the
// caller adds, however many partitions the connector accumulated; an
// SourceOffsetsRequest would carry a tombstone for every one of them. Reading
// after fencing also catches a partition a zombie task wrote after the
// coordinator last read the topic.
type OffsetsReplaceRequest struct {
	Term      int64         `json:"term"`
	Connector string        `json:"connector"`
	FenceIDs  []string      `json:"fence_ids"`
	TxnID     string        `json:"txn_id"`
	Topic     string        `json:"topic"`
	Writes    []OffsetWrite `json:"writes,omitempty"`
	// ConnectorTopic is the connector's own offsets topic, "" when it has
	// none: the agent then reads both topics, tombstones the keys of both
	// in both, and writes Writes to both, in one transaction.
	ConnectorTopic string `json:"connector_topic,omitempty"`

	// CallerWaits: see OffsetsReply.Written.
	CallerWaits bool `json:"caller_waits,omitempty"`
}

// OffsetsReply reports success; failures come back as an *Error.
type OffsetsReply struct {
	// Written is, for a source change whose request set CallerWaits, the
	// last offset the transaction wrote in each partition: the agent
	// answers as soon as the transaction committed, and the caller waits
	// until read_committed readers see these (the last stable offset
	// passes them) — meanwhile doing its own work, such as recording the
	// change. Without CallerWaits, or from an agent that does not know
	// it, the agent waits itself and Written is empty.
	Written []WrittenOffset `json:"written,omitempty"`
}

// WrittenOffset is the offset of a record written to a partition.
type WrittenOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

// WriteRecords orders writes for the worker's offsets topic and, when
// connectorTopic is set, the connector's own, as Kafka Connect writes
// them: the worker topic's tombstones, then every write to the connector's
// topic, then the worker topic's offsets. A write whose Topic is set goes
// to that topic alone. In one transaction the order only shows in the raw
// topics, where it matches Kafka Connect's.
func WriteRecords(writes []OffsetWrite, topic, connectorTopic string) []TopicWrite {
	if connectorTopic == "" || connectorTopic == topic {
		out := make([]TopicWrite, len(writes))
		for i, w := range writes {
			out[i] = TopicWrite{Topic: topic, OffsetWrite: w}
			if w.Topic != "" {
				out[i].Topic = w.Topic
			}
		}
		return out
	}
	to := func(w OffsetWrite, t string) bool { return w.Topic == "" || w.Topic == t }
	out := make([]TopicWrite, 0, 2*len(writes))
	for _, w := range writes {
		if w.Value == nil && to(w, topic) {
			out = append(out, TopicWrite{Topic: topic, OffsetWrite: w})
		}
	}
	for _, w := range writes {
		if to(w, connectorTopic) {
			out = append(out, TopicWrite{Topic: connectorTopic, OffsetWrite: w})
		}
	}
	for _, w := range writes {
		if w.Value != nil && to(w, topic) {
			out = append(out, TopicWrite{Topic: topic, OffsetWrite: w})
		}
	}
	return out
}

// TopicWrite is an OffsetWrite bound for one topic.
type TopicWrite struct {
	Topic string
	OffsetWrite
}
