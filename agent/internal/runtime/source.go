package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/converters"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/records"
)

// sourceRunner drives a SourceTask: poll → convert → produce, and at each
// flush: wait for the produced records, then commit the source offsets they
// reached in one transaction under the task's transactional id. Fencing that
// id (a newer owner, or an offsets change) makes the commit fail, and the
// task stops without retrying.
type sourceRunner struct {
	t        *task
	task     connect.SourceTask
	keyConv  connect.Converter
	valConv  connect.Converter
	producer *kgo.Client
	admin    *kadm.Client
	offsets  *kafkautil.TxnWriter

	known map[string]bool // topics known to exist

	mu        sync.Mutex
	produceEr error
	pending   map[string]connect.Offset // partition id → latest offset polled
	started   bool
}

func newSourceRunner(t *task, st connect.SourceTask) (*sourceRunner, error) {
	cc := t.assignment.ConnectorConfig
	kc, err := converters.New(t.cfg.Registry, cc, t.cfg.KeyConverter, true)
	if err != nil {
		return nil, fmt.Errorf("key converter: %w", err)
	}
	vc, err := converters.New(t.cfg.Registry, cc, t.cfg.ValueConverter, false)
	if err != nil {
		return nil, fmt.Errorf("value converter: %w", err)
	}
	return &sourceRunner{t: t, task: st, keyConv: kc, valConv: vc, known: map[string]bool{}, pending: map[string]connect.Offset{}}, nil
}

// TransactionalID is a source task's transactional id: <group>-<connector>-<task>.
func TransactionalID(groupID, connector string, task int) string {
	return fmt.Sprintf("%s-%s-%d", groupID, connector, task)
}

func (r *sourceRunner) open(ctx context.Context) error {
	cfg := r.t.cfg
	p, err := kgo.NewClient(append(append([]kgo.Opt{}, cfg.KafkaOpts...),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
		kgo.ProducerLinger(5*time.Millisecond),
	)...)
	if err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	r.producer, r.admin = p, kadm.NewClient(p)
	w, err := kafkautil.NewTxnWriter(TransactionalID(cfg.GroupID, r.t.id.Connector, r.t.id.Task), cfg.KafkaOpts...)
	if err != nil {
		return fmt.Errorf("offset writer: %w", err)
	}
	if cfg.BeforeOffsetCommit != nil {
		id := r.t.id
		w.BeforeCommit = func(ctx context.Context) error { return cfg.BeforeOffsetCommit(ctx, id) }
	}
	r.offsets = w
	// The task must see every offset committed before it starts.
	if err := cfg.Offsets.ReadToEnd(ctx); err != nil {
		return fmt.Errorf("read offsets: %w", err)
	}
	tc := connect.SourceTaskContext{Offsets: offsetReader{r}, WorkDir: cfg.WorkDir}
	if err := r.task.Start(ctx, tc, r.t.assignment.TaskConfig); err != nil {
		return err
	}
	r.started = true
	return nil
}

type offsetReader struct{ r *sourceRunner }

func (o offsetReader) Offset(ctx context.Context, partition map[string]any) (map[string]any, error) {
	return o.r.t.cfg.Offsets.Offset(o.r.t.id.Connector, partition), nil
}

func (r *sourceRunner) step(ctx context.Context) error {
	if err := r.produceErr(); err != nil {
		return err
	}
	recs, err := r.task.Poll(ctx)
	if err != nil && !errors.Is(err, connect.ErrDone) {
		return fmt.Errorf("poll: %w", err)
	}
	if errors.Is(err, connect.ErrDone) && len(recs) == 0 {
		// Nothing more will come; idle without spinning.
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
		return nil
	}
	for i := range recs {
		if err := r.send(ctx, &recs[i]); err != nil {
			return err
		}
	}
	return nil
}

func (r *sourceRunner) send(ctx context.Context, rec *connect.SourceRecord) error {
	if !r.known[rec.Topic] {
		if err := kafkautil.EnsureTopicDefaults(ctx, r.admin, rec.Topic); err != nil {
			return err
		}
		r.known[rec.Topic] = true
		r.t.reportTopics(rec.Topic)
	}
	key, err := r.keyConv.FromConnectData(rec.Topic, rec.KeySchema, rec.Key)
	if err != nil {
		return fmt.Errorf("convert key: %w", err)
	}
	val, err := r.valConv.FromConnectData(rec.Topic, rec.ValueSchema, rec.Value)
	if err != nil {
		return fmt.Errorf("convert value: %w", err)
	}
	kr := &kgo.Record{Topic: rec.Topic, Key: key, Value: val, Timestamp: rec.Timestamp}
	if rec.KafkaPartition != nil {
		kr.Partition = *rec.KafkaPartition
	}
	for _, h := range rec.Headers {
		kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
	// A record handed to the producer must be delivered even when the task
	// is stopped right after the poll: franz-go fails a buffered record whose
	// context ends, and that failure would make the final commit drop the
	// offsets of every record of the batch — including those already
	// written — so the next owner would send them again. The final commit's
	// Flush bounds the wait; close() fails whatever is still buffered.
	r.producer.Produce(context.WithoutCancel(ctx), kr, func(_ *kgo.Record, err error) {
		if err != nil {
			r.mu.Lock()
			if r.produceEr == nil {
				r.produceEr = fmt.Errorf("produce to %s: %w", rec.Topic, err)
			}
			r.mu.Unlock()
		}
	})
	if rec.SourcePartition != nil {
		r.mu.Lock()
		r.pending[records.PartitionID(rec.SourcePartition)] = connect.Offset{Partition: rec.SourcePartition, Offset: rec.SourceOffset}
		r.mu.Unlock()
	}
	return nil
}

func (r *sourceRunner) produceErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.produceEr
}

// commit waits until every record produced so far is acknowledged, then
// writes the offsets they reached in one transaction.
func (r *sourceRunner) commit(ctx context.Context) error {
	if r.producer == nil || r.offsets == nil {
		return nil
	}
	if err := r.producer.Flush(ctx); err != nil {
		return fmt.Errorf("flush records: %w", err)
	}
	if err := r.produceErr(); err != nil {
		return err
	}
	r.mu.Lock()
	batch := r.pending
	r.pending = map[string]connect.Offset{}
	r.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	recs := make([]*kgo.Record, 0, len(batch))
	for _, o := range batch {
		key, err := records.EncodeOffsetKey(r.t.id.Connector, o.Partition)
		if err != nil {
			return err
		}
		val, err := records.EncodeOffsetValue(o.Offset)
		if err != nil {
			return err
		}
		recs = append(recs, &kgo.Record{Topic: r.t.cfg.OffsetsTopic, Key: key, Value: val})
	}
	if err := r.offsets.Write(ctx, recs...); err != nil {
		if !errors.Is(err, kafkautil.ErrFenced) {
			// Keep the offsets for the next attempt (newer ones win).
			r.mu.Lock()
			for id, o := range batch {
				if _, newer := r.pending[id]; !newer {
					r.pending[id] = o
				}
			}
			r.mu.Unlock()
		}
		return fmt.Errorf("commit offsets: %w", err)
	}
	return nil
}

func (r *sourceRunner) close() error {
	var errs []error
	if r.started {
		errs = append(errs, r.task.Stop())
	}
	if r.producer != nil {
		r.producer.Close()
	}
	if r.offsets != nil {
		r.offsets.Close()
	}
	return errors.Join(errs...)
}
