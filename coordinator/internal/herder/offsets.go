package herder

import (
	"context"
	"errors"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/coordinator/internal/instances"
	"github.com/sluice-io/sluice/coordinator/internal/metrics"
	"github.com/sluice-io/sluice/coordinator/internal/offsetval"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/offsetstore"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/steptimer"
)

// Success messages of spec §5.6: "definite" when the connector's own hook
// took part, "framework" otherwise.
const (
	msgAlterDefinite   = "The offsets for this connector have been altered successfully"
	msgAlterFramework  = "The Connect framework-managed offsets for this connector have been altered successfully. However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses."
	msgResetDefinite   = "The offsets for this connector have been reset successfully"
	msgResetFramework  = "The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses."
	notStoppedTemplate = "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint"
)

// GetOffsets answers GET /connectors/{name}/offsets.
func (h *Herder) GetOffsets(ctx context.Context, name string) (v1.ConnectorOffsets, error) {
	c, ok := h.configs.State.Get(name)
	if !ok {
		return v1.ConnectorOffsets{}, notFound(name)
	}
	switch h.connectorType(c.Config) {
	case v1.TypeSink:
		return h.sinkOffsets(ctx, name, records.SinkGroupID(name, c.Config))
	case v1.TypeSource:
		view, release, err := h.sourceView(ctx, name, h.ownOffsetsTopic(c.Config), "Failed to retrieve offsets for source connector %s")
		defer release()
		if err != nil {
			return v1.ConnectorOffsets{}, err
		}
		out := v1.ConnectorOffsets{Offsets: []v1.ConnectorOffset{}}
		for _, e := range view.Entries(name) {
			// With a topic of its own, a partition that only the
			// worker's topic holds is listed with a null offset, as
			// Kafka Connect lists it (offsetstore.View).
			if e.Live {
				out.Offsets = append(out.Offsets, v1.ConnectorOffset{Partition: e.Partition, Offset: e.Offset})
			}
		}
		return out, nil
	}
	return v1.ConnectorOffsets{}, v1.Errorf(v1.CodeInternal, "Failed to find any class that implements Connector and which name matches %s", c.Config["connector.class"])
}

// groupOffsets fetches the committed offsets of a consumer group, retrying
// what Kafka says is retriable for up to 30 s; a group that does not exist
// has none.
func (h *Herder) groupOffsets(ctx context.Context, group string) (kadm.OffsetResponses, error) {
	var resp kadm.OffsetResponses
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := kafkautil.Retry(rctx, func() error {
		var err error
		if resp, err = h.admin.FetchOffsets(rctx, group); err == nil {
			err = resp.Error()
		}
		return err
	})
	if errors.Is(err, kerr.GroupIDNotFound) {
		return kadm.OffsetResponses{}, nil
	}
	return resp, err
}

func (h *Herder) sinkOffsets(ctx context.Context, name, group string) (v1.ConnectorOffsets, error) {
	resp, err := h.groupOffsets(ctx, group)
	if err != nil {
		h.log.Error("fetching group offsets failed", "connector", name, "group", group, "err", err)
		return v1.ConnectorOffsets{}, v1.Errorf(v1.CodeInternal, "Failed to retrieve consumer group offsets for sink connector %s", name)
	}
	out := v1.ConnectorOffsets{Offsets: []v1.ConnectorOffset{}}
	for _, o := range resp.Sorted() {
		if o.At < 0 {
			continue
		}
		out.Offsets = append(out.Offsets, v1.ConnectorOffset{
			Partition: map[string]any{"kafka_topic": o.Topic, "kafka_partition": o.Partition},
			Offset:    map[string]any{"kafka_offset": o.At},
		})
	}
	return out, nil
}

// checkStopped is spec §5.2 step 3: the connector exists and is STOPPED
// with no tasks.
func (h *Herder) checkStopped(name string) (store.Connector, error) {
	c, ok := h.configs.State.Get(name)
	if !ok {
		return c, notFound(name)
	}
	if c.TargetState != records.TargetStopped || len(c.Tasks) != 0 {
		return c, v1.Errorf(v1.CodeBadRequest, notStoppedTemplate, name)
	}
	return c, nil
}

// AlterOffsets answers PATCH /connectors/{name}/offsets.
func (h *Herder) AlterOffsets(ctx context.Context, name string, offsets []v1.ConnectorOffset) (_ v1.Message, err error) {
	unlock := h.locks.Lock(name)
	defer unlock()
	defer h.observeOffsets(metrics.KindAlter, time.Now(), &err)
	c, err := h.checkStopped(name)
	if err != nil {
		return v1.Message{}, err
	}
	res, err := h.applyOffsets(ctx, name, c, offsetsChange{op: v1.OffsetsOpAlter, entries: offsetval.Collapse(offsets),
		meta: historyMeta{operation: v1.HistoryAlter}})
	if err != nil {
		return v1.Message{}, err
	}
	if res.definite {
		return v1.Message{Message: msgAlterDefinite}, nil
	}
	return v1.Message{Message: msgAlterFramework}, nil
}

// ResetOffsets answers DELETE /connectors/{name}/offsets.
func (h *Herder) ResetOffsets(ctx context.Context, name string) (_ v1.Message, err error) {
	unlock := h.locks.Lock(name)
	defer unlock()
	defer h.observeOffsets(metrics.KindReset, time.Now(), &err)
	return h.resetLocked(ctx, name)
}

// observeOffsets records an offsets operation of kind that started at
// start and ended with *err (a refusal, such as a connector not stopped,
// counts as an error): deferred by each operation, after its lock is
// taken, so that the time spent waiting for another request on the
// connector is not the operation's.
func (h *Herder) observeOffsets(kind string, start time.Time, err *error) {
	h.cfg.Metrics.ObserveOffsets(kind, time.Since(start), *err)
}

func (h *Herder) resetLocked(ctx context.Context, name string) (v1.Message, error) {
	c, err := h.checkStopped(name)
	if err != nil {
		return v1.Message{}, err
	}
	res, err := h.applyOffsets(ctx, name, c, offsetsChange{op: v1.OffsetsOpReset, meta: historyMeta{operation: v1.HistoryReset}})
	if err != nil {
		return v1.Message{}, err
	}
	if res.definite {
		return v1.Message{Message: msgResetDefinite}, nil
	}
	return v1.Message{Message: msgResetFramework}, nil
}

// deleteAndReset is DELETE /connectors/{name}?reset_offsets=true: reset the
// offsets with the checks of DELETE …/offsets, then delete the connector. A
// failed reset deletes nothing.
func (h *Herder) deleteAndReset(ctx context.Context, name string) error {
	unlock := h.locks.Lock(name)
	defer unlock()
	start := time.Now()
	_, err := h.resetLocked(ctx, name)
	h.observeOffsets(metrics.KindReset, start, &err)
	if err != nil {
		return err
	}
	return h.writeDelete(ctx, name)
}

// offsetsChange is one change of a stopped connector's positions: what
// the agent does (op), the new positions of an alter, how the history
// entry names it, and whether it is only a dry run.
type offsetsChange struct {
	op      string // v1.OffsetsOpAlter or v1.OffsetsOpReset
	entries []v1.ConnectorOffset
	meta    historyMeta
	dryRun  bool
}

// changeResult is what a change did, or with a dry run would do.
type changeResult struct {
	definite  bool
	changes   []v1.OffsetChange
	historyID string
}

// applyOffsets validates, runs the connector's hook, waits for the tasks to
// be confirmed stopped, records the change as pending in the offsets
// history, has an agent write it and marks the entry. A dry run stops after
// the validation, with the changes the current positions give: it calls no
// hook, as a connector's hook may act on an external system.
func (h *Herder) applyOffsets(ctx context.Context, name string, c store.Connector, ch offsetsChange) (changeResult, error) {
	plugin, ok := h.pluginOf(c.Config)
	if !ok {
		return changeResult{}, v1.Errorf(v1.CodeInternal, "%s", h.reg.UnknownConnectorMessage(c.Config["connector.class"]))
	}
	op, entries := ch.op, ch.entries
	req := v1.OffsetsRequest{Term: h.term.Load(), Connector: name, Op: op}
	steps := steptimer.New()
	defer func() {
		h.log.Debug("offsets: operation", append([]any{"connector", name, "op", op}, steps.Attrs()...)...)
	}()
	var hookOffsets []connect.Offset
	var changes []v1.OffsetChange
	// current reads the positions the change moves from and works out
	// the changes — and for a source, the records that make them.
	var current func() error
	switch plugin.Kind {
	case connect.KindSource:
		if op == v1.OffsetsOpAlter {
			if err := offsetval.Source(entries); err != nil {
				return changeResult{}, err
			}
		}
		req.Type, req.Topic = v1.TypeSource, h.cfg.OffsetsTopic
		req.FenceIDs, req.TxnID = h.fenceIDs(name, c), records.TransactionalID(h.cfg.GroupID, name, 0)
		current = func() error {
			view, release, err := h.sourceView(ctx, name, h.ownOffsetsTopic(c.Config), "Timed out while trying to read to the end of the offsets topic prior to modifying offsets for source connector %s")
			defer release()
			if err != nil {
				return err
			}
			steps.Done("read")
			stored := view.Entries(name)
			writes, hook, err := h.sourceWrites(name, stored, entries, op)
			if err != nil {
				return err
			}
			req.Writes, req.ConnectorTopic, hookOffsets = writes, view.ConnectorTopic(), hook
			changes = changesFrom(sourcePositions(stored), op, entries)
			return nil
		}
	case connect.KindSink:
		req.Type, req.Group = v1.TypeSink, records.SinkGroupID(name, c.Config)
		if op == v1.OffsetsOpAlter {
			parsed, err := offsetval.Sink(entries)
			if err != nil {
				return changeResult{}, err
			}
			if err := h.checkSinkPartitions(ctx, name, parsed); err != nil {
				return changeResult{}, err
			}
			for _, p := range parsed {
				req.Offsets = append(req.Offsets, v1.SinkPartitionOffset{Topic: p.Topic, Partition: p.Partition, Offset: p.Offset})
			}
			hookOffsets = offsetval.ToConnect(entries)
			entries = sinkEntries(parsed)
		} else {
			cur, err := h.sinkOffsets(ctx, name, req.Group)
			if err != nil {
				return changeResult{}, v1.Errorf(v1.CodeInternal, "Failed to list offsets prior to resetting offsets for sink connector %s", name)
			}
			for _, o := range cur.Offsets {
				hookOffsets = append(hookOffsets, connect.Offset{Partition: o.Partition})
			}
		}
		current = func() error {
			var err error
			changes, err = h.changesOf(ctx, name, plugin.Kind, req.Group, "", op, entries)
			return err
		}
	default:
		return changeResult{}, v1.Errorf(v1.CodeInternal, "connector %s is neither a source nor a sink", name)
	}
	if ch.dryRun {
		err := current()
		return changeResult{changes: changes}, err
	}
	h.awaitTasksStopped(ctx, name, c)
	steps.Done("stopped")
	// The positions are read once the tasks are stopped: a stopping task
	// commits its last offsets, which are what the change moves from.
	if err := current(); err != nil {
		return changeResult{}, err
	}
	entry, err := h.beginHistory(ctx, name, req.Type, req.Group, req.ConnectorTopic, ch.meta, changes)
	if err != nil {
		return changeResult{}, historyRefused(name, err)
	}
	// The hook runs once the change is recorded as pending: it may act on
	// an external system, which no refusal could take back.
	definite, err := h.alterOffsetsHook(ctx, plugin, c.Config, hookOffsets)
	if err != nil {
		h.finishHistory(ctx, entry, err)
		return changeResult{}, err
	}
	steps.Done("hook")
	send := h.sendOffsetsWritten
	if req.Type == v1.TypeSource && op == v1.OffsetsOpReset {
		// The agent works a reset out from the offsets topic itself, so
		// the request stays small however many partitions accumulated.
		send = func(ctx context.Context, req v1.OffsetsRequest) ([]v1.WrittenOffset, error) {
			return h.sendReplaceWritten(ctx, req, nil)
		}
	}
	// A source's agent answers once its transaction committed; the wait
	// until read_committed readers see it runs here, beside the history
	// marker, rather than before it.
	req.CallerWaits = req.Type == v1.TypeSource
	var written []v1.WrittenOffset
	err = h.step(StepApplyOffsets, func() error {
		var err error
		written, err = send(ctx, req)
		return err
	})
	steps.Done("agent")
	visible := make(chan struct{})
	go func() {
		defer close(visible)
		h.awaitVisible(ctx, name, written)
	}()
	h.settleHistory(ctx, entry, plugin.Kind, err)
	<-visible
	steps.Done("marker, visible")
	if err != nil {
		return changeResult{}, err
	}
	return changeResult{definite: definite, changes: changes, historyID: entry.ID}, nil
}

// awaitVisible waits until read_committed readers see what an agent
// wrote (v1.OffsetsReply.Written; nothing when the agent waited itself),
// so that a GET after the answer shows the change. A wait that runs out
// is logged: the change is committed, and readers wait for it themselves.
func (h *Herder) awaitVisible(ctx context.Context, name string, written []v1.WrittenOffset) {
	if len(written) == 0 {
		return
	}
	want := map[string]map[int32]int64{}
	for _, w := range written {
		if want[w.Topic] == nil {
			want[w.Topic] = map[int32]int64{}
		}
		want[w.Topic][w.Partition] = w.Offset
	}
	// Not ended by a REST client that leaves: the connector stays locked
	// until the change is visible, so a resume right after cannot start
	// its tasks from the positions before it.
	vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), visibleTimeout)
	defer cancel()
	if err := kafkautil.WaitVisible(vctx, h.admin, want); err != nil {
		h.log.Warn("offsets: committed, but not yet visible to readers", "connector", name, "err", err)
	}
}

// visibleTimeout bounds awaitVisible.
const visibleTimeout = 10 * time.Second

// changesOf are the changes op makes over name's current positions: an
// alter's entries, each from its current position; a reset's removal of
// every position.
func (h *Herder) changesOf(ctx context.Context, name string, kind connect.Kind, group, topic, op string, entries []v1.ConnectorOffset) ([]v1.OffsetChange, error) {
	current, err := h.positionsOf(ctx, name, kind, group, topic)
	if err != nil {
		return nil, err
	}
	return changesFrom(current, op, entries), nil
}

// changesFrom are the changes op makes over the positions current.
func changesFrom(current positions, op string, entries []v1.ConnectorOffset) []v1.OffsetChange {
	if op == v1.OffsetsOpReset {
		return current.replacedBy(nil)
	}
	return current.changesTo(entries)
}

// sourceWrites turns entries into offsets-topic records, given what the
// connector has (stored). An altered partition is written under its
// canonical key, and every other key encoding seen for it is tombstoned, so
// it keeps a single identity; a reset tombstones every key of every
// partition the connector has.
func (h *Herder) sourceWrites(name string, stored []offsetstore.Entry, entries []v1.ConnectorOffset, op string) ([]v1.OffsetWrite, []connect.Offset, error) {
	known := map[string]offsetEntry{}
	for _, e := range stored {
		known[records.PartitionID(e.Partition)] = offsetEntry{rawKeys: e.RawKeys}
	}
	var writes []v1.OffsetWrite
	var hook []connect.Offset
	if op == v1.OffsetsOpReset {
		for _, e := range stored {
			if e.Live {
				hook = append(hook, connect.Offset{Partition: e.Partition})
			}
		}
		return offsetstore.Replace(stored, nil), hook, nil
	}
	for _, e := range entries {
		key, err := records.EncodeOffsetKey(name, e.Partition)
		if err != nil {
			return nil, nil, v1.Errorf(v1.CodeBadRequest, "%v", err)
		}
		for _, k := range known[records.PartitionID(e.Partition)].rawKeys {
			if k != string(key) {
				writes = append(writes, v1.OffsetWrite{Key: k})
			}
		}
		w := v1.OffsetWrite{Key: string(key)}
		if e.Offset != nil {
			val, err := records.EncodeOffsetValue(e.Offset)
			if err != nil {
				return nil, nil, v1.Errorf(v1.CodeBadRequest, "%v", err)
			}
			s := string(val)
			w.Value = &s
		}
		writes = append(writes, w)
		hook = append(hook, connect.Offset{Partition: e.Partition, Offset: e.Offset})
	}
	return writes, hook, nil
}

type offsetEntry struct {
	rawKeys []string
}

// fenceIDs lists every transactional id that may hold the connector's
// offsets: every task id the name ever had (a task of a since-lowered
// tasks.max may still run on a cut-off agent), and up to tasks.max.
func (h *Herder) fenceIDs(name string, c store.Connector) []string {
	n := max(h.configs.State.TaskIDBound(name), instances.MaxTasks(c.Config))
	ids := make([]string, n)
	for i := range ids {
		ids[i] = records.TransactionalID(h.cfg.GroupID, name, i)
	}
	return ids
}

// awaitTasksStopped waits, up to the task shutdown timeout, until every
// agent confirmed that it runs no task of the connector (DESIGN §4). The
// agents' last reports are not enough: a task assigned since the last
// heartbeat, or one whose revoke is still under way, is in none. So every
// known agent is asked to revoke every task id the connector may have had;
// an agent confirms a task it does not hold at once, and one it holds only
// after the task stopped, committed and closed its clients. Past the
// timeout the operation proceeds: source tasks are fenced by it, and a live
// sink member makes the agent answer the retry message. It reports whether
// every agent confirmed (or is gone).
func (h *Herder) awaitTasksStopped(ctx context.Context, name string, c store.Connector) bool {
	ids := map[v1.TaskID]bool{}
	for i := range len(h.fenceIDs(name, c)) {
		ids[v1.TaskID{Connector: name, Task: i}] = true
	}
	var agents []string
	for _, a := range h.rec.Agents() {
		agents = append(agents, a.ID)
	}
	for _, id := range h.rec.TasksOfConnector(name) {
		ids[id] = true
	}
	list := make([]v1.TaskID, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Task < list[j].Task })

	rctx, cancel := context.WithTimeout(ctx, h.cfg.TaskShutdownTimeout)
	defer cancel()
	var wg sync.WaitGroup
	var unconfirmed atomic.Bool
	for _, agent := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reply, err := h.revoke(rctx, agent, list)
			switch {
			case err != nil && v1.IsCode(err, v1.CodeUnavailable):
				// The agent is gone: its tasks are fenced by the operation.
				h.rec.ForgetReported(agent, list)
			case err != nil:
				unconfirmed.Store(true)
				h.log.Warn("offsets: an agent did not confirm the connector's tasks stopped", "connector", name, "agent", agent, "err", err)
			case len(reply.Stopped) < len(list):
				unconfirmed.Store(true)
				h.log.Warn("offsets: tasks did not stop within the task shutdown timeout", "connector", name, "agent", agent, "failed", reply.Failed)
			}
		}()
	}
	wg.Wait()
	return !unconfirmed.Load()
}

// sendOffsets hands the operation to a live agent, trying the next one when
// an agent cannot be reached.
func (h *Herder) sendOffsets(ctx context.Context, req v1.OffsetsRequest) error {
	_, err := h.sendOffsetsWritten(ctx, req)
	return err
}

// sendOffsetsWritten is sendOffsets, returning what the agent wrote (for a
// request with CallerWaits: v1.OffsetsReply.Written).
func (h *Herder) sendOffsetsWritten(ctx context.Context, req v1.OffsetsRequest) ([]v1.WrittenOffset, error) {
	var written []v1.WrittenOffset
	err := h.tryAgents(ctx, req.Op, req.Connector, offsetsFeatures(req.ConnectorTopic), func(ctx context.Context, agent string) error {
		var err error
		written, err = h.rpc.Offsets(ctx, agent, req)
		return err
	})
	return written, err
}

// sendReplace has a live agent replace every source offset of the
// connector of legacy with writes (v1.OffsetsReplaceRequest). legacy is the
// same change as an OffsetsRequest, a tombstone for every key included, for
// an agent of a version that does not serve replace.
func (h *Herder) sendReplace(ctx context.Context, legacy v1.OffsetsRequest, writes []v1.OffsetWrite) error {
	_, err := h.sendReplaceWritten(ctx, legacy, writes)
	return err
}

// sendReplaceWritten is sendReplace, returning what the agent wrote (as
// sendOffsetsWritten).
func (h *Herder) sendReplaceWritten(ctx context.Context, legacy v1.OffsetsRequest, writes []v1.OffsetWrite) ([]v1.WrittenOffset, error) {
	req := v1.OffsetsReplaceRequest{Term: legacy.Term, Connector: legacy.Connector, FenceIDs: legacy.FenceIDs,
		TxnID: legacy.TxnID, Topic: legacy.Topic, Writes: writes, ConnectorTopic: legacy.ConnectorTopic, CallerWaits: legacy.CallerWaits}
	var written []v1.WrittenOffset
	err := h.tryAgents(ctx, legacy.Op, legacy.Connector, offsetsFeatures(legacy.ConnectorTopic), func(ctx context.Context, agent string) error {
		var err error
		written, err = h.rpc.ReplaceOffsets(ctx, agent, req, func() v1.OffsetsRequest { return legacy })
		return err
	})
	return written, err
}

// tryAgents runs call on a live agent that serves features, trying the
// next one when an agent cannot be reached; op and connector name the
// operation in the answer when none can.
func (h *Herder) tryAgents(ctx context.Context, op, connector string, features []string, call func(ctx context.Context, agent string) error) error {
	agents := h.rec.Registered(features...)
	for _, agent := range agents {
		err := h.callWhileAlive(ctx, agent, call)
		if err == nil {
			return nil
		}
		if !v1.IsCode(err, v1.CodeUnavailable) {
			return err
		}
		h.log.Warn("agent unreachable for an offsets operation; trying another", "connector", connector, "operation", op, "agent", agent, "err", err)
	}
	return v1.Errorf(v1.CodeUnavailable, "No agent is available to %s offsets for connector %s", op, connector)
}

// offsetsCallTimeout bounds one offsets operation on one agent.
const offsetsCallTimeout = 60 * time.Second

// callWhileAlive sends req to agent and waits for the answer while the
// agent holds its lease: an agent that dies mid-operation never answers, and
// waiting out the whole timeout would hold the request for a minute. Its
// loss — once its lease is over, whatever made the leader take it for lost —
// is answered as "unavailable", so the caller moves to another agent;
// retrying is safe, as every offsets operation is idempotent (fence, then
// one transaction; or group commits of fixed values).
func (h *Herder) callWhileAlive(ctx context.Context, agent string, call func(ctx context.Context, agent string) error) error {
	// The timeout travels to the agent, bounded by the agent lease; an
	// agent paused past its lease refuses the request when it wakes (its
	// transport checks that its lease is current), so it cannot write
	// after the operation moved to another agent.
	// The wait does not end with the caller's context: a REST client that
	// leaves must not release the connector while the agent may still
	// commit; the agent itself stops once its lease is no longer current.
	octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(offsetsCallTimeout, h.cfg.AgentLease))
	defer cancel()
	lost := make(chan struct{})
	seen, known := h.rec.LastSeen(agent)
	if !known {
		seen = time.Now() // gone since it was chosen: wait, as for a closed connection
	}
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-octx.Done():
				return
			case <-tick.C:
				last, alive := h.rec.LastSeen(agent)
				if alive {
					seen = last
					continue
				}
				close(lost)
				// An agent lost by its lease has stopped the operation
				// itself: its own lease, timed from its heartbeats'
				// sending, ends before the leader's. One lost by its closed
				// connection (presence probes) may still hold its lease and
				// be at work — its Kafka connection may well be up — and
				// taking the operation elsewhere now would let its late
				// commit land after, and fence, its successor's. Then the
				// call runs out its deadline, which the agent holds too.
				if time.Since(seen) >= h.cfg.AgentLease {
					cancel()
				}
				return
			}
		}
	}()
	err := call(octx, agent)
	if err == nil {
		return nil
	}
	select {
	case <-lost:
		return v1.Errorf(v1.CodeUnavailable, "agent %s was lost during the operation", agent)
	default:
	}
	if err != nil && ctx.Err() == nil && errors.Is(octx.Err(), context.DeadlineExceeded) {
		// The agent did not answer within its deadline, which it was sent:
		// past it the agent cannot commit, so another agent may take over.
		return v1.Errorf(v1.CodeUnavailable, "agent %s did not answer in time", agent)
	}
	return err
}
