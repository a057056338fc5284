// Package transfer moves connectors with their positions from one REST API
// to a Sluice: what `offsets export`/`offsets import` and `migrate` share.
package transfer

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/cmd/connectors"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
	"github.com/sluice-io/sluice/shared/migrate"
)

// Connector is one connector as export writes it and import and
// migrate create it: its config, its target state and its positions.
type Connector = migrate.Connector

// ReadConnector reads one connector's config, target state and offsets
// from a Kafka Connect REST API (Sluice's or Apache Kafka Connect's).
func ReadConnector(ctx context.Context, rc *api.Client, name string) (Connector, error) {
	m := Connector{Name: name}
	var err error
	if m.Config, err = rc.Connectors().Config(ctx, name); err != nil {
		return m, fmt.Errorf("read the config of %s: %w", name, session.Err(err))
	}
	state, _, err := TargetState(ctx, rc, name)
	if err != nil {
		return m, err
	}
	m.State = state
	if m.Offsets, err = ReadOffsets(ctx, rc, name); err != nil {
		return m, err
	}
	return m, nil
}

// ReadOffsets is GET /connectors/{name}/offsets' entries.
func ReadOffsets(ctx context.Context, rc *api.Client, name string) ([]api.ConnectorOffset, error) {
	o, err := migrate.ReadOffsets(ctx, rc, name)
	if err != nil {
		return nil, fmt.Errorf("read the offsets of %s: %w", name, session.Err(err))
	}
	return o, nil
}

// TargetState is migrate.TargetState, its error in the CLI's words.
func TargetState(ctx context.Context, rc *api.Client, name string) (state, typ string, err error) {
	state, typ, err = migrate.TargetState(ctx, rc, name)
	if err != nil {
		return "", "", fmt.Errorf("read the status of %s: %w", name, session.Err(err))
	}
	return state, typ, nil
}

// Target is the Sluice cluster connectors are created on, with what the
// checks before a create need: its plugins and its connectors' names.
type Target struct {
	s        *session.Session
	plugins  []api.PluginInfo
	existing []string
}

// OpenTarget reads the target's plugins and connectors.
func OpenTarget(s *session.Session) (*Target, error) {
	t := &Target{s: s}
	var err error
	if t.plugins, err = session.Call0(s, s.API.Plugins().List); err != nil {
		return nil, fmt.Errorf("list the plugins of %s: %w", s.API.Address(), err)
	}
	if t.existing, err = session.Call0(s, s.API.Connectors().List); err != nil {
		return nil, fmt.Errorf("list the connectors of %s: %w", s.API.Address(), err)
	}
	return t, nil
}

// Plugin is the target's plugin for a connector class (its full name or
// a short one), or false.
func (t *Target) Plugin(class string) (api.PluginInfo, bool) {
	i := slices.IndexFunc(t.plugins, func(p api.PluginInfo) bool { return connectors.PluginIs(p, class) })
	if i < 0 {
		return api.PluginInfo{}, false
	}
	return t.plugins[i], true
}

// Exists reports whether the target has a connector of that name.
func (t *Target) Exists(name string) bool { return slices.Contains(t.existing, name) }

// Check is what a create would refuse, without writing anything: a name
// already taken, a class the Target has no plugin for, a config that does
// not validate.
func (t *Target) Check(m Connector) error {
	if t.Exists(m.Name) {
		return fmt.Errorf("a connector named %s already exists", m.Name)
	}
	class := m.Config["connector.class"]
	if _, ok := t.Plugin(class); !ok {
		return fmt.Errorf("no Sluice agent runs class %q", class)
	}
	errs, err := connectors.Validate(t.s, m.Config)
	if err != nil {
		return fmt.Errorf("validate the config: %w", err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("the config does not validate: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Create creates m on the target at its positions, in its state, in one
// POST /connectors (initial_state and initial_offsets): either the
// connector exists afterwards with exactly those positions or it does not
// exist. An empty offsets list is sent as [] so that positions left under
// the name by an earlier connector are wiped rather than inherited.
func (t *Target) Create(m Connector) error {
	offsets := m.Offsets
	if offsets == nil {
		offsets = []api.ConnectorOffset{}
	}
	_, err := session.Call(t.s, t.s.API.Connectors().Create, api.CreateConnectorRequest{Name: m.Name, Config: m.Config, InitialState: m.State, InitialOffsets: offsets})
	if err != nil {
		return fmt.Errorf("create %s: %w", m.Name, err)
	}
	t.existing = append(t.existing, m.Name)
	return nil
}

// HasPlugin reports whether the target has a plugin for class
// (migrate.Target).
func (t *Target) HasPlugin(class string) bool { _, ok := t.Plugin(class); return ok }

// Migrating is t as migrate.Target.
func (t *Target) Migrating() migrate.Target { return migrating{t} }

// migrating is a Target as migrate.Target: its Check and Create take a
// context (the session's is used).
type migrating struct{ *Target }

func (m migrating) Check(_ context.Context, c Connector) error  { return m.Target.Check(c) }
func (m migrating) Create(_ context.Context, c Connector) error { return m.Target.Create(c) }

// TypeOf is the type of the target's plugin for m's class, or unknown.
func (t *Target) TypeOf(m Connector) string {
	if p, ok := t.Plugin(m.Config["connector.class"]); ok && p.Type != "" {
		return p.Type
	}
	return api.TypeUnknown
}

// Result is what import or migrate did with one connector.
type Result = migrate.Result

// The results of import and migrate.
const (
	Created       = migrate.Created
	Migrated      = migrate.Migrated
	WouldCreate   = migrate.WouldCreate
	WouldMigrate  = migrate.WouldMigrate
	NotMigrated   = migrate.NotMigrated
	Failed        = migrate.Failed
	DeletedSource = migrate.DeletedSource
)

// PrintResults prints the results in the session's format and returns an
// error counting the failures, if any.
func PrintResults(s *session.Session, results []Result) error {
	if results == nil {
		results = []Result{}
	}
	err := s.Print(results, func() *output.Rows {
		t := output.NewRows("NAME", "TYPE", "CLASS", "PARTITIONS", "STATE", "RESULT")
		for _, r := range results {
			res := r.Result
			if r.Detail != "" {
				res += ": " + r.Detail
			}
			t.Add(r.Name, r.Type, r.Class, fmt.Sprint(r.Partitions), r.State, res)
		}
		return t
	})
	if err != nil {
		return err
	}
	failed := 0
	for _, r := range results {
		if r.IsFailed() {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d connectors failed", failed, len(results))
	}
	return nil
}
