package records

import (
	"encoding/json"
	"fmt"
	"strings"
)

const (
	prefixStatusConnector = "status-connector-"
	prefixStatusTask      = "status-task-"
	prefixStatusTopic     = "status-topic-"
	topicSeparator        = ":connector-"
)

// Status is a connector's or task's status record value.
type Status struct {
	State      string  `json:"state"`
	Trace      *string `json:"trace"`
	WorkerID   string  `json:"worker_id"`
	Generation int64   `json:"generation"`
}

// StatusKind says what a status-topic record is about.
type StatusKind int

// The kinds of status-topic records.
const (
	StatusUnknown StatusKind = iota
	StatusConnector
	StatusTask
	StatusTopic
)

// StatusRecord is a decoded status-topic record.
type StatusRecord struct {
	Kind      StatusKind
	Connector string
	Task      int
	Topic     string
	// Status is nil for a tombstone, and for topic records.
	Status *Status
	// TopicUse is set for a live topic record.
	TopicUse  *TopicUse
	Tombstone bool
}

// TopicUse is the value of a KIP-558 topic record: a connector used a topic.
type TopicUse struct {
	Name              string `json:"name"`
	Connector         string `json:"connector"`
	Task              int    `json:"task"`
	DiscoverTimestamp int64  `json:"discoverTimestamp"`
}

type topicValue struct {
	Topic TopicUse `json:"topic"`
}

// ConnectorStatusKey is the status-topic key of a connector's status.
func ConnectorStatusKey(name string) string { return prefixStatusConnector + name }

// TaskStatusKey is the status-topic key of a task's status.
func TaskStatusKey(name string, task int) string {
	return fmt.Sprintf("%s%s-%d", prefixStatusTask, name, task)
}

// TopicStatusKey is the status-topic key recording that connector used topic.
func TopicStatusKey(connector, topic string) string {
	return prefixStatusTopic + topic + topicSeparator + connector
}

// MaxTraceBytes bounds a status trace: a plugin's error text can be any
// size, and one status record the broker refuses would hold up every
// status write queued behind it.
const MaxTraceBytes = 32 << 10

// EncodeStatus encodes a status value; an empty trace is written as null,
// and a trace over MaxTraceBytes is cut there, saying so.
func EncodeStatus(state, trace, workerID string, generation int64) []byte {
	s := Status{State: state, WorkerID: workerID, Generation: generation}
	if len(trace) > MaxTraceBytes {
		trace = strings.ToValidUTF8(trace[:MaxTraceBytes], "") + "\n… (trace cut at 32 KiB)"
	}
	if trace != "" {
		s.Trace = &trace
	}
	return mustJSON(s)
}

// EncodeTopicUse encodes a KIP-558 topic record value.
func EncodeTopicUse(u TopicUse) []byte { return mustJSON(topicValue{Topic: u}) }

// DecodeStatus decodes a status-topic record.
func DecodeStatus(key string, value []byte) (StatusRecord, error) {
	rec := StatusRecord{Tombstone: value == nil}
	switch {
	case strings.HasPrefix(key, prefixStatusConnector):
		rec.Kind, rec.Connector = StatusConnector, strings.TrimPrefix(key, prefixStatusConnector)
	case strings.HasPrefix(key, prefixStatusTask):
		name, task, ok := splitTaskKey(strings.TrimPrefix(key, prefixStatusTask))
		if !ok {
			return rec, fmt.Errorf("decode %s: malformed task status key", key)
		}
		rec.Kind, rec.Connector, rec.Task = StatusTask, name, task
	case strings.HasPrefix(key, prefixStatusTopic):
		rest := strings.TrimPrefix(key, prefixStatusTopic)
		i := strings.LastIndex(rest, topicSeparator)
		if i < 0 {
			return rec, fmt.Errorf("decode %s: malformed topic status key", key)
		}
		rec.Kind, rec.Topic, rec.Connector = StatusTopic, rest[:i], rest[i+len(topicSeparator):]
		if value != nil {
			var v topicValue
			if err := json.Unmarshal(value, &v); err != nil {
				return rec, fmt.Errorf("decode %s: %w", key, err)
			}
			rec.TopicUse = &v.Topic
		}
		return rec, nil
	default:
		return rec, nil
	}
	if value != nil {
		var s Status
		if err := json.Unmarshal(value, &s); err != nil {
			return rec, fmt.Errorf("decode %s: %w", key, err)
		}
		rec.Status = &s
	}
	return rec, nil
}
