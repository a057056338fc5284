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

func (f *failure) letter(rec connect.RawSinkRecord) connect.DeadLetter {
	return connect.DeadLetter{Record: rec, Stage: f.Stage, Class: f.Class, Exception: f.Exception,
		Message: f.Message, Trace: f.Trace}
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
	var req taskReportRequest
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
