// Package topicscan reads the coordinator's record topics — the audit
// trail and the offsets history, topics of records kept for a time, never
// compacted — between offsets listed at the start of a read, so that a
// read sees every record written before it began and always ends.
//
//	EnsureTopic: create (one partition, cleanup.policy=delete, retention.ms) or warn if compacted
//	Scan = Spans + Read, within ReadTimeout
//	Spans: ListEndOffsets + ListStartOffsets (or first offset at/after a time) ─► [from, to) per partition, ≤ max records
//	Read: consume each span from its start until its last offset, fn(record) for each data record
package topicscan

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/kafkautil"
)

// EnsureTopic creates topic if it is missing: one partition, so that
// records keep the order they were written in, and retained for
// retention, never compacted (every record counts, not the last one per
// key). An existing topic is left as it is; if it is compacted, a warning
// naming it as what ("audit", "offsets history") goes to log, since it
// keeps only the newest record of each connector (both topics key their
// records by connector). It returns the topic's configs as the broker
// describes them, with the values in effect (nil when it cannot say).
func EnsureTopic(ctx context.Context, adm *kadm.Client, topic string, retention time.Duration, log *slog.Logger, what string) (map[string]string, error) {
	ms := strconv.FormatInt(retention.Milliseconds(), 10)
	if err := kafkautil.EnsureTopics(ctx, adm, kafkautil.TopicSpec{
		Name: topic, Partitions: 1,
		Configs: map[string]string{"cleanup.policy": "delete", "retention.ms": ms},
	}); err != nil {
		return nil, err
	}
	described, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil || len(described) != 1 || described[0].Err != nil {
		return nil, nil // only a warning and hints: the topic is there
	}
	cfgs := map[string]string{}
	for _, c := range described[0].Configs {
		cfgs[c.Key] = c.MaybeValue()
	}
	if policy := cfgs["cleanup.policy"]; strings.Contains(policy, "compact") {
		log.Warn("the "+what+" topic is compacted: it keeps only the newest record of each connector; set cleanup.policy=delete on it",
			"topic", topic, "cleanup.policy", policy)
	}
	return cfgs, nil
}

// ReadTimeout bounds one Scan, however slow the broker.
const ReadTimeout = 30 * time.Second

// Scan reads topic as Spans lists it now (from since, when not zero; at
// most the newest max records of each partition, when max > 0) and calls
// fn with each data record, as Read does, all within ReadTimeout. cut
// reports that max shortened the read. adm lists the offsets; opts are the
// base client options of the reader.
func Scan(ctx context.Context, adm *kadm.Client, opts []kgo.Opt, topic string, since time.Time, max int64, fn func(*kgo.Record)) (cut bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, ReadTimeout)
	defer cancel()
	spans, cut, err := Spans(ctx, adm, topic, since, max)
	if err != nil {
		return false, err
	}
	return cut, Read(ctx, opts, topic, spans, fn)
}

// Span is the part of one partition a read goes through: [From, To).
type Span struct{ From, To int64 }

// Spans lists the part of each partition of topic to read: from the log
// start, or with since set from the first record whose timestamp is at or
// after since, to the end offset listed now. With max > 0 a span holds at
// most the newest max records of its partition, and cut reports that the
// bound shortened one. Partitions with nothing to read have no span.
func Spans(ctx context.Context, adm *kadm.Client, topic string, since time.Time, max int64) (spans map[int32]Span, cut bool, err error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, false, fmt.Errorf("list end offsets: %w", err)
	}
	var starts kadm.ListedOffsets
	if since.IsZero() {
		starts, err = adm.ListStartOffsets(ctx, topic)
	} else {
		// The first offset whose timestamp is at or after since; the end
		// when there is none.
		starts, err = adm.ListOffsetsAfterMilli(ctx, since.UnixMilli(), topic)
	}
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, false, fmt.Errorf("list start offsets: %w", err)
	}
	spans = map[int32]Span{}
	ends.Each(func(e kadm.ListedOffset) {
		s, ok := starts.Lookup(e.Topic, e.Partition)
		from := s.Offset
		if !ok || from < 0 || from > e.Offset {
			from = e.Offset
		}
		if max > 0 && e.Offset-from > max {
			from, cut = e.Offset-max, true
		}
		if from < e.Offset {
			spans[e.Partition] = Span{From: from, To: e.Offset}
		}
	})
	return spans, cut, nil
}

// Read consumes every span of topic with a client of its own, made from
// opts (the base client options), and calls fn with each data record of
// the spans, in offset order within a partition. It returns once it has
// read the last offset of every span, or with the first fetch error, or
// when ctx ends. Records are read uncommitted: a record the broker acked
// is seen at once.
func Read(ctx context.Context, opts []kgo.Opt, topic string, spans map[int32]Span, fn func(*kgo.Record)) error {
	if len(spans) == 0 {
		return nil
	}
	at := map[int32]kgo.Offset{}
	for p, s := range spans {
		at[p] = kgo.NewOffset().At(s.From)
	}
	all := append([]kgo.Opt{}, opts...)
	all = append(all,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: at}),
		// A control record (of a transaction someone else wrote) still
		// moves the position, so the read ends even when a span's last
		// offset is one.
		kgo.KeepControlRecords(),
	)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		return fmt.Errorf("new reader: %w", err)
	}
	defer cl.Close()
	left, done := len(spans), map[int32]bool{}
	for left > 0 {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("read: %w", err)
		}
		var ferr error
		fetches.EachError(func(_ string, p int32, err error) { ferr = fmt.Errorf("partition %d: %w", p, err) })
		if ferr != nil {
			return fmt.Errorf("read: %w", ferr)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			s, ok := spans[r.Partition]
			if !ok || r.Offset < s.From || done[r.Partition] {
				return
			}
			// Past the span's last offset too: retention removed it while
			// the read started and the reader skipped ahead to the log
			// start.
			if r.Offset >= s.To-1 {
				done[r.Partition] = true
				left--
			}
			if r.Offset < s.To && !r.Attrs.IsControl() {
				fn(r)
			}
		})
	}
	return nil
}
