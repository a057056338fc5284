package javahost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
)

// SinkTask is a Java plugin's sink task run by the host: it takes Kafka's
// bytes (the host converts them), is told of partition assignments,
// decides what is committed, and passes the SinkTaskContext actions the
// host sends on to its runner.
type SinkTask struct {
	hostTask
	control connect.SinkControl
}

// The runtime finds these optional interfaces on it.
var (
	_ connect.SinkTask         = (*SinkTask)(nil)
	_ connect.RawSinkTask      = (*SinkTask)(nil)
	_ connect.PartitionHandler = (*SinkTask)(nil)
	_ connect.PreCommitter     = (*SinkTask)(nil)
)

// errRawOnly says a runner handed converted records to a task that only
// takes Kafka's bytes.
var errRawOnly = errors.New("a Java sink task takes raw records (PutRaw) and commits through PreCommit")

// Start implements connect.SinkTask.
func (t *SinkTask) Start(ctx context.Context, tc connect.SinkTaskContext, props map[string]string) error {
	t.control = tc.Control
	t.dead = tc.DeadLetters
	return t.start(ctx, props, t, connect.KindSink)
}

// Put implements connect.SinkTask; the runtime calls PutRaw instead.
func (t *SinkTask) Put(context.Context, []connect.SinkRecord) error { return errRawOnly }

// Flush implements connect.SinkTask; the runtime calls PreCommit instead
// (Kafka Connect's preCommit flushes).
func (t *SinkTask) Flush(context.Context) error { return errRawOnly }

// PutRaw implements connect.RawSinkTask.
func (t *SinkTask) PutRaw(ctx context.Context, recs []connect.RawSinkRecord) error {
	body, err := encodeSinkBatch(t.id, recs)
	if err != nil {
		return err
	}
	if t.c == nil {
		return fmt.Errorf("task.put: task %s not started", t.id)
	}
	reply, err := t.c.Call(ctx, OpTaskPut, body)
	if err != nil {
		return asTaskError(err)
	}
	return t.writeErrant(ctx, reply, recs)
}

func toWire(ps []connect.TopicPartition) []topicPartition {
	out := make([]topicPartition, len(ps))
	for i, p := range ps {
		out[i] = topicPartition(p)
	}
	return out
}

func fromWire(ps []topicPartition) []connect.TopicPartition {
	out := make([]connect.TopicPartition, len(ps))
	for i, p := range ps {
		out[i] = connect.TopicPartition(p)
	}
	return out
}

// Open implements connect.PartitionHandler.
func (t *SinkTask) Open(ctx context.Context, ps []connect.TopicPartition) error {
	return t.call(ctx, OpTaskOpen, partitionsReq{t.id, toWire(ps)}, nil)
}

// Close implements connect.PartitionHandler.
func (t *SinkTask) Close(ctx context.Context, ps []connect.TopicPartition) error {
	return t.call(ctx, OpTaskClose, partitionsReq{t.id, toWire(ps)}, nil)
}

func offsetsToWire(m map[connect.TopicPartition]int64) []partitionOffset {
	out := make([]partitionOffset, 0, len(m))
	for tp, o := range m {
		out = append(out, partitionOffset{Topic: tp.Topic, Partition: tp.Partition, Offset: o})
	}
	return out
}

func offsetsFromWire(ps []partitionOffset) map[connect.TopicPartition]int64 {
	out := make(map[connect.TopicPartition]int64, len(ps))
	for _, p := range ps {
		out[connect.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = p.Offset
	}
	return out
}

// PreCommit implements connect.PreCommitter.
func (t *SinkTask) PreCommit(ctx context.Context, offsets map[connect.TopicPartition]int64) (map[connect.TopicPartition]int64, error) {
	var resp offsetsReply
	if err := t.call(ctx, OpTaskPreCommit, offsetsMsg{t.id, offsetsToWire(offsets)}, &resp); err != nil {
		return nil, err
	}
	return offsetsFromWire(resp.Offsets), nil
}

// Stop implements connect.SinkTask.
func (t *SinkTask) Stop() error { return t.stop(t) }

// notice passes the SinkTaskContext actions on to the runner.
func (t *SinkTask) notice(op string, body []byte) {
	if t.control == nil {
		return
	}
	switch op {
	case OpTaskRequestCommit:
		t.control.RequestCommit()
	case OpTaskRewind:
		var m offsetsMsg
		if err := json.Unmarshal(body, &m); err == nil {
			t.control.Rewind(offsetsFromWire(m.Offsets))
		}
	case OpTaskPause, OpTaskResume:
		var m partitionsReq
		if err := json.Unmarshal(body, &m); err != nil {
			return
		}
		if op == OpTaskPause {
			t.control.Pause(fromWire(m.Partitions)...)
		} else {
			t.control.Resume(fromWire(m.Partitions)...)
		}
	}
}

// NewSinkTask makes the task id of a Java sink connector.
func (f *Tasks) NewSinkTask(id api.TaskID, conn map[string]string) connect.SinkTask {
	return &SinkTask{hostTask: newHostTask(f.sup, id, conn, f.worker)}
}
