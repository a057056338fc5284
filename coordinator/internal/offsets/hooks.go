package offsets

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/shared/wire"
)

// AlterOffsetsHook asks the connector's OffsetAlterer, if it has one, about
// an offsets change, on its config with the config providers' placeholders
// resolved (Kafka Connect's worker hands alterOffsets the transformed
// config too). A refusal, or a placeholder that cannot be resolved, is a
// 400 with its message; definite reports the connector acknowledged the
// change itself. plugin is the config's plugin as the caller chose it.
//
// A Java plugin's alterOffsets runs on an agent whose host has it; with no
// such agent live the change is refused, as nobody can ask the connector.
func (s *Service) AlterOffsetsHook(ctx context.Context, plugin *connect.Plugin, config map[string]string, offsets []connect.Offset) (definite bool, err error) {
	resolved, err := s.cfg.Providers.Transform(config)
	if err != nil {
		return false, api.Errorf(api.CodeBadRequest, "%s", err.Error())
	}
	if c, ok := s.cfg.Plugins.Choose(config); ok && c.Java {
		return s.alterOffsetsJava(ctx, c, resolved, offsets)
	}
	hook, ok := plugin.NewConnector().(connect.OffsetAlterer)
	if !ok {
		return false, nil
	}
	if definite, err = hook.AlterOffsets(resolved, offsets); err != nil {
		return false, api.Errorf(api.CodeBadRequest, "%s", err.Error())
	}
	return definite, nil
}

// alterOffsetsJava runs a Java connector's alterOffsets on an agent.
func (s *Service) alterOffsetsJava(ctx context.Context, c Plugin, config map[string]string, offsets []connect.Offset) (bool, error) {
	class := c.Plugin.Class
	agents, none := s.cfg.Hosts.HostAgents(class, c.Pinned)
	if len(agents) == 0 {
		return false, api.Errorf(api.CodeBadRequest, "%s: nobody can ask connector %s about the offsets change", none, class)
	}
	sent := make([]api.ConnectorOffset, len(offsets))
	for i, o := range offsets {
		sent[i] = api.ConnectorOffset{Partition: o.Partition, Offset: o.Offset}
	}
	reply, err := s.cfg.Hosts.CallAnyHost(ctx, agents, wire.PluginConnectorRequest{Op: wire.PluginOpAlterOffsets, Class: class, Version: c.Pinned,
		Config: config, Offsets: sent})
	if err != nil {
		if e := (*api.Error)(nil); errors.As(err, &e) && !api.IsCode(err, api.CodeUnavailable) {
			// The connector's refusal: its message, as a Go hook's.
			return false, api.Errorf(api.CodeBadRequest, "%s", e.Message)
		}
		return false, fmt.Errorf("asking connector %s about the offsets change: %w", class, err)
	}
	return reply.Definite, nil
}
