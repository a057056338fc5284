package runtime

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/connect"
)

// What the sink runner does for a task's optional hooks (connect's
// RawSinkTask, PartitionHandler, PreCommitter) and SinkControl: Kafka
// Connect's raw put, open/close, preCommit and SinkTaskContext actions.

// sinkControl queues what the task asked for (connect.SinkControl) until
// the runner's next step applies it, on the task's goroutine: the task may
// ask from any goroutine, even inside a call of the runner's.
type sinkControl struct {
	mu      sync.Mutex
	rewinds map[connect.TopicPartition]int64
	pause   map[connect.TopicPartition]bool // true: pause, false: resume
	commit  bool
}

// Rewind implements connect.SinkControl.
func (c *sinkControl) Rewind(offsets map[connect.TopicPartition]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rewinds == nil {
		c.rewinds = map[connect.TopicPartition]int64{}
	}
	maps.Copy(c.rewinds, offsets)
}

// Pause implements connect.SinkControl.
func (c *sinkControl) Pause(ps ...connect.TopicPartition) { c.setPaused(true, ps) }

// Resume implements connect.SinkControl.
func (c *sinkControl) Resume(ps ...connect.TopicPartition) { c.setPaused(false, ps) }

func (c *sinkControl) setPaused(p bool, ps []connect.TopicPartition) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pause == nil {
		c.pause = map[connect.TopicPartition]bool{}
	}
	for _, tp := range ps {
		c.pause[tp] = p
	}
}

// RequestCommit implements connect.SinkControl.
func (c *sinkControl) RequestCommit() {
	c.mu.Lock()
	c.commit = true
	c.mu.Unlock()
}

// take returns and clears what was asked.
func (c *sinkControl) take() (rewinds map[connect.TopicPartition]int64, pause map[connect.TopicPartition]bool, commit bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rewinds, pause, commit = c.rewinds, c.pause, c.commit
	c.rewinds, c.pause, c.commit = nil, nil, false
	return rewinds, pause, commit
}

// applyControl seeks, pauses and resumes as the task asked; it reports
// whether the task asked for a commit.
func (r *sinkRunner) applyControl() bool {
	rewinds, pause, commit := r.control.take()
	if len(rewinds) > 0 {
		set := map[string]map[int32]kgo.EpochOffset{}
		r.mu.Lock()
		for tp, o := range rewinds {
			if set[tp.Topic] == nil {
				set[tp.Topic] = map[int32]kgo.EpochOffset{}
			}
			set[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: o}
			// What PreCommit is told restarts there, as Kafka Connect's
			// currentOffsets does.
			r.consumed[tp] = o
		}
		r.mu.Unlock()
		r.client.SetOffsets(set)
	}
	paused, resumed := map[string][]int32{}, map[string][]int32{}
	for tp, p := range pause {
		if p {
			paused[tp.Topic] = append(paused[tp.Topic], tp.Partition)
		} else {
			resumed[tp.Topic] = append(resumed[tp.Topic], tp.Partition)
		}
	}
	if len(paused) > 0 {
		r.client.PauseFetchPartitions(paused)
	}
	if len(resumed) > 0 {
		r.client.ResumeFetchPartitions(resumed)
	}
	return commit
}

// putRaw hands the fetched records to a RawSinkTask as Kafka's bytes.
func (r *sinkRunner) putRaw(ctx context.Context, fetches kgo.Fetches, start time.Time) error {
	batch := make([]connect.RawSinkRecord, 0, fetches.NumRecords())
	fetches.EachRecord(func(kr *kgo.Record) {
		if !r.admits(kr.Topic) {
			return
		}
		rec := connect.RawSinkRecord{Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset, Key: kr.Key, Value: kr.Value}
		if !kr.Timestamp.IsZero() {
			rec.Timestamp = kr.Timestamp
			// franz-go: 0 create time, 1 log append time; the protocol adds 1.
			if tt := kr.Attrs.TimestampType(); tt >= 0 {
				rec.TimestampType = uint8(tt) + 1
			}
		}
		for _, h := range kr.Headers {
			rec.Headers = append(rec.Headers, connect.Header{Key: h.Key, Value: h.Value})
		}
		batch = append(batch, rec)
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.t.metrics.Put(len(batch))
	err := r.raw.PutRaw(ctx, batch)
	r.t.metrics.Batch(time.Since(start))
	if err != nil {
		r.putFailed = true
		r.t.metrics.Failed(len(batch))
		return fmt.Errorf("put: %w", err)
	}
	for _, rec := range batch {
		r.consumed[connect.TopicPartition{Topic: rec.Topic, Partition: rec.Partition}] = rec.Offset + 1
	}
	return nil
}

// preCommit asks the task what may be committed of what it was handed,
// and commits that in the group. Called with mu held.
func (r *sinkRunner) preCommit(ctx context.Context) error {
	current := map[connect.TopicPartition]int64{}
	for tp, o := range r.consumed {
		if r.assigned[tp] {
			current[tp] = o
		}
	}
	if len(current) == 0 {
		return nil
	}
	offsets, err := r.pre.PreCommit(ctx, current)
	if err != nil {
		return fmt.Errorf("pre-commit: %w", err)
	}
	commit := map[string]map[int32]kgo.EpochOffset{}
	for tp, o := range offsets {
		// Only the partitions this member holds, and only what changed.
		if last, ok := r.committed[tp]; !r.assigned[tp] || ok && last == o {
			continue
		}
		if commit[tp.Topic] == nil {
			commit[tp.Topic] = map[int32]kgo.EpochOffset{}
		}
		commit[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: o}
	}
	if len(commit) == 0 {
		return nil
	}
	var commitErr error
	r.client.CommitOffsetsSync(ctx, commit, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			commitErr = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil && commitErr == nil {
					commitErr = fmt.Errorf("%s-%d: %w", t.Topic, p.Partition, err)
				}
			}
		}
	})
	if commitErr != nil {
		return fmt.Errorf("commit offsets: %w", commitErr)
	}
	for topic, ps := range commit {
		for p, o := range ps {
			r.committed[connect.TopicPartition{Topic: topic, Partition: p}] = o.Offset
		}
	}
	return nil
}

// assign records newly assigned partitions and opens them in the task
// (once it started: open opens those assigned before).
func (r *sinkRunner) assign(ctx context.Context, m map[string][]int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	added := map[connect.TopicPartition]bool{}
	for topic, ps := range m {
		for _, p := range ps {
			tp := connect.TopicPartition{Topic: topic, Partition: p}
			r.assigned[tp] = true
			added[tp] = true
		}
	}
	if r.parts == nil || !r.started || len(added) == 0 {
		return
	}
	if err := r.parts.Open(ctx, sortedPartitions(added)); err != nil {
		// Kafka Connect fails the task here; the next put's error does so.
		r.putFailed = true
		r.t.log.Error("the task failed to open partitions", "err", err)
	}
}

// revoke closes revoked partitions in the task (after the commit that
// precedes it) and forgets them.
func (r *sinkRunner) revoke(ctx context.Context, m map[string][]int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	gone := map[connect.TopicPartition]bool{}
	for topic, ps := range m {
		for _, p := range ps {
			tp := connect.TopicPartition{Topic: topic, Partition: p}
			if r.assigned[tp] {
				gone[tp] = true
			}
			delete(r.assigned, tp)
			delete(r.consumed, tp)
			delete(r.committed, tp)
		}
	}
	if r.parts == nil || !r.started || len(gone) == 0 {
		return
	}
	if err := r.parts.Close(ctx, sortedPartitions(gone)); err != nil {
		r.t.log.Warn("the task failed to close partitions", "err", err)
	}
}

func sortedPartitions(m map[connect.TopicPartition]bool) []connect.TopicPartition {
	out := slices.Collect(maps.Keys(m))
	slices.SortFunc(out, func(a, b connect.TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}
