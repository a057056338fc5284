package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/converters"
	"github.com/sluice-io/sluice/connect/transforms"
)

// A Go task's records go through its connector's transformations (sources
// after the poll, before the converters; sinks after the converters, before
// the put), under its errors.tolerance: with none a failure fails the task,
// with all the record is skipped (a source commits its position; a sink
// sends it to its dead letter queue when it has one), as Kafka Connect's
// RetryWithToleranceOperator does. Java tasks run their chain in the
// connector host.

// tolerance is a connector's errors.* handling of failed records.
type tolerance struct {
	all             bool // errors.tolerance=all
	log             bool // errors.log.enable
	includeMessages bool // errors.log.include.messages
}

func parseTolerance(conn map[string]string) tolerance {
	b := func(key string) bool { return strings.EqualFold(strings.TrimSpace(conn[key]), "true") }
	return tolerance{
		all:             strings.EqualFold(strings.TrimSpace(conn["errors.tolerance"]), "all"),
		log:             b("errors.log.enable"),
		includeMessages: b("errors.log.include.messages"),
	}
}

// errToleranceExceeded is Kafka Connect's failure of a task whose record
// failed under errors.tolerance=none.
var errToleranceExceeded = errors.New("Tolerance exceeded in error handler")

// report logs a record that failed at stage (its class named) as Kafka
// Connect's LogReporter does, when errors.log.enable is on.
func (tol tolerance) report(t *task, stage, class string, describe func() string, cause error) {
	if !tol.log {
		return
	}
	msg := fmt.Sprintf("Error encountered in task %s. Executing stage '%s' with class '%s'.", t.id.String(), stage, class)
	if tol.includeMessages {
		msg = strings.TrimSuffix(msg, ".") + ", where " + describe() + "."
	}
	t.log.Error(msg, "err", cause)
}

// verdict is nil when a failed record is to be skipped (errors.tolerance
// all), else the task's error.
func (tol tolerance) verdict(stage, class string, cause error) error {
	if tol.all {
		return nil
	}
	return fmt.Errorf("%w: Executing stage '%s' with class '%s': %w", errToleranceExceeded, stage, class, cause)
}

// framework is what Kafka Connect's worker puts around a Go task's records,
// alike for sources and sinks: the key, value and header converters (the
// header converter writes the headers transformations made), the
// transformation chain and the errors.* handling. A task that converts
// Kafka's bytes itself has none of it: its fields stay nil.
type framework struct {
	keyConv   connect.Converter
	valConv   connect.Converter
	hdrConv   connect.Converter
	chain     *transforms.Chain
	tolerance tolerance
}

// newFramework builds the connector's converters and transformation chain
// for a Go task.
func newFramework(t *task) (framework, error) {
	var f framework
	var err error
	if f.keyConv, err = converters.New(t.cfg.Registry, t.conn, t.cfg.KeyConverter, true); err != nil {
		return f, fmt.Errorf("key converter: %w", err)
	}
	if f.valConv, err = converters.New(t.cfg.Registry, t.conn, t.cfg.ValueConverter, false); err != nil {
		return f, fmt.Errorf("value converter: %w", err)
	}
	if f.hdrConv, err = converters.NewHeader(t.cfg.Registry, t.conn, t.cfg.HeaderConverter); err != nil {
		return f, fmt.Errorf("header converter: %w", err)
	}
	if f.chain, err = transforms.Build(t.cfg.Registry, t.conn); err != nil {
		return f, fmt.Errorf("transformations: %w", err)
	}
	f.tolerance = parseTolerance(t.conn)
	return f, nil
}

// transformSource runs a Go source's record through the chain: a dropped or
// skipped record keeps only its position (Dropped).
func (r *sourceRunner) transformSource(rec *connect.SourceRecord) error {
	if r.chain.Len() == 0 {
		return nil
	}
	in := &connect.TransformRecord{Topic: rec.Topic, KafkaPartition: rec.KafkaPartition, KeySchema: rec.KeySchema, Key: rec.Key,
		ValueSchema: rec.ValueSchema, Value: rec.Value, Timestamp: rec.Timestamp, Headers: rec.Headers}
	out, err := r.chain.Apply(in)
	if err != nil {
		class, cause := stageOf(err)
		r.tolerance.report(r.t, "TRANSFORMATION", class, func() string { return "source record is = " + fmt.Sprint(*in) }, cause)
		if ferr := r.tolerance.verdict("TRANSFORMATION", class, cause); ferr != nil {
			return ferr
		}
		out = nil
	}
	if out == nil {
		rec.Dropped = true
		return nil
	}
	rec.Topic, rec.KafkaPartition, rec.Timestamp, rec.Headers = out.Topic, out.KafkaPartition, out.Timestamp, out.Headers
	rec.KeySchema, rec.Key, rec.ValueSchema, rec.Value = out.KeySchema, out.Key, out.ValueSchema, out.Value
	return nil
}

// transformSink runs a Go sink's converted record through the chain; nil
// when it is dropped. A failure is a *transforms.StageError.
func (r *sinkRunner) transformSink(sr *connect.SinkRecord) (*connect.SinkRecord, error) {
	if r.chain.Len() == 0 {
		return sr, nil
	}
	p, off := sr.Partition, sr.Offset
	out, err := r.chain.Apply(&connect.TransformRecord{Topic: sr.Topic, KafkaPartition: &p, KeySchema: sr.KeySchema, Key: sr.Key,
		ValueSchema: sr.ValueSchema, Value: sr.Value, Timestamp: sr.Timestamp, Headers: sr.Headers, KafkaOffset: &off})
	if err != nil || out == nil {
		return nil, err
	}
	res := *sr
	res.Topic, res.Timestamp = out.Topic, out.Timestamp
	res.Headers = make([]connect.Header, len(out.Headers))
	for i, h := range out.Headers {
		if res.Headers[i] = h; h.Typed {
			v, err := writeHeader(r.hdrConv, out.Topic, h)
			if err != nil {
				return nil, &transforms.StageError{Class: converters.SimpleHeaderClass, Err: err}
			}
			res.Headers[i] = connect.Header{Key: h.Key, Value: v}
		}
	}
	if out.KafkaPartition != nil {
		res.Partition = *out.KafkaPartition
	}
	res.KeySchema, res.Key, res.ValueSchema, res.Value = out.KeySchema, out.Key, out.ValueSchema, out.Value
	return &res, nil
}

// writeHeader is a header's bytes: a typed one (a transformation's)
// written by the connector's header converter, any other as it is.
func writeHeader(conv connect.Converter, topic string, h connect.Header) ([]byte, error) {
	if !h.Typed || conv == nil {
		return h.Value, nil
	}
	b, err := conv.FromConnectData(topic, h.Schema, h.Data)
	if err != nil {
		return nil, fmt.Errorf("header converter, header %s: %w", h.Key, err)
	}
	return b, nil
}

// stageOf splits a chain's error into the failing transformation's class
// and its own error.
func stageOf(err error) (string, error) {
	if se, ok := errors.AsType[*transforms.StageError](err); ok {
		return se.Class, se.Err
	}
	return "", err
}

// skipSink handles a sink record that failed at stage: it is logged and
// written to the dead letter queue (if any), as Kafka Connect reports every
// failure; then under errors.tolerance=all it is skipped, and otherwise the
// task fails.
func (r *sinkRunner) skipSink(ctx context.Context, raw connect.RawSinkRecord, stage, class string, cause error) error {
	r.tolerance.report(r.t, stage, class, func() string {
		return fmt.Sprintf("consumed record is = %s-%d@%d", raw.Topic, raw.Partition, raw.Offset)
	}, cause)
	if r.dead != nil {
		msg := cause.Error()
		const exception = "org.apache.kafka.connect.errors.DataException"
		// Go errors have no stack; the trace header holds what Java's
		// first line would (Kafka Connect always writes the header).
		letter := connect.DeadLetter{Record: raw, Stage: stage, Class: class, Exception: exception, Message: &msg,
			Trace: exception + ": " + msg}
		if err := r.dead.Write(ctx, []connect.DeadLetter{letter}); err != nil {
			// Losing the record is not an option: fail the task (docs/plugins.md).
			return fmt.Errorf("write %s-%d@%d to the dead letter queue: %w", raw.Topic, raw.Partition, raw.Offset, err)
		}
	}
	return r.tolerance.verdict(stage, class, cause)
}
