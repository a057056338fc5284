// Package kafkautil holds the Kafka pieces the coordinator and agents share:
// client options, internal topic creation, zombie fencing by transactional
// id, a transactional writer, and the classification of Kafka's errors into
// fenced, retriable and fatal.
package kafkautil

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/kafkasec"
)

// ClientOpts returns the base options for a client of the given brokers,
// secured by sec (nil: plaintext, no authentication). It is the one place
// Kafka client options are built: every client of every Sluice process
// starts from these, so none reaches a secured cluster without TLS or SASL.
func ClientOpts(brokers string, clientID string, sec *kafkasec.Config) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(Seeds(brokers)...),
		kgo.ClientID(clientID),
		kgo.RetryTimeout(30 * time.Second),
	}
	return append(opts, sec.ClientOpts()...)
}

// Seeds splits a comma-separated broker list, dropping blanks.
func Seeds(brokers string) []string {
	var seeds []string
	for _, b := range strings.Split(brokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			seeds = append(seeds, b)
		}
	}
	return seeds
}

// TopicSpec describes an internal topic.
type TopicSpec struct {
	Name       string
	Partitions int32
	Compacted  bool
	// Configs are further topic configs set at creation (a topic that
	// exists is left as it is).
	Configs map[string]string
}

// EnsureTopics creates the topics that do not exist yet, and returns once
// every one of them is usable. Replication uses the broker default (-1), so
// one spec works on a single dev broker and a cluster.
func EnsureTopics(ctx context.Context, adm *kadm.Client, specs ...TopicSpec) error {
	names := make([]string, 0, len(specs))
	for _, s := range specs {
		names = append(names, s.Name)
		configs := map[string]*string{}
		if s.Compacted {
			compact := "compact"
			configs["cleanup.policy"] = &compact
		}
		for k, v := range s.Configs {
			configs[k] = &v
		}
		resp, err := adm.CreateTopic(ctx, s.Partitions, -1, configs, s.Name)
		if err == nil && resp.Err != nil {
			err = resp.Err
			if resp.ErrMessage != "" {
				// The broker's own words name what was wrong (an
				// illegal name, say), more than the code does.
				err = &BrokerError{Err: resp.Err, Message: resp.ErrMessage}
			}
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", s.Name, err)
		}
	}
	return WaitTopics(ctx, adm, names...)
}

// BrokerError is a Kafka error code with the message the broker sent
// with it.
type BrokerError struct {
	Err     error
	Message string
}

// Error is the broker's message.
func (e *BrokerError) Error() string { return e.Message }

// Unwrap returns the broker's error code.
func (e *BrokerError) Unwrap() error { return e.Err }

// WaitTopics waits until every partition of each topic has a leader that
// answers for it. A real broker acknowledges CreateTopics before every
// broker's metadata has the topic; until then reads and offset lookups fail
// with UNKNOWN_TOPIC_OR_PARTITION.
func WaitTopics(ctx context.Context, adm *kadm.Client, topics ...string) error {
	backoff := 20 * time.Millisecond
	for {
		err := topicsReady(ctx, adm, topics)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topics %v not ready: %w (last error: %v)", topics, ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 500*time.Millisecond)
	}
}

func topicsReady(ctx context.Context, adm *kadm.Client, topics []string) error {
	meta, err := adm.Metadata(ctx, topics...)
	if err != nil {
		return err
	}
	for _, t := range topics {
		d, ok := meta.Topics[t]
		switch {
		case !ok:
			return fmt.Errorf("topic %s: not in metadata", t)
		case d.Err != nil:
			return fmt.Errorf("topic %s: %w", t, d.Err)
		case len(d.Partitions) == 0:
			return fmt.Errorf("topic %s: no partitions yet", t)
		}
		for _, p := range d.Partitions {
			if p.Err != nil || p.Leader < 0 {
				return fmt.Errorf("topic %s partition %d: no leader yet (%v)", t, p.Partition, p.Err)
			}
		}
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return err
	}
	return ends.Error()
}

// EnsureTopicDefaults creates topic with the broker's default partition count
// and replication, if it does not exist. Sources use it for their topics.
func EnsureTopicDefaults(ctx context.Context, adm *kadm.Client, topic string) error {
	resp, err := adm.CreateTopic(ctx, -1, -1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return WaitTopics(ctx, adm, topic)
}

// IsFenced reports whether err means a newer producer took over the
// transactional id: the writer must stop and never retry.
func IsFenced(err error) bool {
	return errors.Is(err, kerr.ProducerFenced) ||
		errors.Is(err, kerr.InvalidProducerEpoch) ||
		errors.Is(err, kerr.InvalidTxnState) ||
		errors.Is(err, kerr.TransactionalIDAuthorizationFailed)
}

// IsRetriable reports whether err is a transient coordinator condition that
// a retry after a short wait resolves.
func IsRetriable(err error) bool {
	return errors.Is(err, kerr.ConcurrentTransactions) ||
		errors.Is(err, kerr.CoordinatorLoadInProgress) ||
		errors.Is(err, kerr.NotCoordinator) ||
		errors.Is(err, kerr.CoordinatorNotAvailable)
}

// Retry runs fn until it succeeds, fails with an error that IsRetriable
// does not accept, or ctx ends (then the last error is returned). A group or
// transaction coordinator answers COORDINATOR_NOT_AVAILABLE or
// COORDINATOR_LOAD_IN_PROGRESS for a while after a broker starts, or moves.
func Retry(ctx context.Context, fn func() error) error {
	backoff := 20 * time.Millisecond
	for {
		err := fn()
		if err == nil || !IsRetriable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 500*time.Millisecond)
	}
}

// MaxClientIDBytes is the longest client id franz-go accepts.
const MaxClientIDBytes = 256

// ClientID joins parts into a client id with '-'. One longer than
// MaxClientIDBytes (a connector's name may be 16 KB) keeps its start, a
// hash of the whole id and, when short (a task number), its last part, so
// that ids stay distinct and still say whose client it is.
func ClientID(parts ...string) string {
	id := strings.Join(parts, "-")
	if len(id) <= MaxClientIDBytes {
		return id
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	tail := fmt.Sprintf("~%016x", h.Sum64())
	if last := parts[len(parts)-1]; len(last) <= 16 {
		tail += "-" + last
	}
	head := id[:MaxClientIDBytes-len(tail)]
	// Never cut a UTF-8 sequence: Kafka logs and labels show the id.
	for len(head) > 0 && !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	return head + tail
}
