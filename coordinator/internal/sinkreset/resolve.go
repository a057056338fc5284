package sinkreset

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/kafkautil"
)

// Target is one partition's move: where the group stands (From, nil when
// it committed nothing there) and where the rule puts it (To).
type Target struct {
	Topic     string
	Partition int32
	From      *int64
	To        int64
}

// partitionKey names one partition in the offsets read from the broker.
type partitionKey struct {
	topic     string
	partition int32
}

// Resolve is the position rule gives each partition of the sink's topics
// (config's topics or topics.regex, or the narrowed ones), sorted by topic
// then partition, given the group's committed offsets (topic → partition
// → offset; a partition absent or negative has none). As
// kafka-consumer-groups does:
//
//   - earliest is the log start offset, latest the log end offset;
//   - timestamp is the first offset whose record timestamp is at or after
//     it, or the log end offset where no record is;
//   - offset, and a shift of the committed offset, are clamped to the
//     partition's log start and end offsets;
//   - a shift of a partition with no committed offset is refused.
//
// A topic of the topics list that does not exist on the broker is left
// out, unless named in the rule's topics (then it is a 400, as is a named
// topic the connector does not consume, or a named partition a topic does
// not have). Every refusal is a 400 *api.Error, every broker failure a 500
// naming the step. Kafka calls are retried while Kafka says the failure is
// transient and ctx lasts, so ctx should carry a deadline.
func Resolve(ctx context.Context, adm *kadm.Client, rule Rule, config map[string]string, committed map[string]map[int32]int64) ([]Target, error) {
	sel, err := selectPartitions(ctx, adm, rule, config)
	if err != nil {
		return nil, err
	}
	current := func(topic string, p int32) *int64 {
		if o, ok := committed[topic][p]; ok && o >= 0 {
			return &o
		}
		return nil
	}
	if rule.kind == ruleShift {
		// Refused before any broker call, in kafka-consumer-groups' words
		// (there "t-0" is Java's TopicPartition.toString).
		for _, s := range sel {
			for _, p := range s.partitions {
				if current(s.topic, p) == nil {
					return nil, badRequest("Cannot shift offset for partition %s-%d since there is no current committed offset", s.topic, p)
				}
			}
		}
	}

	var starts, ends, atTime map[partitionKey]int64
	if rule.kind != api.ResetLatest && rule.kind != api.ResetTimestamp {
		if starts, err = listOffsets(ctx, sel, "log start offsets", adm.ListStartOffsets); err != nil {
			return nil, err
		}
	}
	if rule.kind != api.ResetEarliest {
		// The high watermark, as kafka-consumer-groups reads it (its
		// ListOffsetsOptions default to read_uncommitted), not the last
		// stable offset a read_committed consumer stops at: a position
		// past the LSO is valid, and such a consumer waits there for the
		// open transactions to end.
		if ends, err = listOffsets(ctx, sel, "log end offsets", adm.ListEndOffsets); err != nil {
			return nil, err
		}
	}
	if rule.kind == api.ResetTimestamp {
		step := "offsets at " + rule.at.Format(time.RFC3339Nano)
		byTime := func(ctx context.Context, topics ...string) (kadm.ListedOffsets, error) {
			return adm.ListOffsetsAfterMilli(ctx, rule.millis, topics...)
		}
		if atTime, err = listOffsets(ctx, sel, step, byTime); err != nil {
			return nil, err
		}
	}

	out := []Target{}
	for _, s := range sel {
		for _, p := range s.partitions {
			k := partitionKey{s.topic, p}
			t := Target{Topic: s.topic, Partition: p, From: current(s.topic, p)}
			switch rule.kind {
			case api.ResetEarliest:
				t.To = starts[k]
			case api.ResetLatest:
				t.To = ends[k]
			case api.ResetTimestamp:
				// A broker with no record at or after the time answers
				// -1 (Kafka 4's UnifiedLog finds none; kfake likewise).
				// kadm already lists the end offset for those, but the
				// -1 is mapped here too, to the end offset read above,
				// as kafka-consumer-groups falls back to the latest.
				t.To = atTime[k]
				if t.To < 0 {
					t.To = ends[k]
				}
			case api.ResetOffset:
				t.To = clamp(rule.offset, starts[k], ends[k])
			case ruleShift:
				t.To = clamp(addSaturating(*t.From, rule.shift), starts[k], ends[k])
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// clamp is offset within [start, end], the end winning should the two
// cross (as kafka-consumer-groups' checkOffsetsRange looks at it first).
func clamp(offset, start, end int64) int64 {
	if offset > end {
		return end
	}
	return max(offset, start)
}

// addSaturating is a+b, held at the int64 limits instead of wrapping: a
// shift by math.MaxInt64 means "to the end", not to a negative offset.
func addSaturating(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}

// listOffsets lists offsets (start, end or by time, as list does) of the
// selected topics and keeps those of the selected partitions, retrying
// what Kafka says is transient. A failure is a 500 naming step, the topic
// and, for a partition's error, the partition.
func listOffsets(ctx context.Context, sel []selected, step string, list func(context.Context, ...string) (kadm.ListedOffsets, error)) (map[partitionKey]int64, error) {
	topics := make([]string, len(sel))
	for i, s := range sel {
		topics[i] = s.topic
	}
	out := map[partitionKey]int64{}
	where := topicsPhrase(topics)
	err := kafkautil.Retry(ctx, func() error {
		listed, err := list(ctx, topics...)
		if err != nil {
			where = topicsPhrase(topics)
			return err
		}
		for _, s := range sel {
			for _, p := range s.partitions {
				o, ok := listed.Lookup(s.topic, p)
				switch {
				case !ok:
					where = topicsPhrase([]string{s.topic})
					return fmt.Errorf("the broker gave no offset for partition %d", p)
				case o.Err != nil:
					where = topicsPhrase([]string{s.topic})
					return fmt.Errorf("partition %d: %w", p, o.Err)
				}
				out[partitionKey{s.topic, p}] = o.Offset
			}
		}
		return nil
	})
	if err != nil {
		return nil, api.Errorf(api.CodeInternal, "Failed to list the %s of %s: %v", step, where, err)
	}
	return out, nil
}
