// Package dlq writes a sink connector's dead letter queue
// (errors.deadletterqueue.*): the records a sink could not convert,
// transform or put are produced to the DLQ topic as they were consumed —
// key, value, headers and timestamp unchanged — followed, when
// errors.deadletterqueue.context.headers.enable is true, by Kafka
// Connect's __connect.errors.* headers naming where the record came from
// and what failed. It is Kafka Connect's DeadLetterQueueReporter for any
// sink the agent runs: the Java host's tasks report their failures to the
// agent, which writes them here; Go sinks can use the same Writer.
//
// The topic is created when missing, with one partition and
// errors.deadletterqueue.topic.replication.factor replicas (default 3),
// when the writer opens, as Kafka Connect does when the task starts.
package dlq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/shared/kafkautil"
)

// The connector config keys, as Kafka Connect's SinkConnectorConfig names them.
const (
	TopicConfig             = "errors.deadletterqueue.topic.name"
	ReplicationFactorConfig = "errors.deadletterqueue.topic.replication.factor"
	ContextHeadersConfig    = "errors.deadletterqueue.context.headers.enable"
)

// The context headers, as Kafka Connect's DeadLetterQueueReporter names them.
const (
	HeaderPrefix         = "__connect.errors."
	HeaderTopic          = HeaderPrefix + "topic"
	HeaderPartition      = HeaderPrefix + "partition"
	HeaderOffset         = HeaderPrefix + "offset"
	HeaderConnectorName  = HeaderPrefix + "connector.name"
	HeaderTaskID         = HeaderPrefix + "task.id"
	HeaderStage          = HeaderPrefix + "stage"
	HeaderClassName      = HeaderPrefix + "class.name"
	HeaderExceptionClass = HeaderPrefix + "exception.class.name"
	HeaderExceptionMsg   = HeaderPrefix + "exception.message"
	HeaderStackTrace     = HeaderPrefix + "exception.stacktrace"
)

// defaultReplicationFactor is Kafka Connect's default for the DLQ topic.
const defaultReplicationFactor = 3

// Config is one sink task's dead letter queue.
type Config struct {
	// Topic is the DLQ topic.
	Topic string
	// ReplicationFactor is the topic's when the writer creates it.
	ReplicationFactor int16
	// ContextHeaders adds the __connect.errors.* headers to each letter.
	ContextHeaders bool
	// Connector and Task name the task in the context headers.
	Connector string
	Task      int
}

// FromConnectorConfig reads the DLQ settings of a connector config for
// its task number task; ok is false when the connector has no DLQ topic.
func FromConnectorConfig(props map[string]string, connector string, task int) (cfg Config, ok bool, err error) {
	cfg = Config{Topic: connect.JavaTrim(props[TopicConfig]), ReplicationFactor: defaultReplicationFactor,
		Connector: connector, Task: task}
	if cfg.Topic == "" {
		return Config{}, false, nil
	}
	if v := connect.JavaTrim(props[ReplicationFactorConfig]); v != "" {
		rf, err := strconv.ParseInt(v, 10, 16)
		if err != nil {
			return Config{}, false, fmt.Errorf("%s: %q is not a short: %w", ReplicationFactorConfig, v, err)
		}
		cfg.ReplicationFactor = int16(rf)
	}
	if v := connect.JavaTrim(props[ContextHeadersConfig]); v != "" {
		if cfg.ContextHeaders, err = strconv.ParseBool(strings.ToLower(v)); err != nil {
			return Config{}, false, fmt.Errorf("%s: %q is not a boolean: %w", ContextHeadersConfig, v, err)
		}
	}
	return cfg, true, nil
}

// Writer produces dead letters to one DLQ topic; it implements
// connect.DeadLetterQueue.
type Writer struct {
	cfg Config
	cl  *kgo.Client
}

var _ connect.DeadLetterQueue = (*Writer)(nil)

// Open makes the writer's producer from opts (the agent's client options
// for the task) and creates the DLQ topic when it does not exist.
func Open(ctx context.Context, cfg Config, opts ...kgo.Opt) (*Writer, error) {
	if cfg.Topic == "" {
		return nil, errors.New("dead letter queue: no topic")
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("dead letter queue %s: producer: %w", cfg.Topic, err)
	}
	if err := ensureTopic(ctx, kadm.NewClient(cl), cfg); err != nil {
		cl.Close()
		return nil, fmt.Errorf("could not initialize dead letter queue with topic=%s: %w", cfg.Topic, err)
	}
	return &Writer{cfg: cfg, cl: cl}, nil
}

// ensureTopic creates the topic unless it is listed already: asking first,
// as Kafka Connect does, lets a principal that may write to an existing
// topic but not create topics use it. All topics are listed, as Kafka
// Connect lists them: asking for a missing one by name makes the client
// retry its metadata request for seconds.
func ensureTopic(ctx context.Context, adm *kadm.Client, cfg Config) error {
	listed, err := adm.ListTopics(ctx)
	if err != nil {
		return fmt.Errorf("list topics: %w", err)
	}
	if d, ok := listed[cfg.Topic]; ok && d.Err == nil {
		return nil
	}
	resp, err := adm.CreateTopic(ctx, 1, cfg.ReplicationFactor, nil, cfg.Topic)
	if err == nil && resp.Err != nil {
		err = resp.Err
		if resp.ErrMessage != "" {
			err = &kafkautil.BrokerError{Err: resp.Err, Message: resp.ErrMessage}
		}
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("create topic: %w", err)
	}
	return kafkautil.WaitTopics(ctx, adm, cfg.Topic)
}

// Write produces the letters, in order, and returns once Kafka has
// acknowledged all of them. Unlike Kafka Connect, which logs a failed DLQ
// write and moves on, a failure is returned: the caller must then not
// commit the records' offsets, or a record would be neither in the sink
// nor in the DLQ.
func (w *Writer) Write(ctx context.Context, letters []connect.DeadLetter) error {
	if len(letters) == 0 {
		return nil
	}
	recs := make([]*kgo.Record, len(letters))
	for i := range letters {
		recs[i] = w.record(&letters[i])
	}
	if err := w.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("could not produce message to dead letter queue. topic=%s: %w", w.cfg.Topic, err)
	}
	return nil
}

// record is the letter as the DLQ holds it: the consumed record's key,
// value, headers and timestamp (none: the producer's time), then the
// context headers.
func (w *Writer) record(l *connect.DeadLetter) *kgo.Record {
	r := &kgo.Record{Topic: w.cfg.Topic, Key: l.Record.Key, Value: l.Record.Value, Timestamp: l.Record.Timestamp}
	if r.Timestamp.IsZero() {
		r.Timestamp = time.Now()
	}
	for _, h := range l.Record.Headers {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
	if w.cfg.ContextHeaders {
		r.Headers = append(r.Headers, ContextHeaders(w.cfg, l)...)
	}
	return r
}

// ContextHeaders are Kafka Connect's __connect.errors.* headers of a
// letter, in its order, each a UTF-8 string (numbers in decimal). The
// message header is null when the error had none, and the stack trace is
// left out when there is none.
func ContextHeaders(cfg Config, l *connect.DeadLetter) []kgo.RecordHeader {
	s := func(key, v string) kgo.RecordHeader { return kgo.RecordHeader{Key: key, Value: []byte(v)} }
	hs := []kgo.RecordHeader{
		s(HeaderTopic, l.Record.Topic),
		s(HeaderPartition, strconv.FormatInt(int64(l.Record.Partition), 10)),
		s(HeaderOffset, strconv.FormatInt(l.Record.Offset, 10)),
		s(HeaderConnectorName, cfg.Connector),
		s(HeaderTaskID, strconv.Itoa(cfg.Task)),
		s(HeaderStage, l.Stage),
		s(HeaderClassName, l.Class),
	}
	if l.Exception == "" {
		return hs // no error: Kafka writes only where the record came from
	}
	hs = append(hs, s(HeaderExceptionClass, l.Exception))
	msg := kgo.RecordHeader{Key: HeaderExceptionMsg}
	if l.Message != nil {
		msg.Value = []byte(*l.Message)
	}
	hs = append(hs, msg)
	if l.Trace != "" {
		hs = append(hs, s(HeaderStackTrace, l.Trace))
	}
	return hs
}

// Close flushes nothing (Write waits for its records) and closes the
// producer.
func (w *Writer) Close() { w.cl.Close() }
