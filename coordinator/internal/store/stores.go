package store

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/kafkalog"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/records"
)

// ConfigStore follows the config topic into a ConfigState and writes to it
// transactionally under the coordinator's own transactional id, so that a
// newer coordinator's writer fences an older one and a batch (task configs
// plus their commit plus a target state) is applied all or nothing.
type ConfigStore struct {
	State  *ConfigState
	topic  string
	log    *kafkalog.Log
	writer *kafkautil.TxnWriter
	// decodeErrors counts records that could not be decoded; they are skipped.
	onDecodeError func(key string, err error)
}

// NewConfigStore makes a config store; call Start before use.
func NewConfigStore(topic, txnID string, onDecodeError func(string, error), opts ...kgo.Opt) (*ConfigStore, error) {
	s := &ConfigStore{State: NewConfigState(), topic: topic, onDecodeError: onDecodeError}
	log, err := kafkalog.New(topic, s.apply, opts...)
	if err != nil {
		return nil, err
	}
	w, err := kafkautil.NewTxnWriter(txnID, opts...)
	if err != nil {
		log.Close()
		return nil, err
	}
	s.log, s.writer = log, w
	return s, nil
}

func (s *ConfigStore) apply(r *kgo.Record) {
	rec, err := records.DecodeConfig(string(r.Key), r.Value)
	if err != nil {
		if s.onDecodeError != nil {
			s.onDecodeError(string(r.Key), err)
		}
		return
	}
	s.State.Apply(rec)
}

// Start follows the topic and returns once it has read to its end.
func (s *ConfigStore) Start(ctx context.Context) error {
	s.log.Start()
	return s.log.ReadToEnd(ctx)
}

// ReadToEnd waits until everything written so far has been applied.
func (s *ConfigStore) ReadToEnd(ctx context.Context) error { return s.log.ReadToEnd(ctx) }

// Write appends recs in one transaction and waits until they are applied.
func (s *ConfigStore) Write(ctx context.Context, recs ...records.Record) error {
	return writeAndWait(ctx, s.log, s.topic, func(ctx context.Context, krs []*kgo.Record) error {
		return s.writer.Write(ctx, krs...)
	}, recs)
}

// Close stops following and closes the clients.
func (s *ConfigStore) Close() {
	s.log.Close()
	s.writer.Close()
}

// StatusStore follows the status topic into a StatusState and writes to it.
type StatusStore struct {
	State    *StatusState
	topic    string
	log      *kafkalog.Log
	producer *kgo.Client
}

// NewStatusStore makes a status store; call Start before use.
func NewStatusStore(topic string, opts ...kgo.Opt) (*StatusStore, error) {
	s := &StatusStore{State: NewStatusState(), topic: topic}
	log, err := kafkalog.New(topic, s.apply, opts...)
	if err != nil {
		return nil, err
	}
	p, err := kgo.NewClient(append(append([]kgo.Opt{}, opts...), kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))...)
	if err != nil {
		log.Close()
		return nil, fmt.Errorf("status producer: %w", err)
	}
	s.log, s.producer = log, p
	return s, nil
}

func (s *StatusStore) apply(r *kgo.Record) {
	rec, err := records.DecodeStatus(string(r.Key), r.Value)
	if err != nil {
		return
	}
	s.State.Apply(rec)
}

// Start follows the topic and returns once it has read to its end.
func (s *StatusStore) Start(ctx context.Context) error {
	s.log.Start()
	return s.log.ReadToEnd(ctx)
}

// ReadToEnd waits until everything written so far has been applied.
func (s *StatusStore) ReadToEnd(ctx context.Context) error { return s.log.ReadToEnd(ctx) }

// Write appends recs and waits until they are applied.
func (s *StatusStore) Write(ctx context.Context, recs ...records.Record) error {
	return writeAndWait(ctx, s.log, s.topic, func(ctx context.Context, krs []*kgo.Record) error {
		return s.producer.ProduceSync(ctx, krs...).FirstErr()
	}, recs)
}

// Close stops following and closes the clients.
func (s *StatusStore) Close() {
	s.log.Close()
	s.producer.Close()
}

func writeAndWait(ctx context.Context, log *kafkalog.Log, topic string, produce func(context.Context, []*kgo.Record) error, recs []records.Record) error {
	if len(recs) == 0 {
		return nil
	}
	krs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		krs[i] = &kgo.Record{Topic: topic, Key: []byte(r.Key), Value: r.Value}
	}
	if err := produce(ctx, krs); err != nil {
		return fmt.Errorf("write to %s: %w", topic, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, r := range krs {
		if err := log.WaitPast(wctx, r.Partition, r.Offset); err != nil {
			return fmt.Errorf("wait for write to %s to be applied: %w", topic, err)
		}
	}
	return nil
}
