package connectors

import (
	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/records"
)

// checkGroupOwner refuses a sink config whose consumer group (connect-<name>,
// or consumer.override.group.id) another connector's sink already uses.
// Sharing it would let one connector move the other's committed offsets
// (initial_offsets, PATCH, a reset) and take its partitions while running,
// so that the other's records went to the first one's target: a team
// could reach another team's positions and data through its own config.
// The check is symmetric: a connector created later whose own group an
// existing override holds is refused the same way.
// Names and groups are shown whole: checkNewName and checkGroupID bound them.
func (a *Admission) checkGroupOwner(name string, props map[string]string) error {
	group := records.SinkGroupID(name, props)
	for _, c := range a.cfg.Configs.All() {
		if c.Name == name || records.SinkGroupID(c.Name, c.Config) != group || a.plugins.Type(c.Config) != api.TypeSink {
			continue
		}
		return api.Errorf(api.CodeBadRequest, "The consumer group '%s' of connector '%s' is the consumer group of connector '%s': two connectors cannot share a group (one would move the other's committed offsets and take its partitions). Give it a group of its own (consumer.override.group.id)",
			group, name, c.Name)
	}
	return nil
}
