package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/restclient"
)

// movedConnector is one connector as export writes it and import and
// migrate create it: its config, its target state and its positions.
type movedConnector struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	// State is RUNNING, PAUSED or STOPPED: the state to create it in.
	State string `json:"state"`
	// Offsets are GET …/offsets' entries, kept as the server wrote them
	// so that no offset goes through a float64.
	Offsets []json.RawMessage `json:"offsets"`
}

// readConnector reads one connector's config, target state and offsets
// from a Kafka Connect REST API (Sluice's or Apache Kafka Connect's).
func readConnector(ctx context.Context, rc *restclient.Client, name string) (movedConnector, error) {
	m := movedConnector{Name: name}
	if err := rc.Get(ctx, connectorPath(name, "/config"), &m.Config); err != nil {
		return m, fmt.Errorf("read the config of %s: %w", name, err)
	}
	state, _, err := targetState(ctx, rc, name)
	if err != nil {
		return m, err
	}
	m.State = state
	if m.Offsets, err = readOffsets(ctx, rc, name); err != nil {
		return m, err
	}
	return m, nil
}

// readOffsets is GET /connectors/{name}/offsets' entries.
func readOffsets(ctx context.Context, rc *restclient.Client, name string) ([]json.RawMessage, error) {
	var o struct {
		Offsets []json.RawMessage `json:"offsets"`
	}
	if err := rc.Get(ctx, connectorPath(name, "/offsets"), &o); err != nil {
		return nil, fmt.Errorf("read the offsets of %s: %w", name, err)
	}
	if o.Offsets == nil {
		o.Offsets = []json.RawMessage{}
	}
	return o.Offsets, nil
}

// targetState is the state a connector is meant to be in, as its status
// shows it — RUNNING, PAUSED or STOPPED — and its type there. A FAILED,
// UNASSIGNED or RESTARTING connector is meant to run (the status shows
// what happened to it, not what its owner asked for), and so is one with
// no status written yet (its type is then unknown).
func targetState(ctx context.Context, rc *restclient.Client, name string) (state, typ string, err error) {
	var st api.ConnectorStateInfo
	err = rc.Get(ctx, connectorPath(name, "/status"), &st)
	var he *restclient.HTTPError
	if errors.As(err, &he) && he.Status == http.StatusNotFound && strings.Contains(he.Message, "No status") {
		return api.StateRunning, api.TypeUnknown, nil
	}
	if err != nil {
		return "", "", fmt.Errorf("read the status of %s: %w", name, err)
	}
	switch st.Connector.State {
	case api.StatePaused, api.StateStopped:
		return st.Connector.State, st.Type, nil
	}
	return api.StateRunning, st.Type, nil
}

// target is the Sluice cluster connectors are created on, with what the
// checks before a create need: its plugins and its connectors' names.
type target struct {
	s        *session
	plugins  []api.PluginInfo
	existing []string
}

// openTarget reads the target's plugins and connectors.
func openTarget(s *session) (*target, error) {
	t := &target{s: s}
	if err := s.get("/connector-plugins", &t.plugins); err != nil {
		return nil, fmt.Errorf("list the plugins of %s: %w", s.api.Base, err)
	}
	if err := s.get("/connectors", &t.existing); err != nil {
		return nil, fmt.Errorf("list the connectors of %s: %w", s.api.Base, err)
	}
	return t, nil
}

// plugin is the target's plugin for a connector class (its full name or
// a short one), or false.
func (t *target) plugin(class string) (api.PluginInfo, bool) {
	i := slices.IndexFunc(t.plugins, func(p api.PluginInfo) bool { return pluginIs(p, class) })
	if i < 0 {
		return api.PluginInfo{}, false
	}
	return t.plugins[i], true
}

// exists reports whether the target has a connector of that name.
func (t *target) exists(name string) bool { return slices.Contains(t.existing, name) }

// check is what a create would refuse, without writing anything: a name
// already taken, a class the target has no plugin for, a config that does
// not validate.
func (t *target) check(m movedConnector) error {
	if t.exists(m.Name) {
		return fmt.Errorf("a connector named %s already exists", m.Name)
	}
	class := m.Config["connector.class"]
	if _, ok := t.plugin(class); !ok {
		return fmt.Errorf("no Sluice agent runs class %q", class)
	}
	errs, err := t.s.validate(m.Config)
	if err != nil {
		return fmt.Errorf("validate the config: %w", err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("the config does not validate: %s", strings.Join(errs, "; "))
	}
	return nil
}

// create creates m on the target at its positions, in its state, in one
// POST /connectors (initial_state and initial_offsets): either the
// connector exists afterwards with exactly those positions or it does not
// exist. An empty offsets list is sent as [] so that positions left under
// the name by an earlier connector are wiped rather than inherited.
func (t *target) create(m movedConnector) error {
	offsets := m.Offsets
	if offsets == nil {
		offsets = []json.RawMessage{}
	}
	body, err := json.Marshal(struct {
		Name           string            `json:"name"`
		Config         map[string]string `json:"config"`
		InitialState   string            `json:"initial_state"`
		InitialOffsets []json.RawMessage `json:"initial_offsets"`
	}{m.Name, m.Config, m.State, offsets})
	if err != nil {
		return fmt.Errorf("encode the create of %s: %w", m.Name, err)
	}
	if _, _, err := t.s.do(http.MethodPost, "/connectors", body); err != nil {
		return fmt.Errorf("create %s: %w", m.Name, err)
	}
	t.existing = append(t.existing, m.Name)
	return nil
}

// typeOf is the type of the target's plugin for m's class, or unknown.
func (t *target) typeOf(m movedConnector) string {
	if p, ok := t.plugin(m.Config["connector.class"]); ok && p.Type != "" {
		return p.Type
	}
	return api.TypeUnknown
}

// partitions is "1 partition" or "n partitions".
func partitions(n int) string {
	if n == 1 {
		return "1 partition"
	}
	return fmt.Sprintf("%d partitions", n)
}

// transferResult is what import or migrate did with one connector.
type transferResult struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Class      string `json:"class"`
	Partitions int    `json:"partitions"`
	State      string `json:"state"`
	// Result is created, migrated, would create, would migrate, not
	// migrated or failed.
	Result string `json:"result"`
	// Detail says why for a skip or a failure (and which step failed).
	Detail string `json:"detail,omitempty"`
}

// failed reports whether the connector failed (a skip is not a failure).
func (r transferResult) failed() bool { return r.Result == resultFailed }

// The results of import and migrate.
const (
	resultCreated       = "created"
	resultMigrated      = "migrated"
	resultWouldCreate   = "would create"
	resultWouldMigrate  = "would migrate"
	resultNotMigrated   = "not migrated"
	resultFailed        = "failed"
	resultDeletedSource = "migrated, deleted on the source"
)

// printResults prints the results in the session's format and returns an
// error counting the failures, if any.
func printResults(s *session, results []transferResult) error {
	if results == nil {
		results = []transferResult{}
	}
	err := s.print(results, func() *output.Rows {
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
		if r.failed() {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d connectors failed", failed, len(results))
	}
	return nil
}
