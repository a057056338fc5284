package store

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluice-io/sluice/shared/records"
)

// Sizes that bound what one config write may hold.
const (
	// producerBatchMaxBytes is the leader writer's largest record batch:
	// franz-go's default ProducerBatchMaxBytes, which the writer keeps. It
	// refuses a larger record itself, whatever the topic allows.
	producerBatchMaxBytes = 1000012
	// recordFraming is what a record batch adds to a record's key and
	// value: 65 bytes of batch header, at most 28 of record fields and 52
	// of the signature header coordinators add (recordsig: a 16-byte key,
	// a 32-byte value and their lengths), rounded up.
	recordFraming = 160
	// MaxWriteBytes bounds the records of one Apply (one transaction), so
	// that no connector's task set, however many tasks it has, makes the
	// coordinator build and hold a write without bound. It is the REST
	// body limit: what a client may send in one request.
	MaxWriteBytes = 8 << 20
	// recordLimitTTL is how long a topic's limit is trusted before it is
	// asked again, so that a change of max.message.bytes is noticed.
	recordLimitTTL = time.Minute
)

// TooLargeError says that a config write would exceed a limit: one record
// beyond the config topic's largest, or the whole write beyond
// MaxWriteBytes. Nothing was written.
type TooLargeError struct {
	// Key is the record that is too large, "" when the whole write is.
	Key   string
	Bytes int
	Limit int
	// Topic names a topic other than the config topic ("fleet").
	Topic string
}

// Error implements error.
func (e *TooLargeError) Error() string {
	if e.Topic != "" {
		return fmt.Sprintf("the %s record %s would be %d bytes, over the limit of %d bytes for one record", e.Topic, e.Key, e.Bytes, e.Limit)
	}
	if e.Key == "" {
		return fmt.Sprintf("the config records would be %d bytes in all, over the limit of %d bytes for one write", e.Bytes, e.Limit)
	}
	return fmt.Sprintf("the config record %s would be %d bytes, over the config topic's limit of %d bytes", e.Key, e.Bytes, e.Limit)
}

// RecordLimit knows the largest record (key and value) a topic takes: the
// smaller of its max.message.bytes (the broker's default when the topic
// sets none) and the leader writer's batch limit, less the batch framing.
// It asks the broker at most once per minute.
type RecordLimit struct {
	admin *kadm.Client
	topic string

	mu      sync.Mutex
	limit   int
	fetched time.Time
	asking  bool
}

// NewRecordLimit returns the record limit of topic, asked of the broker
// through admin.
func NewRecordLimit(admin *kadm.Client, topic string) *RecordLimit {
	return &RecordLimit{admin: admin, topic: topic, limit: producerBatchMaxBytes - recordFraming}
}

// Max returns the limit. When the broker cannot be asked it answers the
// last limit known (at first, the writer's own): a write beyond the topic's
// real limit then fails at the broker instead.
func (l *RecordLimit) Max(ctx context.Context) int {
	l.mu.Lock()
	if time.Since(l.fetched) < recordLimitTTL || l.asking {
		// Known, or being asked by another caller: no caller waits on the
		// broker behind another.
		defer l.mu.Unlock()
		return l.limit
	}
	l.asking = true
	l.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	topicMax, err := l.topicMax(cctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.asking = false
	l.fetched = time.Now()
	if err != nil {
		// Ask again in a few seconds, not at every write: during a broker
		// problem each would otherwise wait out the lookup's timeout.
		l.fetched = l.fetched.Add(-recordLimitTTL + 5*time.Second)
		return l.limit
	}
	l.limit = min(topicMax, producerBatchMaxBytes) - recordFraming
	return l.limit
}

// topicMax reads the topic's effective max.message.bytes.
func (l *RecordLimit) topicMax(ctx context.Context) (int, error) {
	rcs, err := l.admin.DescribeTopicConfigs(ctx, l.topic)
	if err != nil {
		return 0, fmt.Errorf("describe the configs of topic %s: %w", l.topic, err)
	}
	rc, err := rcs.On(l.topic, nil)
	if err != nil {
		return 0, fmt.Errorf("describe the configs of topic %s: %w", l.topic, err)
	}
	if rc.Err != nil {
		return 0, fmt.Errorf("describe the configs of topic %s: %w", l.topic, rc.Err)
	}
	for _, c := range rc.Configs {
		if c.Key == "max.message.bytes" && c.Value != nil {
			n, err := strconv.Atoi(*c.Value)
			if err != nil {
				return 0, fmt.Errorf("max.message.bytes of topic %s: %w", l.topic, err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("topic %s reports no max.message.bytes", l.topic)
}

// checkSizes refuses records of which one exceeds limit, or which together
// exceed MaxWriteBytes.
func checkSizes(recs []records.Record, limit int) error {
	total := 0
	for _, r := range recs {
		n := len(r.Key) + len(r.Value)
		if n > limit {
			return &TooLargeError{Key: r.Key, Bytes: n, Limit: limit}
		}
		total += n
	}
	if total > MaxWriteBytes {
		return &TooLargeError{Bytes: total, Limit: MaxWriteBytes}
	}
	return nil
}
