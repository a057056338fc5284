package offsets

import (
	"context"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/coordinator/internal/instances"
	"github.com/sluice-io/sluice/coordinator/internal/offsetval"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/offsetstore"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/steptimer"
	"github.com/sluice-io/sluice/shared/wire"
)

// Change is one change of a stopped connector's positions: what the agent
// does (Op), the new positions of an alter, how the history entry names
// it, and whether it is only a dry run.
type Change struct {
	// Op is wire.OffsetsOpAlter or wire.OffsetsOpReset.
	Op      string
	Entries []api.ConnectorOffset
	Meta    Meta
	DryRun  bool
}

// result is what a change did, or with a dry run would do.
type result struct {
	definite  bool
	changes   []api.OffsetChange
	historyID string
}

// Apply makes ch on connector c, named name, which is STOPPED; the caller
// holds name's lock (a move of a connector holds both names').
func (s *Service) Apply(ctx context.Context, name string, c store.Connector, ch Change) error {
	_, err := s.apply(ctx, name, c, ch)
	return err
}

// apply validates, runs the connector's hook, waits for the tasks to be
// confirmed stopped, records the change as pending in the offsets history,
// has an agent write it and marks the entry. A dry run stops after the
// validation, with the changes the current positions give: it calls no
// hook, as a connector's hook may act on an external system.
func (s *Service) apply(ctx context.Context, name string, c store.Connector, ch Change) (result, error) {
	choice, ok := s.cfg.Plugins.Choose(c.Config)
	if !ok {
		return result{}, api.Errorf(api.CodeInternal, "%s", s.cfg.Plugins.UnknownConnectorMessage(c.Config["connector.class"]))
	}
	plugin := choice.Plugin
	op, entries := ch.Op, ch.Entries
	// One of the two requests is sent, as the connector's kind (typ) says.
	src := wire.SourceOffsetsRequest{Term: s.cfg.Term(), Connector: name, Op: op}
	snk := wire.SinkOffsetsRequest{Term: s.cfg.Term(), Connector: name, Op: op}
	var typ string
	steps := steptimer.New()
	defer func() {
		s.log.Debug("offsets: operation", append([]any{"connector", name, "op", op}, steps.Attrs()...)...)
	}()
	var hookOffsets []connect.Offset
	var changes []api.OffsetChange
	// current reads the positions the change moves from and works out
	// the changes — and for a source, the records that make them.
	var current func() error
	switch plugin.Kind {
	case connect.KindSource:
		if op == wire.OffsetsOpAlter {
			if err := offsetval.Source(entries); err != nil {
				return result{}, err
			}
		}
		typ, src.Topic = api.TypeSource, s.cfg.OffsetsTopic
		src.FenceIDs, src.TxnID = s.FenceIDs(name, c), records.TransactionalID(s.cfg.GroupID, name, 0)
		current = func() error {
			stored, topic, err := s.read.source(ctx, name, s.topics.Own(c.Config), "Timed out while trying to read to the end of the offsets topic prior to modifying offsets for source connector %s")
			if err != nil {
				return err
			}
			steps.Done("read")
			writes, hook, err := sourceWrites(name, stored, entries, op)
			if err != nil {
				return err
			}
			src.Writes, src.ConnectorTopic, hookOffsets = writes, topic, hook
			changes = changesFrom(sourcePositions(stored), op, entries)
			return nil
		}
	case connect.KindSink:
		typ, snk.Group = api.TypeSink, records.SinkGroupID(name, c.Config)
		if op == wire.OffsetsOpAlter {
			parsed, err := offsetval.Sink(entries)
			if err != nil {
				return result{}, err
			}
			if err := s.CheckSinkPartitions(ctx, name, parsed); err != nil {
				return result{}, err
			}
			for _, p := range parsed {
				snk.Offsets = append(snk.Offsets, wire.SinkPartitionOffset{Topic: p.Topic, Partition: p.Partition, Offset: p.Offset})
			}
			hookOffsets = offsetval.ToConnect(entries)
			entries = SinkEntries(parsed)
		} else {
			cur, err := s.read.sink(ctx, name, snk.Group)
			if err != nil {
				return result{}, api.Errorf(api.CodeInternal, "Failed to list offsets prior to resetting offsets for sink connector %s", name)
			}
			for _, o := range cur.Offsets {
				hookOffsets = append(hookOffsets, connect.Offset{Partition: o.Partition})
			}
		}
		current = func() error {
			cur, err := s.read.of(ctx, name, plugin.Kind, snk.Group, "")
			if err != nil {
				return err
			}
			changes = changesFrom(cur, op, entries)
			return nil
		}
	default:
		return result{}, api.Errorf(api.CodeInternal, "connector %s is neither a source nor a sink", name)
	}
	if ch.DryRun {
		err := current()
		return result{changes: changes}, err
	}
	s.calls.AwaitTasksStopped(ctx, name, c)
	steps.Done("stopped")
	// The positions are read once the tasks are stopped: a stopping task
	// commits its last offsets, which are what the change moves from.
	if err := current(); err != nil {
		return result{}, err
	}
	entry, err := s.hist.Begin(ctx, name, typ, snk.Group, src.ConnectorTopic, ch.Meta, changes)
	if err != nil {
		return result{}, historyRefused(name, err)
	}
	// The hook runs once the change is recorded as pending: it may act on
	// an external system, which no refusal could take back.
	definite, err := s.AlterOffsetsHook(ctx, plugin, c.Config, hookOffsets)
	if err != nil {
		s.hist.Finish(ctx, entry, err)
		return result{}, err
	}
	steps.Done("hook")
	// A source's agent answers once its transaction committed; the wait
	// until read_committed readers see it runs here, beside the history
	// marker, rather than before it.
	var send func(ctx context.Context) ([]wire.WrittenOffset, error)
	switch {
	case typ == api.TypeSink:
		send = func(ctx context.Context) ([]wire.WrittenOffset, error) { return nil, s.calls.SendSink(ctx, snk) }
	case op == wire.OffsetsOpReset:
		// The agent works a reset out from the offsets topic itself, so
		// the request stays small however many partitions accumulated.
		reset := wire.OffsetsReplaceRequest{Term: src.Term, Connector: name, FenceIDs: src.FenceIDs, TxnID: src.TxnID,
			Topic: src.Topic, ConnectorTopic: src.ConnectorTopic, CallerWaits: true}
		send = func(ctx context.Context) ([]wire.WrittenOffset, error) { return s.calls.sendReplaceWritten(ctx, reset) }
	default:
		src.CallerWaits = true
		send = func(ctx context.Context) ([]wire.WrittenOffset, error) { return s.calls.sendSourceWritten(ctx, src) }
	}
	var written []wire.WrittenOffset
	err = s.step(ctx, faults.OffsetsApply, func() error {
		var err error
		written, err = send(ctx)
		return err
	})
	steps.Done("agent")
	visible := make(chan struct{})
	go func() {
		defer close(visible)
		s.awaitVisible(ctx, name, written)
	}()
	s.hist.Settle(ctx, entry, plugin.Kind, err)
	<-visible
	steps.Done("marker, visible")
	if err != nil {
		return result{}, err
	}
	return result{definite: definite, changes: changes, historyID: entry.ID}, nil
}

// awaitVisible waits until read_committed readers see what an agent
// wrote (wire.OffsetsReply.Written; nothing when the agent waited itself),
// so that a GET after the answer shows the change. A wait that runs out
// is logged: the change is committed, and readers wait for it themselves.
func (s *Service) awaitVisible(ctx context.Context, name string, written []wire.WrittenOffset) {
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
	if err := kafkautil.WaitVisible(vctx, s.cfg.Admin, want); err != nil {
		s.log.Warn("offsets: committed, but not yet visible to readers", "connector", name, "err", err)
	}
}

// visibleTimeout bounds awaitVisible.
const visibleTimeout = 10 * time.Second

// changesFrom are the changes op makes over the positions current: an
// alter's entries, each from its current position; a reset's removal of
// every position.
func changesFrom(current Positions, op string, entries []api.ConnectorOffset) []api.OffsetChange {
	if op == wire.OffsetsOpReset {
		return current.ReplacedBy(nil)
	}
	return current.changesTo(entries)
}

// sourceWrites turns entries into offsets-topic records, given what the
// connector has (stored). An altered partition is written under its
// canonical key, and every other key encoding seen for it is tombstoned, so
// it keeps a single identity. A reset writes nothing here: the agent works
// its tombstones out from the offsets topic itself (OffsetsReplaceRequest);
// the hook hears of every live partition.
func sourceWrites(name string, stored []offsetstore.Entry, entries []api.ConnectorOffset, op string) ([]wire.OffsetWrite, []connect.Offset, error) {
	var hook []connect.Offset
	if op == wire.OffsetsOpReset {
		for _, e := range stored {
			if e.Live {
				hook = append(hook, connect.Offset{Partition: e.Partition})
			}
		}
		return nil, hook, nil
	}
	rawKeys := map[string][]string{}
	for _, e := range stored {
		rawKeys[records.PartitionID(e.Partition)] = e.RawKeys
	}
	var writes []wire.OffsetWrite
	for _, e := range entries {
		key, err := records.EncodeOffsetKey(name, e.Partition)
		if err != nil {
			return nil, nil, api.Errorf(api.CodeBadRequest, "%v", err)
		}
		for _, k := range rawKeys[records.PartitionID(e.Partition)] {
			if k != string(key) {
				writes = append(writes, wire.OffsetWrite{Key: k})
			}
		}
		w := wire.OffsetWrite{Key: string(key)}
		if e.Offset != nil {
			val, err := records.EncodeOffsetValue(e.Offset)
			if err != nil {
				return nil, nil, api.Errorf(api.CodeBadRequest, "%v", err)
			}
			v := string(val)
			w.Value = &v
		}
		writes = append(writes, w)
		hook = append(hook, connect.Offset{Partition: e.Partition, Offset: e.Offset})
	}
	return writes, hook, nil
}

// FenceIDs lists every transactional id that may hold the connector's
// offsets: every task id the name ever had (a task of a since-lowered
// tasks.max may still run on a cut-off agent), and up to tasks.max.
func (s *Service) FenceIDs(name string, c store.Connector) []string {
	return fenceIDs(&s.cfg, name, c)
}

func fenceIDs(cfg *Config, name string, c store.Connector) []string {
	n := max(cfg.Connectors.TaskIDBound(name), instances.MaxTasks(c.Config))
	ids := make([]string, n)
	for i := range ids {
		ids[i] = records.TransactionalID(cfg.GroupID, name, i)
	}
	return ids
}
