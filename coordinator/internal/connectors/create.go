package connectors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/coordinator/internal/metrics"
	"github.com/sluice-io/sluice/coordinator/internal/offsets"
	"github.com/sluice-io/sluice/coordinator/internal/offsetval"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/offsetstore"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// Steps of a create with initial offsets, named in errors; each is a fault
// point (faults.go).
const (
	StepFence        = "fencing"
	StepSnapshot     = "reading the previous offsets"
	StepWriteOffsets = "writing the initial offsets"
	StepWriteConfig  = "writing the connector config"
	StepRestore      = "restoring the previous offsets"
)

// creator creates a connector with initial offsets (KIP-995, spec §0.1):
// the steps, and the rollback of a failed one. A move's create is one too.
type creator struct{ s *Service }

// offs is the offsets service's steps.
func (c creator) offs() OffsetSteps { return c.s.cfg.OffsetSteps }

// initialOffsets is a validated initial_offsets list, ready to write.
type initialOffsets struct {
	kind     connect.Kind
	entries  []api.ConnectorOffset
	sink     []offsetval.SinkOffset
	definite bool
	// plugin is the plugin version the create records: a move's, carried
	// over from the connector it moves; nil: resolved as it is written.
	plugin *records.PluginPin
}

// checkInitialOffsets validates initial_offsets as PATCH would (without the
// STOPPED check) and runs the connector's hook: spec §0.1 step 1.
func (c creator) check(ctx context.Context, name string, config map[string]string, offsets []api.ConnectorOffset) (*initialOffsets, error) {
	in, plugin, err := c.validate(ctx, name, config, offsets)
	if err != nil {
		return nil, err
	}
	definite, err := c.offs().AlterOffsetsHook(ctx, plugin, config, offsetval.ToConnect(in.entries))
	if err != nil {
		return nil, err
	}
	in.definite = definite
	return in, nil
}

// validateInitialOffsets is checkInitialOffsets without the hook, which a
// dry run must not call.
func (c creator) validate(ctx context.Context, name string, config map[string]string, offsets []api.ConnectorOffset) (*initialOffsets, *connect.Plugin, error) {
	plugin, ok := c.s.plugins.PluginOf(config)
	if !ok {
		return nil, nil, api.Errorf(api.CodeBadRequest, "%s", c.s.cfg.Registry.UnknownConnectorMessage(config["connector.class"]))
	}
	in := &initialOffsets{kind: plugin.Kind, entries: offsetval.Collapse(offsets)}
	switch plugin.Kind {
	case connect.KindSource:
		if err := offsetval.Source(in.entries); err != nil {
			return nil, nil, err
		}
	case connect.KindSink:
		parsed, err := offsetval.Sink(in.entries)
		if err != nil {
			return nil, nil, err
		}
		if err := c.offs().CheckSinkPartitions(ctx, name, parsed); err != nil {
			return nil, nil, err
		}
		in.sink = parsed
	}
	return in, plugin, nil
}

// sourceSnapshot is what the offsets topics hold for a name, per topic (the
// worker's, and the connector's own when it has one): each raw key with
// the partition's latest offset there. Each topic is put back as it was.
type sourceSnapshot map[string]map[string]map[string]any

// createWithOffsets runs spec §0.1 steps 3–6 for a name that does not exist;
// the caller holds the name's lock. On a failure of the writes it removes
// any config written and puts the previous offsets back.
// The change is recorded in the offsets history as meta says, between the
// snapshot and the writes; it returns the entry's id.
func (c creator) run(ctx context.Context, name, target string, config map[string]string, in *initialOffsets, meta offsets.Meta) (_ string, err error) {
	defer c.offs().Observe(metrics.KindAlter)(&err)
	conn := store.Connector{Name: name, Config: config}
	group, topic := records.SinkGroupID(name, config), c.s.cfg.Offsets.OwnTopic(config)
	base := createRequests{kind: in.kind,
		source: wire.SourceOffsetsRequest{Term: c.s.cfg.Term(), Connector: name, Op: wire.OffsetsOpAlter, Topic: c.s.cfg.OffsetsTopic,
			FenceIDs: c.offs().FenceIDs(name, conn), TxnID: records.TransactionalID(c.s.cfg.GroupID, name, 0), ConnectorTopic: topic},
		sink: wire.SinkOffsetsRequest{Term: c.s.cfg.Term(), Connector: name, Op: wire.OffsetsOpAlter, Group: group}}
	fail := func(step string, err error) error {
		return api.Errorf(api.CodeInternal, "Failed to create connector %s: %s failed (%s); nothing was changed", name, step, causeText(err))
	}

	// 3. Fence: no zombie may write under the name after the snapshot.
	if in.kind == connect.KindSource {
		if err := c.s.step(StepFence, func() error { return c.offs().SendSource(ctx, base.source) }); err != nil {
			return "", fail(StepFence, err)
		}
	}
	// 4. Snapshot what the name holds now.
	var src sourceSnapshot
	var sink []wire.SinkPartitionOffset
	var current offsets.Positions
	if err := c.s.step(StepSnapshot, func() error {
		var err error
		if src, sink, err = c.snapshot(ctx, name, group, topic, in.kind); err == nil {
			current, err = c.offs().Positions(ctx, name, in.kind, group, topic)
		}
		return err
	}); err != nil {
		return "", fail(StepSnapshot, err)
	}
	initial := in.entries
	if in.kind == connect.KindSink {
		initial = offsets.SinkEntries(in.sink)
	}
	typ, historyGroup := api.TypeSource, ""
	if in.kind == connect.KindSink {
		typ, historyGroup = api.TypeSink, group
	}
	entry, err := c.offs().BeginHistory(ctx, name, typ, historyGroup, topic, meta, current.ReplacedBy(initial))
	if err != nil {
		return "", fail(offsets.StepHistoryBegin, errors.Unwrap(err))
	}
	// 5. Replace the stale offsets with the initial ones.
	writeErr := c.s.step(StepWriteOffsets, func() error { return c.replace(ctx, base, name, in, sink) })
	step := StepWriteOffsets
	// 6. The config and target state, in one transaction.
	if writeErr == nil {
		step = StepWriteConfig
		writeErr = c.s.step(StepWriteConfig, func() error {
			return c.s.cfg.Writer.Apply(ctx, store.CreateConnector{Name: name, Config: config, Plugin: in.plugin, TargetState: target})
		})
	}
	if writeErr == nil {
		c.offs().FinishHistory(ctx, entry, nil)
		return entry.ID, nil
	}
	// The rollback must run even when the caller went away: a client that
	// disconnects (or times out) cancels ctx, and a rollback on a cancelled
	// context would leave the initial offsets in place of the previous ones.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	err = c.rollback(rctx, name, step, writeErr, base, in, src, sink)
	// A rollback that could not restore the previous offsets leaves the
	// initial ones: the positions decide what the entry says.
	c.offs().SettleHistory(rctx, entry, in.kind, err)
	return "", err
}

func (c creator) snapshot(ctx context.Context, name, group, topic string, kind connect.Kind) (sourceSnapshot, []wire.SinkPartitionOffset, error) {
	if kind == connect.KindSink {
		cur, err := c.offs().SinkOffsets(ctx, name, group)
		if err != nil {
			return nil, nil, err
		}
		var out []wire.SinkPartitionOffset
		for _, o := range cur.Offsets {
			at := o.Offset["kafka_offset"].(int64)
			out = append(out, wire.SinkPartitionOffset{Topic: o.Partition["kafka_topic"].(string), Partition: o.Partition["kafka_partition"].(int32), Offset: &at})
		}
		return nil, out, nil
	}
	view, release, err := c.offs().SourceView(ctx, name, topic, "Failed to retrieve offsets for source connector %s")
	defer release()
	if err != nil {
		return nil, nil, err
	}
	snap := sourceSnapshot{}
	for _, st := range []*offsetstore.Store{view.Worker, view.Connector} {
		if st == nil {
			continue
		}
		keys := map[string]map[string]any{}
		for _, e := range st.Entries(name) {
			if e.Offset == nil {
				continue
			}
			for _, k := range e.RawKeys {
				keys[k] = e.Offset
			}
		}
		snap[st.Topic()] = keys
	}
	return snap, nil, nil
}

// replace is step 5: source — one transaction of tombstones for every
// stale key and the initial offsets, which the agent works out from the
// offsets topic itself (so the request is as small as the initial offsets,
// however many partitions the name accumulated); sink — delete every
// committed partition not named, commit the named ones.
func (c creator) replace(ctx context.Context, base createRequests, name string, in *initialOffsets, sink []wire.SinkPartitionOffset) error {
	if in.kind == connect.KindSink {
		req := base.sink
		named := map[string]bool{}
		for _, o := range in.sink {
			named[fmt.Sprintf("%s/%d", o.Topic, o.Partition)] = true
			req.Offsets = append(req.Offsets, wire.SinkPartitionOffset{Topic: o.Topic, Partition: o.Partition, Offset: o.Offset})
		}
		for _, o := range sink {
			if !named[fmt.Sprintf("%s/%d", o.Topic, o.Partition)] {
				req.Offsets = append(req.Offsets, wire.SinkPartitionOffset{Topic: o.Topic, Partition: o.Partition})
			}
		}
		return c.offs().SendSink(ctx, req)
	}
	initial := map[string]*string{}
	for _, e := range in.entries {
		key, _ := records.EncodeOffsetKey(name, e.Partition)
		var val *string
		if e.Offset != nil {
			b, _ := records.EncodeOffsetValue(e.Offset)
			s := string(b)
			val = &s
		}
		initial[string(key)] = val
	}
	var writes []wire.OffsetWrite
	for _, k := range sortedKeys(initial) {
		writes = append(writes, wire.OffsetWrite{Key: k, Value: initial[k]})
	}
	src := base.source
	return c.offs().SendReplace(ctx, wire.OffsetsReplaceRequest{Term: src.Term, Connector: src.Connector, FenceIDs: src.FenceIDs,
		TxnID: src.TxnID, Topic: src.Topic, Writes: writes, ConnectorTopic: src.ConnectorTopic})
}

// createRequests are the offsets requests of a create: the source's or the
// sink's, as kind says, which the steps fill in.
type createRequests struct {
	kind   connect.Kind
	source wire.SourceOffsetsRequest
	sink   wire.SinkOffsetsRequest
}

// send sends the request of r's kind.
func (c creator) send(ctx context.Context, r createRequests) error {
	if r.kind == connect.KindSink {
		return c.offs().SendSink(ctx, r.sink)
	}
	return c.offs().SendSource(ctx, r.source)
}

// rollbackCreate removes any config the create wrote and writes the
// snapshot back, then answers spec §0.1's 500.
func (c creator) rollback(ctx context.Context, name, step string, cause error, base createRequests, in *initialOffsets, src sourceSnapshot, sink []wire.SinkPartitionOffset) error {
	c.s.log.Error("create with initial offsets failed; rolling back", "connector", name, "step", step, "err", cause)
	var removeErr error
	if step == StepWriteConfig {
		// The outcome of a failed config write may be unknown: tombstone
		// both records so the connector surely does not exist.
		if err := c.s.cfg.Writer.Apply(ctx, store.DeleteConnector{Name: name}); err != nil {
			c.s.log.Error("removing the partly created connector failed", "connector", name, "err", err)
			removeErr = err
		}
	}
	restoreErr := c.s.step(StepRestore, func() error { return c.send(ctx, c.restoreRequest(base, name, in, src, sink)) })
	if restoreErr == nil {
		err := api.Errorf(api.CodeInternal, "Failed to create connector %s: %s failed (%v); its previous offsets were restored", name, step, causeText(cause))
		if removeErr != nil {
			return rollbackIncomplete{err: err, left: fmt.Sprintf("connector %s may exist: removing its config failed (%s)", name, causeText(removeErr))}
		}
		return err
	}
	snap, _ := json.Marshal(map[string]any{"source": src, "sink": sink})
	c.s.log.Error("restoring the previous offsets failed; they are recorded here in full", "connector", name, "err", restoreErr, "previous_offsets", string(snap))
	return rollbackIncomplete{
		err:  api.Errorf(api.CodeInternal, "Failed to create connector %s: %s failed (%v), and restoring its previous offsets failed (%v); the previous offsets are in the coordinator log", name, step, causeText(cause), causeText(restoreErr)),
		left: fmt.Sprintf("the name %s holds the initial offsets: restoring its previous ones failed (%s)", name, causeText(restoreErr)),
	}
}

// rollbackIncomplete is a create's failure whose rollback did not finish:
// left says what the name may still hold. Its answer is err's.
type rollbackIncomplete struct {
	err  error
	left string
}

func (e rollbackIncomplete) Error() string { return e.err.Error() }
func (e rollbackIncomplete) Unwrap() error { return e.err }

// restoreRequest writes the snapshot back over whatever step 5 wrote.
func (c creator) restoreRequest(base createRequests, name string, in *initialOffsets, src sourceSnapshot, sink []wire.SinkPartitionOffset) createRequests {
	req := base
	if in.kind == connect.KindSink {
		had := map[string]bool{}
		for _, o := range sink {
			had[fmt.Sprintf("%s/%d", o.Topic, o.Partition)] = true
			req.sink.Offsets = append(req.sink.Offsets, o)
		}
		for _, o := range in.sink {
			if !had[fmt.Sprintf("%s/%d", o.Topic, o.Partition)] {
				req.sink.Offsets = append(req.sink.Offsets, wire.SinkPartitionOffset{Topic: o.Topic, Partition: o.Partition})
			}
		}
		return req
	}
	for _, topic := range sortedKeys(src) {
		// With one topic the writes name none, as an agent that knows of
		// no per-write topic expects.
		target := topic
		if base.source.ConnectorTopic == "" {
			target = ""
		}
		held := src[topic]
		for _, k := range sortedKeys(held) {
			b, _ := records.EncodeOffsetValue(held[k])
			s := string(b)
			req.source.Writes = append(req.source.Writes, wire.OffsetWrite{Key: k, Value: &s, Topic: target})
		}
		for _, e := range in.entries {
			key, _ := records.EncodeOffsetKey(name, e.Partition)
			if _, had := held[string(key)]; !had {
				req.source.Writes = append(req.source.Writes, wire.OffsetWrite{Key: string(key), Topic: target})
			}
		}
	}
	return req
}

func causeText(err error) string { return api.AsError(err).Message }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
