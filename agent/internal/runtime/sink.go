package runtime

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/clientoverrides"
	"github.com/sluice-io/sluice/connect/converters"
	"github.com/sluice-io/sluice/connect/dlq"
	"github.com/sluice-io/sluice/shared/javaregex"
	"github.com/sluice-io/sluice/shared/records"
)

// sinkRunner drives a SinkTask: poll → convert → Put, and at each flush:
// Flush the task, then commit the consumed offsets in the group. Rebalances
// wait while a batch is being processed, and a revocation flushes and
// commits first, so another member resumes exactly after the last record
// this one delivered.
type sinkRunner struct {
	t    *task
	task connect.SinkTask
	// framework is a Go task's converters, transformations and errors.*
	// handling (transform.go); empty for a raw task.
	framework
	client *kgo.Client
	// dead is the connector's dead letter queue; nil when it has none.
	dead *dlq.Writer

	mu      sync.Mutex // serialises task calls between the loop and rebalance callbacks
	started bool
	topics  map[string]bool
	// admitted caches, per topic, whether its records are delivered
	// (admits); used by the poll loop only.
	admitted map[string]bool
	// putFailed is set when Put failed: the polled batch was not delivered,
	// so its offsets must never be committed (the group would skip it).
	putFailed bool

	// The task's optional hooks (nil when it has none): raw records
	// instead of converted ones, partition open/close, and what to commit.
	raw   connect.RawSinkTask
	parts connect.PartitionHandler
	pre   connect.PreCommitter
	// assigned are the partitions the group gave this member; consumed is
	// the next offset of each partition after what was handed to the task
	// (for PreCommit); committed is what was last committed of each
	// (PreCommit's answers). Guarded by mu.
	assigned  map[connect.TopicPartition]bool
	consumed  map[connect.TopicPartition]int64
	committed map[connect.TopicPartition]int64
	control   sinkControl
	// member is the task's static group membership (sink_member.go); nil
	// with dynamic membership.
	member *staticMember
	// shared is what the task last warned of its group's other members
	// (sink_shared.go).
	shared sharedGroup
}

func newSinkRunner(t *task, st connect.SinkTask) (*sinkRunner, error) {
	r := &sinkRunner{t: t, task: st, topics: map[string]bool{}, admitted: map[string]bool{}, assigned: map[connect.TopicPartition]bool{},
		consumed: map[connect.TopicPartition]int64{}, committed: map[connect.TopicPartition]int64{}}
	r.raw, _ = st.(connect.RawSinkTask)
	r.parts, _ = st.(connect.PartitionHandler)
	r.pre, _ = st.(connect.PreCommitter)
	if r.raw != nil {
		return r, nil // it converts Kafka's bytes itself
	}
	var err error
	if r.framework, err = newFramework(t); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *sinkRunner) open(ctx context.Context) error {
	cc := r.t.conn
	group := records.SinkGroupID(r.t.id.Connector, cc)
	opts := r.t.kafkaOpts("consumer", append(r.membershipOpts(group),
		kgo.ConsumerGroup(group),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.OnPartitionsAssigned(func(ctx context.Context, cl *kgo.Client, m map[string][]int32) {
			for topic := range m {
				r.noteTopic(topic)
			}
			r.assign(ctx, m)
			r.noteGroupMembers(cl, group)
		}),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, m map[string][]int32) {
			if err := r.commit(ctx); err != nil {
				r.t.log.Warn("commit on revocation failed", "err", err)
			}
			r.revoke(ctx, m)
		}),
	)...)
	// Kafka Connect's sinks start from the earliest offset unless the
	// connector overrides auto.offset.reset; the connector's consumer
	// overrides come last, so that they win.
	opts = append(opts, kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	overrides, err := r.t.overrides(clientoverrides.Consumer)
	if err != nil {
		return err
	}
	opts = append(opts, overrides...)
	if rx := strings.TrimSpace(cc["topics.regex"]); rx != "" {
		if _, err := regexp.Compile(rx); err != nil {
			return fmt.Errorf("topics.regex: %w", err)
		}
		// Kafka Connect matches a topic's whole name (Java's
		// Matcher.matches), as the coordinator judges the pattern; franz-go
		// would match anywhere in it. The pattern never brings a reserved
		// topic.
		opts = append(opts, kgo.ConsumeRegex(), kgo.ConsumeTopics(javaregex.Whole(rx)), kgo.ConsumeExcludeTopics(r.t.guard.ExcludePatterns()...))
		if err := r.t.checkSink(nil, cc[dlq.TopicConfig], group); err != nil {
			return err
		}
	} else {
		var topics []string
		for _, t := range strings.Split(cc["topics"], ",") {
			if t = strings.TrimSpace(t); t != "" {
				topics = append(topics, t)
			}
		}
		if len(topics) == 0 {
			return errors.New("a sink needs topics or topics.regex")
		}
		if err := r.t.checkSink(topics, cc[dlq.TopicConfig], group); err != nil {
			return err
		}
		opts = append(opts, kgo.ConsumeTopics(topics...))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	r.client = cl
	tc := connect.SinkTaskContext{WorkDir: r.t.cfg.WorkDir, AllowedPaths: r.t.cfg.AllowedPaths, Control: &r.control}
	// The DLQ topic is made before the task starts, as Kafka Connect's
	// worker makes it when it creates the task.
	if dc, ok, err := dlq.FromConnectorConfig(cc, r.t.id.Connector, r.t.id.Task); err != nil {
		return fmt.Errorf("dead letter queue: %w", err)
	} else if ok {
		if r.dead, err = dlq.Open(ctx, dc, r.t.kafkaOpts("dlq-producer")...); err != nil {
			return err
		}
		tc.DeadLetters = r.dead
	}
	if err := r.task.Start(ctx, tc, r.t.props); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = true
	r.t.reportGauges(r.task)
	// Partitions assigned while the task was starting are opened now.
	if r.parts != nil && len(r.assigned) > 0 {
		if err := r.parts.Open(ctx, sortedPartitions(r.assigned)); err != nil {
			return fmt.Errorf("open partitions: %w", err)
		}
	}
	return nil
}

func (r *sinkRunner) noteTopic(topic string) {
	r.mu.Lock()
	isNew := !r.topics[topic]
	r.topics[topic] = true
	r.mu.Unlock()
	if isNew {
		r.t.reportTopics(topic)
	}
}

func (r *sinkRunner) step(ctx context.Context) error {
	if err := r.fencedErr(nil); err != nil {
		return err
	}
	if r.applyControl() {
		if err := r.commit(ctx); err != nil && ctx.Err() == nil {
			r.t.log.Warn("commit the task asked for failed; will retry at the next flush", "err", err)
		}
	}
	pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	fetches := r.client.PollRecords(pctx, 1000)
	cancel()
	defer r.client.AllowRebalance()
	var denied error
	fetches.EachError(func(topic string, p int32, err error) {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, kgo.ErrClientClosed) {
			return
		}
		// The broker's ACLs refuse the connector's principal: retrying
		// will not help, and a sink that waits quietly would pass for
		// one with nothing to read. It fails, saying so.
		if errors.Is(err, kerr.TopicAuthorizationFailed) || errors.Is(err, kerr.GroupAuthorizationFailed) {
			denied = fmt.Errorf("consume %s: the broker refuses this connector's principal: %w", topic, err)
			return
		}
		r.t.log.Warn("fetch error", "topic", topic, "partition", p, "err", err)
	})
	if denied != nil {
		return denied
	}
	if fetches.Empty() {
		return nil
	}
	start := time.Now()
	if r.raw != nil {
		return r.putRaw(ctx, fetches, start)
	}
	batch := make([]connect.SinkRecord, 0, fetches.NumRecords())
	var convErr error
	fetches.EachRecord(func(kr *kgo.Record) {
		if convErr != nil || !r.admits(kr.Topic) {
			return
		}
		sr, err := r.convert(ctx, kr)
		if err != nil {
			convErr = err
		} else if sr != nil {
			batch = append(batch, *sr)
		}
	})
	if convErr != nil {
		// The batch was polled but not delivered: never commit its offsets.
		r.mu.Lock()
		r.putFailed = true
		r.mu.Unlock()
		r.t.metrics.Failed(1)
		return convErr
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.t.metrics.Put(len(batch))
	err := r.task.Put(ctx, batch)
	r.t.metrics.Batch(time.Since(start))
	if err != nil {
		r.putFailed = true
		r.t.metrics.Failed(len(batch))
		return fmt.Errorf("put: %w", err)
	}
	return nil
}

// convert turns a consumed record into the task's record: converted, then
// transformed. nil is a record dropped by a transformation, or skipped
// under errors.tolerance=all (after its dead letter is written).
func (r *sinkRunner) convert(ctx context.Context, kr *kgo.Record) (*connect.SinkRecord, error) {
	raw := connect.RawSinkRecord{Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset, Timestamp: kr.Timestamp, Key: kr.Key, Value: kr.Value}
	for _, h := range kr.Headers {
		raw.Headers = append(raw.Headers, connect.Header{Key: h.Key, Value: h.Value})
	}
	ks, k, err := r.keyConv.ToConnectData(kr.Topic, kr.Key)
	if err != nil {
		return nil, r.skipSink(ctx, raw, "KEY_CONVERTER", r.converterClass("key.converter", r.t.cfg.KeyConverter),
			fmt.Errorf("convert key at %s-%d@%d: %w", kr.Topic, kr.Partition, kr.Offset, err))
	}
	vs, v, err := r.valConv.ToConnectData(kr.Topic, kr.Value)
	if err != nil {
		return nil, r.skipSink(ctx, raw, "VALUE_CONVERTER", r.converterClass("value.converter", r.t.cfg.ValueConverter),
			fmt.Errorf("convert value at %s-%d@%d: %w", kr.Topic, kr.Partition, kr.Offset, err))
	}
	sr := &connect.SinkRecord{Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset,
		KeySchema: ks, Key: k, ValueSchema: vs, Value: v, Timestamp: kr.Timestamp, Headers: raw.Headers}
	out, err := r.transformSink(sr)
	if err != nil {
		class, cause := stageOf(err)
		return nil, r.skipSink(ctx, raw, "TRANSFORMATION", class, cause)
	}
	return out, nil
}

// converterClass names the converter of key (the connector's, else the
// worker's) by its full class name, as Kafka Connect's error reports do.
func (r *sinkRunner) converterClass(key, worker string) string {
	name := converters.ClassOf(r.t.conn, key, worker)
	if p, ok := r.t.cfg.Registry.Lookup(name); ok {
		return p.Class
	}
	return name
}

// uncommitted implements positioned: records were handed to the task whose
// offsets the group has not committed (with PreCommit, the task decides
// what of them is committed; it is asked once at once, then each flush).
func (r *sinkRunner) uncommitted() bool {
	if r.client == nil {
		return false
	}
	if r.pre != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.consumed) > 0
	}
	return len(r.client.UncommittedOffsets()) > 0
}

// commit flushes the task and commits every record handed to Put so far.
func (r *sinkRunner) commit(ctx context.Context) error {
	if r.client == nil || !r.started {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.putFailed {
		return errors.New("not committing: the last batch was not delivered")
	}
	if r.pre != nil {
		return r.fencedErr(r.preCommit(ctx))
	}
	if err := r.task.Flush(ctx); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	if err := r.client.CommitUncommittedOffsets(ctx); err != nil {
		return r.fencedErr(fmt.Errorf("commit offsets: %w", err))
	}
	return nil
}

func (r *sinkRunner) close() error {
	var errs []error
	if r.client != nil {
		// The member leaves the group, so the group is empty once the task
		// is confirmed stopped and offsets can be changed at once.
		r.closeMember()
	}
	if r.started {
		r.t.stopGauges()
		errs = append(errs, r.task.Stop())
	}
	if r.dead != nil {
		r.dead.Close() // after Stop: a stopping task may still report
	}
	errs = append(errs, r.chain.Close())
	return errors.Join(errs...)
}
