package javahost

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sluice-io/sluice/connect"
)

// What the host tells the agent of the records a sink task could not
// process (errors.tolerance=all with a dead letter queue): the failures
// of conversions and transformations in task.put's reply, by index in the
// batch, and the records the task itself reports
// (SinkTaskContext.errantRecordReporter()) in task.report requests. The
// agent writes both to the connector's DLQ.

// failure is a record's failure as the host describes it: Kafka Connect's
// stage, the class that failed, and its exception.
type failure struct {
	Stage     string  `json:"stage"`
	Class     string  `json:"class"`
	Exception string  `json:"exception"`
	Message   *string `json:"message"`
	Trace     string  `json:"trace"`
}

func (f *failure) letter(rec connect.RawSinkRecord) connect.DeadLetter {
	return connect.DeadLetter{Record: rec, Stage: f.Stage, Class: f.Class, Exception: f.Exception,
		Message: f.Message, Trace: f.Trace}
}

// putReply is task.put's reply.
type putReply struct {
	Errant []struct {
		Index int `json:"index"`
		failure
	} `json:"errant"`
}

// writeErrant writes the records of batch that task.put's reply names
// to the DLQ, before PutRaw returns: the runner commits the batch's
// offsets only after that.
func (h *hostTask) writeErrant(ctx context.Context, reply []byte, batch []connect.RawSinkRecord) error {
	var r putReply
	if err := json.Unmarshal(reply, &r); err != nil {
		return fmt.Errorf("task.put: decode the reply: %w", err)
	}
	if len(r.Errant) == 0 {
		return nil
	}
	if h.dead == nil {
		return fmt.Errorf("task.put: the host failed %d records for a dead letter queue, but task %s has none", len(r.Errant), h.id)
	}
	letters := make([]connect.DeadLetter, len(r.Errant))
	for i := range r.Errant {
		e := &r.Errant[i]
		if e.Index < 0 || e.Index >= len(batch) {
			return fmt.Errorf("task.put: the host failed record %d of a batch of %d", e.Index, len(batch))
		}
		letters[i] = e.letter(batch[e.Index])
	}
	if err := h.dead.Write(ctx, letters); err != nil {
		return fmt.Errorf("task %s: %w", h.id, err)
	}
	return nil
}

// reportedRecord is a record in a task.report request: the consumed one
// when the task reported a record of the batch being put, else the one
// the task's converters made of what it reported.
type reportedRecord struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	Offset        int64  `json:"offset"`
	Timestamp     *int64 `json:"timestamp"`
	TimestampType uint8  `json:"timestamp_type"`
	Key           []byte `json:"key"`
	Value         []byte `json:"value"`
	Headers       []struct {
		Key   string `json:"key"`
		Value []byte `json:"value"`
	} `json:"headers"`
}

func (r *reportedRecord) raw() connect.RawSinkRecord {
	rec := connect.RawSinkRecord{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value}
	if r.Timestamp != nil {
		rec.Timestamp = time.UnixMilli(*r.Timestamp)
		rec.TimestampType = r.TimestampType
	}
	for _, h := range r.Headers {
		rec.Headers = append(rec.Headers, connect.Header{Key: h.Key, Value: h.Value})
	}
	return rec
}

// report answers task.report: the record is written to the DLQ before the
// reply, which completes the Future the task's report() returned.
func (h *hostTask) report(ctx context.Context, body []byte) ([]byte, error) {
	var req struct {
		Record reportedRecord `json:"record"`
		failure
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("task.report: %w", err)
	}
	if h.dead == nil {
		return nil, fmt.Errorf("task.report: task %s has no dead letter queue", h.id)
	}
	if err := h.dead.Write(ctx, []connect.DeadLetter{req.letter(req.Record.raw())}); err != nil {
		return nil, fmt.Errorf("task.report: task %s: %w", h.id, err)
	}
	return []byte("{}"), nil
}
