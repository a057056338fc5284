package offsets

import (
	"context"
	"fmt"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/coordinator/internal/sinkreset"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// ResetOffsetsTo answers POST /sluice/connectors/{name}/offsets/reset: a
// sink's positions set by a rule resolved on the broker (sinkreset), as
// kafka-consumer-groups --reset-offsets does, but fenced and recorded like
// PATCH. A source's offsets are no Kafka positions: only "earliest", which
// is DELETE …/offsets, applies to one.
func (s *Service) ResetOffsetsTo(ctx context.Context, name string, req api.OffsetsResetRequest) (api.OffsetsChanges, error) {
	rule, err := sinkreset.Parse(req)
	if err != nil {
		return api.OffsetsChanges{}, err
	}
	unlock := s.cfg.Locks.Lock(name)
	defer unlock()
	c, err := s.checkStopped(name)
	if err != nil {
		return api.OffsetsChanges{}, err
	}
	choice, ok := s.cfg.Plugins.Choose(c.Config)
	if !ok {
		return api.OffsetsChanges{}, api.Errorf(api.CodeInternal, "%s", s.cfg.Plugins.UnknownConnectorMessage(c.Config["connector.class"]))
	}
	meta := Meta{Operation: api.HistoryResetTo, Detail: rule.Describe()}
	if choice.Plugin.Kind == connect.KindSource {
		if !rule.SourceApplicable() {
			return api.OffsetsChanges{}, api.Errorf(api.CodeBadRequest,
				"Connector %s is a source connector: its offsets are positions in the system it reads, not in Kafka topics, so only {\"to\": \"earliest\"} (without topics or partitions) applies to it, which resets them as DELETE /connectors/%s/offsets does; set other positions with PATCH /connectors/%s/offsets",
				name, name, name)
		}
		return s.changeLocked(ctx, name, c, Change{Op: wire.OffsetsOpReset, Meta: meta, DryRun: req.DryRun})
	}
	current, err := s.read.of(ctx, name, connect.KindSink, records.SinkGroupID(name, c.Config), "")
	if err != nil {
		return api.OffsetsChanges{}, err
	}
	// The topics may be a config provider's placeholder.
	config, err := s.cfg.Providers.Transform(c.Config)
	if err != nil {
		return api.OffsetsChanges{}, api.Errorf(api.CodeBadRequest, "%s", err.Error())
	}
	targets, err := sinkreset.Resolve(ctx, s.cfg.Admin, rule, config, committedOf(current))
	if err != nil {
		return api.OffsetsChanges{}, err
	}
	if len(targets) == 0 {
		return api.OffsetsChanges{}, api.Errorf(api.CodeBadRequest, "Connector %s consumes no partition the rule selects (%s): nothing to reset", name, rule.Describe())
	}
	entries := make([]api.ConnectorOffset, 0, len(targets))
	for _, t := range targets {
		entries = append(entries, api.ConnectorOffset{
			Partition: map[string]any{"kafka_topic": t.Topic, "kafka_partition": t.Partition},
			Offset:    map[string]any{"kafka_offset": t.To},
		})
	}
	entries, err = Numbered(entries)
	if err != nil {
		return api.OffsetsChanges{}, fmt.Errorf("offsets of the reset: %w", err)
	}
	return s.changeLocked(ctx, name, c, Change{Op: wire.OffsetsOpAlter, Entries: entries, Meta: meta, DryRun: req.DryRun})
}

// committedOf are a sink's positions as topic → partition → offset.
func committedOf(current Positions) map[string]map[int32]int64 {
	committed := map[string]map[int32]int64{}
	for _, o := range current {
		t, p := o.Partition["kafka_topic"].(string), o.Partition["kafka_partition"].(int32)
		if committed[t] == nil {
			committed[t] = map[int32]int64{}
		}
		committed[t][p] = o.Offset["kafka_offset"].(int64)
	}
	return committed
}
