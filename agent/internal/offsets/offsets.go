// Package offsets carries out offset changes on an agent (DESIGN §4):
//
//	source: fence every task transactional id ─► one transaction of offset
//	        records (or tombstones) under task 0's id ─► commit
//	replace (source): fence ─► read the offsets topic to its end ─► one
//	        transaction: a tombstone for every key the connector has, then
//	        the new offsets ─► commit
//	sink:   commit / delete the group's offsets, or delete the group
//
// A connector with its own offsets topic (ConnectorTopic) has every write
// go to both topics in the one transaction, and a replace reads and
// tombstones both.
//
// All or nothing: a failure before the commit leaves the previous offsets
// in place. Errors are *api.Error with the REST API's exact messages; the
// cause is logged with the step that failed.
package offsets

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/kafkametrics"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/offsetstore"
	"github.com/sluice-io/sluice/shared/steptimer"
	"github.com/sluice-io/sluice/shared/wire"
)

// Executor applies OffsetsRequests and OffsetsReplaceRequests.
type Executor struct {
	opts []kgo.Opt
	// clients measures the executor's Kafka clients; clientID names its
	// own, and prefixes those of its transactional writers.
	clients  *kafkametrics.Clients
	clientID string
	client   *kgo.Client
	admin    *kadm.Client
	stores   *offsetstore.Registry
	log      *slog.Logger
	// writers is the writer of each transactional id's last change.
	writers *writers
}

// NewExecutor makes an executor with the agent's base Kafka options; stores
// are the agent's view of the offsets topics, which a replace reads. Its
// client is named clientID, each writer clientID-<connector>, all measured
// by clients (nil: unmeasured).
func NewExecutor(log *slog.Logger, stores *offsetstore.Registry, clients *kafkametrics.Clients, clientID string, opts ...kgo.Opt) (*Executor, error) {
	cl, err := kgo.NewClient(clients.With(clientID, opts)...)
	if err != nil {
		return nil, fmt.Errorf("offsets executor client: %w", err)
	}
	return &Executor{opts: opts, clients: clients, clientID: clientID, client: cl, admin: kadm.NewClient(cl), stores: stores, log: log, writers: newWriters()}, nil
}

// Ping checks that a Kafka broker answers the executor's client.
func (e *Executor) Ping(ctx context.Context) error {
	if err := e.client.Ping(ctx); err != nil {
		return fmt.Errorf("ping brokers: %w", err)
	}
	return nil
}

// Close closes the executor's client and the writers it kept.
func (e *Executor) Close() {
	e.writers.close()
	e.client.Close()
}

// ApplySource carries out a source connector's change, unless its
// caller's time ran out before it could start: the coordinator may have
// handed the operation to another agent and moved on to the next one, which
// this one must not overwrite. With req.CallerWaits it returns where it
// wrote, once committed (wire.OffsetsReply.Written); otherwise it returns
// once read_committed readers see the change, and nothing.
func (e *Executor) ApplySource(ctx context.Context, req wire.SourceOffsetsRequest) ([]wire.WrittenOffset, error) {
	if err := e.inTime(ctx, req.Connector, req.Op); err != nil {
		return nil, err
	}
	steps := steptimer.New()
	defer func() {
		e.log.Debug("offsets: source operation", append([]any{"connector", req.Connector, "op", req.Op}, steps.Attrs()...)...)
	}()
	if err := e.fence(ctx, req.Connector, req.FenceIDs, req.TxnID, steps); err != nil {
		return nil, err
	}
	c := change{connector: req.Connector, txnID: req.TxnID, callerWaits: req.CallerWaits, steps: steps}
	writes := wire.WriteRecords(req.Writes, req.Topic, req.ConnectorTopic)
	if kept := e.writers.take(req.TxnID); kept != nil {
		written, retry, err := e.writeKept(ctx, c, kept, writes)
		if !retry {
			return written, err
		}
	}
	// A new writer's init fences the id.
	return e.write(ctx, c, writes)
}

// ApplySink carries out a sink connector's change of its group's offsets,
// unless its caller's time ran out before it could start (as ApplySource).
func (e *Executor) ApplySink(ctx context.Context, req wire.SinkOffsetsRequest) error {
	if err := e.inTime(ctx, req.Connector, req.Op); err != nil {
		return err
	}
	if req.Op == wire.OffsetsOpReset {
		return e.sinkReset(ctx, req)
	}
	return e.sinkAlter(ctx, req)
}

// change is what the writing steps of one source change need to know.
type change struct {
	connector, txnID string
	// callerWaits: answer once committed, with the offsets written.
	callerWaits bool
	steps       *steptimer.Timer
}

// inTime refuses a request whose caller's time ran out before it could
// start.
func (e *Executor) inTime(ctx context.Context, connector, op string) error {
	if err := ctx.Err(); err != nil {
		e.log.Warn("offsets: request not applied: its caller stopped waiting before it could start", "connector", connector, "op", op, "err", err)
		return api.Errorf(api.CodeTimeout, "offsets request for connector %s arrived too late to be applied", connector)
	}
	return nil
}

// Replace carries out req: every offset of the connector is replaced by
// req.Writes (none for a reset), in one transaction, after fencing; as
// Apply, not once its caller's time ran out.
func (e *Executor) Replace(ctx context.Context, req wire.OffsetsReplaceRequest) ([]wire.WrittenOffset, error) {
	if err := e.inTime(ctx, req.Connector, "replace"); err != nil {
		return nil, err
	}
	steps := steptimer.New()
	defer func() {
		e.log.Debug("offsets: source replace", append([]any{"connector", req.Connector, "writes", len(req.Writes)}, steps.Attrs()...)...)
	}()
	if worker := e.stores.Worker().Topic(); req.Topic != worker {
		e.log.Error("offsets: replace names another offsets topic than this agent follows", "connector", req.Connector, "topic", req.Topic, "agent_topic", worker)
		return nil, api.Errorf(api.CodeInternal, "Failed to modify offsets for source connector %s", req.Connector)
	}
	// Every id before the read below, so that no task of the connector can
	// add a partition after it. The writer's id is fenced by the kept
	// writer's epoch when there is one (proven by its commit), else by
	// the new writer — which takes its id only after the read, so the id
	// is fenced now too.
	kept := e.writers.take(req.TxnID)
	writerID := req.TxnID
	if kept == nil {
		writerID = ""
	}
	// A kept writer not used because a step before the write failed is
	// kept again: nothing happened to its id.
	defer func() {
		if kept != nil {
			e.writers.put(req.TxnID, kept)
		}
	}()
	if err := e.fence(ctx, req.Connector, req.FenceIDs, writerID, steps); err != nil {
		return nil, err
	}
	writes, release, err := e.replaceWrites(ctx, req, steps)
	if err != nil {
		return nil, err
	}
	defer func() { release() }()
	c := change{connector: req.Connector, txnID: req.TxnID, callerWaits: req.CallerWaits, steps: steps}
	if kept != nil {
		w := kept
		kept = nil // writeKept keeps or closes it
		written, retry, err := e.writeKept(ctx, c, w, writes)
		if !retry {
			return written, err
		}
		// Someone took the writer's id since the kept writer's epoch:
		// fence it, and read again, as if there had been no kept writer.
		release()
		release = func() {}
		if err := e.fence(ctx, req.Connector, []string{req.TxnID}, "", steps); err != nil {
			return nil, err
		}
		if writes, release, err = e.replaceWrites(ctx, req, steps); err != nil {
			release = func() {}
			return nil, err
		}
	}
	return e.write(ctx, c, writes)
}

// replaceWrites reads the connector's offsets topics to their end and
// returns the records that replace every offset it has by req.Writes; the
// view is held until release.
func (e *Executor) replaceWrites(ctx context.Context, req wire.OffsetsReplaceRequest, steps *steptimer.Timer) ([]wire.TopicWrite, func(), error) {
	view, release, err := e.stores.View(ctx, req.ConnectorTopic)
	if err != nil {
		e.log.Error("offsets: reading the offsets topic failed", "connector", req.Connector, "err", err)
		var ce *offsetstore.CreateTopicError
		var ve *kafkautil.VanishedTopicError
		switch {
		case errors.As(err, &ce):
			return nil, nil, api.Errorf(api.CodeInternal, "%s", ce.Error())
		case errors.As(err, &ve):
			return nil, nil, api.Errorf(api.CodeInternal, "%s", ve.Error())
		}
		return nil, nil, api.Errorf(api.CodeInternal, "Timed out while trying to read to the end of the offsets topic prior to modifying offsets for source connector %s", req.Connector)
	}
	steps.Done("read")
	writes := offsetstore.Replace(view.Entries(req.Connector), req.Writes)
	return wire.WriteRecords(writes, req.Topic, view.ConnectorTopic()), release, nil
}

// fence fences ids, so that no task of the connector commits offsets
// after this point — but writerID, the id the change is written under:
// the writer's own InitProducerID, right after, fences it (one round trip
// to the transaction coordinator fewer, the only fence of a one-task
// connector).
func (e *Executor) fence(ctx context.Context, connector string, ids []string, writerID string, steps *steptimer.Timer) error {
	others := make([]string, 0, len(ids))
	for _, id := range ids {
		if id != writerID {
			others = append(others, id)
		}
	}
	if len(others) == 0 {
		steps.Done("fence")
		return nil
	}
	if err := kafkautil.Fence(ctx, e.client, others...); err != nil {
		e.log.Error("offsets: fencing failed", "connector", connector, "err", err)
		return api.Errorf(api.CodeInternal, "Failed to perform zombie fencing for source connector prior to modifying offsets")
	}
	steps.Done("fence")
	return nil
}

// write writes writes in one transaction under the change's id through a
// new writer, whose init fences the id, and waits until read_committed
// readers see them (or, with callerWaits, returns where it wrote). The
// writer is kept for the id's next change.
func (e *Executor) write(ctx context.Context, c change, writes []wire.TopicWrite) ([]wire.WrittenOffset, error) {
	if len(writes) == 0 {
		return nil, nil
	}
	w, err := kafkautil.NewTxnWriter(c.txnID, e.clients.With(kafkautil.ClientID(e.clientID, c.connector), e.opts)...)
	if err != nil {
		e.log.Error("offsets: writer", "connector", c.connector, "err", err)
		return nil, api.Errorf(api.CodeInternal, "Failed to modify offsets for source connector %s", c.connector)
	}
	// Take the epoch now, right after the fence: a writer that took it
	// lazily at its first write, after a pause, could fence whoever took
	// the id since (the task that resumed when the coordinator moved on).
	if err := w.Init(ctx); err != nil {
		w.Close()
		e.log.Error("offsets: initialising the writer failed", "connector", c.connector, "err", err)
		return nil, api.Errorf(api.CodeInternal, "Failed to modify offsets for source connector %s", c.connector)
	}
	c.steps.Done("init")
	written, err := e.commit(ctx, c, w, writes)
	if err != nil {
		w.Close()
		if errors.Is(err, errKeptFenced) {
			// Someone took the id right after this writer's init.
			e.log.Error("offsets: transactional write failed", "connector", c.connector, "err", err)
			return nil, api.Errorf(api.CodeInternal, "Failed to modify offsets for source connector %s", c.connector)
		}
		return nil, err
	}
	e.writers.put(c.txnID, w)
	return written, nil
}

// writeKept writes writes through the writer kept from the id's last
// change (see writers). retry reports that the change must be made again
// through a new writer: the kept one was fenced — someone took the id since
// — or there is nothing to write, so no commit would prove the fence.
func (e *Executor) writeKept(ctx context.Context, c change, w *kafkautil.TxnWriter, writes []wire.TopicWrite) (written []wire.WrittenOffset, retry bool, err error) {
	if len(writes) == 0 {
		w.Close()
		return nil, true, nil
	}
	c.steps.Done("kept writer")
	written, err = e.commit(ctx, c, w, writes)
	if err == nil {
		e.writers.put(c.txnID, w)
		return written, false, nil
	}
	w.Close()
	if errors.Is(err, errKeptFenced) {
		e.log.Debug("offsets: the kept writer was fenced; writing through a new one", "connector", c.connector)
		return nil, true, nil
	}
	return nil, false, err
}

// errKeptFenced marks a commit refused because its writer was fenced.
var errKeptFenced = errors.New("writer fenced")

// commit writes writes in one transaction through w and, unless the
// caller waits, waits until read_committed readers see them; then it
// returns nothing, else the offsets written. A fenced writer's failure
// wraps errKeptFenced; nothing it wrote is visible.
func (e *Executor) commit(ctx context.Context, c change, w *kafkautil.TxnWriter, writes []wire.TopicWrite) ([]wire.WrittenOffset, error) {
	recs := make([]*kgo.Record, len(writes))
	for i, wr := range writes {
		r := &kgo.Record{Topic: wr.Topic, Key: []byte(wr.Key)}
		if wr.Value != nil {
			r.Value = []byte(*wr.Value)
		}
		recs[i] = r
	}
	if err := w.Write(ctx, recs...); err != nil {
		if errors.Is(err, kafkautil.ErrFenced) && ctx.Err() == nil {
			return nil, fmt.Errorf("%w: %w", errKeptFenced, err)
		}
		e.log.Error("offsets: transactional write failed", "connector", c.connector, "err", err)
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, api.Errorf(api.CodeInternal, "Timed out while attempting to modify offsets for source connector %s", c.connector)
		}
		return nil, api.Errorf(api.CodeInternal, "Failed to modify offsets for source connector %s", c.connector)
	}
	c.steps.Done("write")
	if c.callerWaits {
		return writtenOffsets(recs), nil
	}
	// Reply only once read_committed readers see the change: the
	// coordinator reads the topic to its end right after, so that a GET
	// after the answer shows it, and tasks read it when they start.
	if err := kafkautil.WaitCommitted(ctx, e.admin, recs...); err != nil {
		e.log.Warn("offsets: committed, but not yet visible to readers", "connector", c.connector, "err", err)
	}
	c.steps.Done("visible")
	return nil, nil
}

// writtenOffsets is the last offset of recs in each partition.
func writtenOffsets(recs []*kgo.Record) []wire.WrittenOffset {
	var out []wire.WrittenOffset
	for topic, parts := range kafkautil.LastOffsets(recs) {
		for p, o := range parts {
			out = append(out, wire.WrittenOffset{Topic: topic, Partition: p, Offset: o})
		}
	}
	return out
}

// zombieAlter is the spec's 500 when the group still has live members.
func zombieAlter(name string) error {
	return api.Errorf(api.CodeInternal, "Failed to alter consumer group offsets for connector %s either because its tasks haven't stopped completely yet or the connector was resumed before the request to alter its offsets could be successfully completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks.", name)
}

func zombieReset(name string) error {
	return api.Errorf(api.CodeInternal, "Failed to reset consumer group offsets for connector %s either because its tasks haven't stopped completely yet or the connector was resumed before the request to reset its offsets could be successfully completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks.", name)
}

// liveMember reports whether err means the group still has members.
func liveMember(err error) bool {
	return errors.Is(err, kerr.UnknownMemberID) || errors.Is(err, kerr.IllegalGeneration) ||
		errors.Is(err, kerr.RebalanceInProgress) || errors.Is(err, kerr.GroupSubscribedToTopic) ||
		errors.Is(err, kerr.NonEmptyGroup)
}

func (e *Executor) sinkAlter(ctx context.Context, req wire.SinkOffsetsRequest) error {
	commit := kadm.Offsets{}
	del := kadm.TopicsSet{}
	for _, o := range req.Offsets {
		if o.Offset == nil {
			del.Add(o.Topic, o.Partition)
			continue
		}
		commit.Add(kadm.Offset{Topic: o.Topic, Partition: o.Partition, At: *o.Offset, LeaderEpoch: -1})
	}
	if len(commit) > 0 {
		err := kafkautil.Retry(ctx, func() error {
			resp, err := e.admin.CommitOffsets(ctx, req.Group, commit)
			if err == nil {
				err = resp.Error()
			}
			return err
		})
		if err != nil {
			e.log.Error("offsets: committing group offsets failed", "connector", req.Connector, "group", req.Group, "err", err)
			if liveMember(err) {
				return zombieAlter(req.Connector)
			}
			return api.Errorf(api.CodeInternal, "Failed to alter consumer group offsets for connector %s", req.Connector)
		}
	}
	if len(del) > 0 {
		err := kafkautil.Retry(ctx, func() error {
			resp, err := e.admin.DeleteOffsets(ctx, req.Group, del)
			if err == nil {
				err = resp.Error()
			}
			return err
		})
		if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			e.log.Error("offsets: deleting group offsets failed", "connector", req.Connector, "group", req.Group, "err", err)
			if liveMember(err) {
				return zombieAlter(req.Connector)
			}
			return api.Errorf(api.CodeInternal, "Failed to alter consumer group offsets for connector %s", req.Connector)
		}
	}
	return nil
}

func (e *Executor) sinkReset(ctx context.Context, req wire.SinkOffsetsRequest) error {
	err := kafkautil.Retry(ctx, func() error {
		resp, err := e.admin.DeleteGroup(ctx, req.Group)
		if err == nil {
			err = resp.Err
		}
		return err
	})
	if err == nil || errors.Is(err, kerr.GroupIDNotFound) {
		return nil
	}
	e.log.Error("offsets: deleting group failed", "connector", req.Connector, "group", req.Group, "err", err)
	if liveMember(err) {
		return zombieReset(req.Connector)
	}
	return api.Errorf(api.CodeInternal, "Failed to reset consumer group offsets for sink connector %s", req.Connector)
}
