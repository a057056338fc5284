package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/clientoverrides"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/offsetstore"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// sourceRunner drives a SourceTask: poll → convert → produce, and at each
// flush commits the source offsets the produced records reached, in a Kafka
// transaction under the task's transactional id:
//
//	exactly-once off: records through an idempotent producer; at a flush,
//	                  wait for their acks, then a transaction of offsets only
//	exactly-once on:  records and offsets in one transaction per flush
//	                  interval, so read_committed readers see each record once
//
// Before the task starts, its transactional id is fenced, so a previous
// owner (a zombie) can no longer commit. Fencing the id later (a newer owner,
// or an offsets change) makes the commit fail, and the task stops without
// retrying.
type sourceRunner struct {
	t    *task
	task connect.SourceTask
	// framework is a Go task's converters, transformations and errors.*
	// handling (transform.go); a Java task's run in its host.
	framework
	plain    *kgo.Client // admin, and the producer when exactly-once is off
	producer *kgo.Client // where records go: plain, or the transactional client
	admin    *kadm.Client
	offsets  *kafkautil.TxnWriter
	// view is where the task's offsets are: the worker's topic, and the
	// connector's own when it has one; release lets go of the latter.
	view    offsetstore.View
	release func()
	eos     bool
	inTxn   bool // exactly-once: a transaction is open
	// boundary and interval are where exactly-once transactions end
	// (source_txn.go); lastTxn is when the interval last ended one;
	// txnReqs are the requests of a task that defines its boundaries.
	boundary boundary
	interval time.Duration
	lastTxn  time.Time
	txnReqs  *txnRequests

	known map[string]bool // topics known to exist
	// warnedReserved are the reserved topics a record was refused for,
	// each logged once (topics.go).
	warnedReserved map[string]bool

	// recordCommitter and offsetCommitter are the task's optional hooks
	// (nil when it has none).
	recordCommitter connect.RecordCommitter
	offsetCommitter connect.OffsetCommitter
	// committable are the records Kafka acknowledged, for the task's
	// RecordCommitter; guarded by mu. With exactly-once they wait for
	// their transaction to commit.
	committable []connect.RecordMetadata

	// acked and lost count the records Kafka acknowledged or failed since
	// they were last added to the task's series, which takes them a batch
	// at a time rather than one call per record.
	acked, lost atomic.Int64

	mu        sync.Mutex
	produceEr error
	pending   map[string]connect.Offset // partition id → latest offset polled
	started   bool
	// ids are the ids of the task's partitions (used on the task's
	// goroutine only).
	ids partitionIDs
}

// maxBufferedBytes bounds the records a source task's producer holds
// until Kafka acknowledges them (franz-go bounds only their count, 10,000 by
// default, which at large records is gigabytes): past it, producing waits.
const maxBufferedBytes = 64 << 20

// errAborted marks a failed exactly-once commit: the transaction and its
// records were aborted while the task had moved past them, so the task must
// stop and be restarted from its committed offsets.
var errAborted = errors.New("exactly-once transaction aborted")

// newSourceRunner makes the runner of st; convert says whether st's
// records need the agent's converters (a task run in the connector host
// sends Kafka's bytes, converted by converters the agent may not have).
func newSourceRunner(t *task, st connect.SourceTask, convert bool) (*sourceRunner, error) {
	r := &sourceRunner{t: t, task: st, known: map[string]bool{}, warnedReserved: map[string]bool{}, pending: map[string]connect.Offset{}}
	r.recordCommitter, _ = st.(connect.RecordCommitter)
	r.offsetCommitter, _ = st.(connect.OffsetCommitter)
	if !convert {
		return r, nil
	}
	var err error
	if r.framework, err = newFramework(t); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *sourceRunner) open(ctx context.Context) error {
	cfg := r.t.cfg
	// The connector's producer overrides come last, so that they win.
	overrides, err := r.t.overrides(clientoverrides.Producer)
	if err != nil {
		return err
	}
	p, err := kgo.NewClient(r.t.kafkaOpts("producer", append([]kgo.Opt{
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
		kgo.ProducerLinger(5 * time.Millisecond),
		kgo.MaxBufferedBytes(maxBufferedBytes),
	}, overrides...)...)...)
	if err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	r.plain, r.producer, r.admin = p, p, kadm.NewClient(p)
	txnID := records.TransactionalID(cfg.GroupID, r.t.id.Connector, r.t.id.Task)
	txnOpts := []kgo.Opt{kgo.MaxBufferedBytes(maxBufferedBytes)}
	if cfg.ExactlyOnce {
		txnOpts = append(txnOpts, overrides...) // it writes the records too
	}
	w, err := kafkautil.NewTxnWriter(txnID, r.t.kafkaOpts("txn", txnOpts...)...)
	if err != nil {
		return fmt.Errorf("offset writer: %w", err)
	}
	if cfg.BeforeOffsetCommit != nil {
		id := r.t.id
		w.BeforeCommit = func(ctx context.Context) error { return cfg.BeforeOffsetCommit(ctx, id) }
	}
	r.offsets = w
	// The writer's init fences a previous owner of this task that may still
	// be alive: once fenced it cannot commit, so the offsets read next are
	// final. Taken now, not lazily at the first write, an agent paused from
	// here on (a zombie whose task has moved meanwhile) holds an epoch older
	// than its successor's, and every later write of this instance fails as
	// fenced.
	if err := w.Init(ctx); err != nil {
		return fmt.Errorf("fence previous owner: initialise transactional id %s: %w", txnID, err)
	}
	if r.eos = cfg.ExactlyOnce; r.eos {
		r.producer = w.Client()
	}
	// The task must see every offset committed before it starts.
	view, release, err := cfg.Offsets.View(ctx, r.t.conn[offsetsTopicKey])
	if err != nil {
		return fmt.Errorf("read offsets: %w", err)
	}
	r.view, r.release = view, release
	if err := checkHeld(view.Entries(r.t.id.Connector), cfg.Registry, r.t.conn["connector.class"]); err != nil {
		return err
	}
	tc := connect.SourceTaskContext{Offsets: offsetReader{r}, WorkDir: cfg.WorkDir, AllowedPaths: cfg.AllowedPaths}
	if r.eos {
		r.boundary, r.interval = parseBoundary(r.t.conn, cfg.FlushInterval)
		r.lastTxn = time.Now()
		if r.boundary == boundaryConnector {
			r.txnReqs = &txnRequests{}
			tc.Transactions = r.txnReqs
		}
	}
	if err := r.task.Start(ctx, tc, r.t.props); err != nil {
		return err
	}
	r.started = true
	r.t.reportGauges(r.task)
	r.t.takeSignals(r.task)
	return nil
}

// offsetReader gives a task the committed offsets of its connector.
type offsetReader struct{ r *sourceRunner }

// Offset implements connect.OffsetReader.
func (o offsetReader) Offset(ctx context.Context, partition map[string]any) (map[string]any, error) {
	return o.r.view.Offset(o.r.t.id.Connector, partition), nil
}

func (r *sourceRunner) step(ctx context.Context) error {
	r.countAcks()
	if err := r.produceErr(); err != nil {
		return err
	}
	if !r.eos {
		r.commitRecords(ctx)
	}
	start := time.Now()
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
		return r.batchBoundary(ctx)
	}
	m := r.t.metrics
	m.Polled(len(recs))
	for i := range recs {
		if err := r.transformSource(&recs[i]); err != nil {
			m.Failed(len(recs) - i)
			return err
		}
		if err := r.send(ctx, &recs[i]); err != nil {
			// This record and the rest of the batch go nowhere.
			m.Failed(len(recs) - i)
			return err
		}
		if err := r.recordBoundary(ctx, &recs[i]); err != nil {
			return err
		}
	}
	if len(recs) > 0 {
		m.Batch(time.Since(start))
	}
	return r.batchBoundary(ctx)
}

// countAcks adds the records acknowledged or failed since the last call to
// the task's series.
func (r *sourceRunner) countAcks() {
	r.t.metrics.Written(int(r.acked.Swap(0)))
	r.t.metrics.Failed(int(r.lost.Swap(0)))
}

func (r *sourceRunner) send(ctx context.Context, rec *connect.SourceRecord) error {
	if rec.Dropped {
		r.notePosition(rec)
		return nil
	}
	if !r.known[rec.Topic] {
		if skip, err := r.refuseTopic(rec.Topic); err != nil {
			return err
		} else if skip {
			r.t.metrics.Failed(1)
			r.notePosition(rec)
			return nil
		}
		if err := kafkautil.EnsureTopicDefaults(ctx, r.admin, rec.Topic); err != nil {
			return err
		}
		r.known[rec.Topic] = true
		r.t.reportTopics(rec.Topic)
	}
	key, val, err := r.serialize(rec)
	if err != nil {
		return err
	}
	kr := &kgo.Record{Topic: rec.Topic, Key: key, Value: val, Timestamp: rec.Timestamp}
	if rec.KafkaPartition != nil {
		kr.Partition = *rec.KafkaPartition
	}
	for _, h := range rec.Headers {
		v, err := writeHeader(r.hdrConv, rec.Topic, h)
		if err != nil {
			return err
		}
		kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: v})
	}
	if r.eos && !r.inTxn {
		if err := r.producer.BeginTransaction(); err != nil {
			return fmt.Errorf("begin transaction: %w", err)
		}
		r.inTxn = true
	}
	// A record handed to the producer must be delivered even when the task
	// is stopped right after the poll: franz-go fails a buffered record whose
	// context ends, and that failure would make the final commit drop the
	// offsets of every record of the batch — including those already
	// written — so the next owner would send them again. The final commit's
	// Flush bounds the wait; close() fails whatever is still buffered.
	done := r.recordDone
	if r.recordCommitter != nil {
		done = func(kr *kgo.Record, err error) {
			r.recordDone(kr, err)
			if err == nil {
				r.mu.Lock()
				r.committable = append(r.committable, connect.RecordMetadata{Record: rec, Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset})
				r.mu.Unlock()
			}
		}
	}
	r.producer.Produce(context.WithoutCancel(ctx), kr, done)
	r.notePosition(rec)
	return nil
}

// notePosition makes rec's source offset the next commit's for its
// partition.
func (r *sourceRunner) notePosition(rec *connect.SourceRecord) {
	if rec.SourcePartition == nil {
		return
	}
	id := r.ids.of(rec.SourcePartition)
	r.mu.Lock()
	r.pending[id] = connect.Offset{Partition: rec.SourcePartition, Offset: rec.SourceOffset}
	r.mu.Unlock()
}

// serialize gives a record's key and value bytes: its own when it is
// Serialized, else the converters'.
func (r *sourceRunner) serialize(rec *connect.SourceRecord) (key, val []byte, err error) {
	if rec.Serialized {
		return rec.RawKey, rec.RawValue, nil
	}
	if r.keyConv == nil || r.valConv == nil {
		return nil, nil, errors.New("the task returned a record that is not serialized, and it has no converters")
	}
	if key, err = r.keyConv.FromConnectData(rec.Topic, rec.KeySchema, rec.Key); err != nil {
		return nil, nil, fmt.Errorf("convert key: %w", err)
	}
	if val, err = r.valConv.FromConnectData(rec.Topic, rec.ValueSchema, rec.Value); err != nil {
		return nil, nil, fmt.Errorf("convert value: %w", err)
	}
	return key, val, nil
}

// commitRecords hands the acknowledged records to the task's
// RecordCommitter, in one call; its failure is logged, as Kafka Connect
// logs a failed commitRecord.
func (r *sourceRunner) commitRecords(ctx context.Context) {
	if r.recordCommitter == nil {
		return
	}
	r.mu.Lock()
	batch := r.committable
	r.committable = nil
	r.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	if err := r.recordCommitter.CommitRecords(ctx, batch); err != nil && ctx.Err() == nil {
		r.t.log.Warn("the task failed to take acknowledged records", "records", len(batch), "err", err)
	}
}

// committed tells the task's OffsetCommitter that offsets were committed.
func (r *sourceRunner) committed(ctx context.Context) {
	if r.offsetCommitter == nil {
		return
	}
	if err := r.offsetCommitter.Commit(ctx); err != nil {
		r.t.log.Warn("the task failed to take the offsets commit", "err", err)
	}
}

func (r *sourceRunner) produceErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.produceEr
}

// commit makes the offsets of every record produced so far durable.
func (r *sourceRunner) commit(ctx context.Context) error {
	if r.producer == nil || r.offsets == nil {
		return nil
	}
	// After the flush below every record was acknowledged or failed.
	defer r.countAcks()
	if r.eos {
		return r.commitExactlyOnce(ctx)
	}
	if err := r.producer.Flush(ctx); err != nil {
		return fmt.Errorf("flush records: %w", err)
	}
	if err := r.produceErr(); err != nil {
		return err
	}
	// Every record is acknowledged after the flush above.
	r.commitRecords(ctx)
	batch := r.takePending()
	if len(batch) == 0 {
		return nil
	}
	recs, err := r.offsetRecords(batch)
	if err != nil {
		return err
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
	r.awaitReadable(ctx, recs)
	r.committed(ctx)
	return nil
}

// awaitReadable waits until read_committed readers see the committed offset
// records recs. Kafka answers a commit before it writes the transaction
// markers, and whoever reads the positions right after a task stopped (a
// move, an offsets change, the task's next owner) reads to the last stable
// offset: without the wait it could miss the final commit and resume from
// the one before, sending records again. Not seeing them in time is logged,
// not failed: the commit itself succeeded.
func (r *sourceRunner) awaitReadable(ctx context.Context, recs []*kgo.Record) {
	if len(recs) == 0 {
		return
	}
	if err := kafkautil.WaitCommitted(ctx, r.admin, recs...); err != nil {
		r.t.log.Warn("offsets committed, but not yet readable", "err", err)
	}
}

// commitExactlyOnce adds the offsets to the open transaction, which already
// holds the records, and commits both together.
func (r *sourceRunner) commitExactlyOnce(ctx context.Context) error {
	batch := r.takePending()
	if !r.inTxn && len(batch) == 0 {
		return nil
	}
	if !r.inTxn {
		if err := r.producer.BeginTransaction(); err != nil {
			return r.abort(fmt.Errorf("begin transaction: %w", err))
		}
		r.inTxn = true
	}
	recs, err := r.offsetRecords(batch)
	if err != nil {
		return r.abort(err)
	}
	for _, kr := range recs {
		r.producer.Produce(context.WithoutCancel(ctx), kr, r.noteProduceErr)
	}
	if err := r.producer.Flush(ctx); err != nil {
		return r.abort(fmt.Errorf("flush: %w", err))
	}
	if err := r.produceErr(); err != nil {
		return r.abort(err)
	}
	if r.offsets.BeforeCommit != nil {
		if err := r.offsets.BeforeCommit(ctx); err != nil {
			return r.abort(err)
		}
	}
	if err := r.producer.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return r.abort(fmt.Errorf("commit transaction: %w", err))
	}
	r.inTxn = false
	r.awaitReadable(ctx, recs)
	// The transaction's records are written for good only now.
	r.commitRecords(ctx)
	r.committed(ctx)
	return nil
}

// abort ends a failed exactly-once transaction; nothing of it becomes
// visible. The task cannot go on (its source has moved past the aborted
// records), so the error is always fatal to it.
func (r *sourceRunner) abort(cause error) error {
	r.inTxn = false
	r.mu.Lock()
	r.committable = nil // aborted: never written
	r.mu.Unlock()
	if kafkautil.IsFenced(cause) {
		return fmt.Errorf("%w: %w", kafkautil.ErrFenced, cause)
	}
	actx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = r.producer.AbortBufferedRecords(actx)
	if err := r.producer.EndTransaction(actx, kgo.TryAbort); err != nil && kafkautil.IsFenced(err) {
		return fmt.Errorf("%w: %w", kafkautil.ErrFenced, cause)
	}
	return fmt.Errorf("%w: %w", errAborted, cause)
}

// recordDone is the promise of a source record: it counts the record and
// keeps the first failure.
func (r *sourceRunner) recordDone(rec *kgo.Record, err error) {
	if err == nil {
		r.acked.Add(1)
		return
	}
	r.lost.Add(1)
	r.noteProduceErr(rec, err)
}

// noteProduceErr keeps the first failure of a produced record.
func (r *sourceRunner) noteProduceErr(rec *kgo.Record, err error) {
	if err == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.produceEr == nil {
		r.produceEr = fmt.Errorf("produce to %s: %w", rec.Topic, err)
	}
}

// uncommitted implements positioned: the task polled records whose offsets
// are not committed yet. (An exactly-once task commits at its transaction
// boundaries, as its connector's transaction.boundary says, and the task
// loop leaves those to it: with the default, poll, every batch's position
// is committed with it at once.)
func (r *sourceRunner) uncommitted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending) > 0
}

func (r *sourceRunner) takePending() map[string]connect.Offset {
	r.mu.Lock()
	defer r.mu.Unlock()
	batch := r.pending
	r.pending = map[string]connect.Offset{}
	return batch
}

// offsetRecords are the offsets-topic records of batch: in the worker's
// topic, and in the connector's own too when it has one, as Kafka Connect
// writes them — in its own alone when the connector authenticates as its
// own principal.
func (r *sourceRunner) offsetRecords(batch map[string]connect.Offset) ([]*kgo.Record, error) {
	writes := make([]wire.OffsetWrite, 0, len(batch))
	for _, o := range batch {
		key, err := records.EncodeOffsetKey(r.t.id.Connector, o.Partition)
		if err != nil {
			return nil, err
		}
		w := wire.OffsetWrite{Key: string(key)}
		if o.Offset != nil {
			val, err := records.EncodeOffsetValue(o.Offset)
			if err != nil {
				return nil, err
			}
			s := string(val)
			w.Value = &s
		}
		writes = append(writes, w)
	}
	worker := r.t.cfg.OffsetsTopic
	if own := r.view.ConnectorTopic(); own != "" && r.t.creds[clientoverrides.Producer] != nil {
		// A connector that is its own principal writes its own topic
		// alone: the worker's holds every team's positions, which its
		// principal must not be able to write (the coordinator requires
		// such a source to have an offsets topic of its own).
		worker = own
	}
	tw := wire.WriteRecords(writes, worker, r.view.ConnectorTopic())
	recs := make([]*kgo.Record, len(tw))
	for i, w := range tw {
		recs[i] = &kgo.Record{Topic: w.Topic, Key: []byte(w.Key)}
		if w.Value != nil {
			recs[i].Value = []byte(*w.Value)
		}
	}
	return recs, nil
}

// offsetsTopicKey names a source connector's own offsets topic (KIP-618).
const offsetsTopicKey = "offsets.storage.topic"

func (r *sourceRunner) close() error {
	var errs []error
	if r.started {
		r.t.stopGauges()
		r.t.stopSignals()
		errs = append(errs, r.task.Stop())
	}
	if r.plain != nil {
		r.plain.Close()
	}
	if r.offsets != nil {
		r.offsets.Close()
	}
	if r.release != nil {
		r.release()
	}
	errs = append(errs, r.chain.Close())
	// Closing fails the records still buffered: they count too.
	r.countAcks()
	return errors.Join(errs...)
}
