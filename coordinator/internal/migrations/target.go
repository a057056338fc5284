package migrations

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/migrate"
)

// target is this Sluice as a migration's migrate.Target: its plugins
// and connectors as they were when the migration began (and the ones it
// created since), its validation and its create.
type target struct {
	s        *Service
	plugins  []api.PluginInfo
	existing []string
}

// target reads the plugins and the connectors a migration checks against.
func (s *Service) target(ctx context.Context) (*target, error) {
	t := &target{s: s}
	var err error
	if t.plugins, err = s.cfg.Plugins.ListPlugins(ctx, true); err != nil {
		return nil, fmt.Errorf("list the plugins: %w", err)
	}
	if t.existing, err = s.cfg.Connectors.ListConnectors(ctx); err != nil {
		return nil, fmt.Errorf("list the connectors: %w", err)
	}
	return t, nil
}

// plugin is the plugin of class (its full name or a short one).
func (t *target) plugin(class string) (api.PluginInfo, bool) {
	i := slices.IndexFunc(t.plugins, func(p api.PluginInfo) bool { return api.PluginNamed(p.Class, class) })
	if i < 0 {
		return api.PluginInfo{}, false
	}
	return t.plugins[i], true
}

// HasPlugin implements migrate.Target.
func (t *target) HasPlugin(class string) bool { _, ok := t.plugin(class); return ok }

// Exists implements migrate.Target.
func (t *target) Exists(name string) bool { return slices.Contains(t.existing, name) }

// Check implements migrate.Target: a config whose validation finds
// errors, each listed.
func (t *target) Check(ctx context.Context, c migrate.Connector) error {
	class := c.Config["connector.class"]
	p, ok := t.plugin(class)
	if !ok {
		return fmt.Errorf("no Sluice agent runs class %q", class)
	}
	infos, err := t.s.cfg.Plugins.ValidateConfig(ctx, p.Class, c.Config)
	if err != nil {
		return fmt.Errorf("validate the config: %w", err)
	}
	if errs := migrate.ValidationErrors(infos); len(errs) > 0 {
		return fmt.Errorf("the config does not validate: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Create implements migrate.Target: POST /connectors's create, with the
// connector's state and positions ([] for none, so that positions an
// earlier connector of the name left are wiped rather than inherited).
func (t *target) Create(ctx context.Context, c migrate.Connector) error {
	offsets := c.Offsets
	if offsets == nil {
		offsets = []api.ConnectorOffset{}
	}
	_, err := t.s.cfg.Connectors.CreateConnector(ctx, api.CreateConnectorRequest{Name: c.Name, Config: c.Config, InitialState: c.State, InitialOffsets: offsets})
	if err != nil {
		return fmt.Errorf("create %s: %w", c.Name, err)
	}
	t.existing = append(t.existing, c.Name)
	return nil
}
