package javahost

import (
	"context"
	"fmt"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
)

// SourceTask is a Java plugin's source task run by the host. Its records
// come already converted (Serialized), each with the host's seq as its
// Ref for task.commit_records.
type SourceTask struct {
	hostTask
	// transactions takes the task's requests for the end of a batch
	// (nil unless it defines its own transaction boundaries).
	transactions connect.TransactionContext
}

// The runtime finds these optional interfaces on it.
var (
	_ connect.SourceTask      = (*SourceTask)(nil)
	_ connect.RecordCommitter = (*SourceTask)(nil)
	_ connect.OffsetCommitter = (*SourceTask)(nil)
)

// Start implements connect.SourceTask.
func (t *SourceTask) Start(ctx context.Context, tc connect.SourceTaskContext, props map[string]string) error {
	t.offsets, t.transactions = tc.Offsets, tc.Transactions
	return t.start(ctx, props, t, connect.KindSource)
}

// Poll implements connect.SourceTask. The call is not cut off when ctx
// ends: the protocol has one request per task at a time, so the stop that
// follows must wait for the poll's answer (as a Java poll returns
// promptly, or ends when its JVM does).
func (t *SourceTask) Poll(ctx context.Context) ([]connect.SourceRecord, error) {
	if t.c == nil {
		return nil, fmt.Errorf("task.poll: task %s not started", t.id)
	}
	body, err := t.c.Call(context.WithoutCancel(ctx), OpTaskPoll, mustJSON(taskRef{t.id}))
	if err != nil {
		return nil, asTaskError(err)
	}
	batch, err := decodeSourceBatch(body)
	if err != nil {
		return nil, err
	}
	if t.transactions != nil {
		// The runtime looks at the requests once the batch is sent.
		if batch.commit {
			t.transactions.CommitTransaction()
		}
		if batch.abort {
			t.transactions.AbortTransaction()
		}
	}
	return batch.records, nil
}

// CommitRecords implements connect.RecordCommitter: commitRecord of each
// acknowledged record, by the host's seq.
func (t *SourceTask) CommitRecords(ctx context.Context, recs []connect.RecordMetadata) error {
	req := commitRecordsRequest{ID: t.id, Records: make([]committedRecord, len(recs))}
	for i, r := range recs {
		req.Records[i] = committedRecord{Seq: uint32(r.Record.Ref), Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}
	}
	return t.call(ctx, OpTaskCommitRecords, req, nil)
}

// Commit implements connect.OffsetCommitter.
func (t *SourceTask) Commit(ctx context.Context) error {
	return t.call(ctx, OpTaskCommit, taskRef{t.id}, nil)
}

// Stop implements connect.SourceTask.
func (t *SourceTask) Stop() error { return t.stop(t) }

// notice: the host sends a source task none.
func (t *SourceTask) notice(string, []byte) {}

// NewSourceTask makes the task id of a Java source connector.
func (f *Tasks) NewSourceTask(id api.TaskID, conn map[string]string) connect.SourceTask {
	return &SourceTask{hostTask: newHostTask(f.sup, id, conn, f.worker)}
}
