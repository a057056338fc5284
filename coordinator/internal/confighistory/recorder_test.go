package confighistory

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"reflect"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// memory is an Appender and Configs in memory: the configs a write
// leaves, and the entries recorded.
type memory struct {
	configs map[string]map[string]string
	entries []api.ConfigHistoryEntry
	fail    error
}

func (m *memory) Get(name string) (store.Connector, bool) {
	c, ok := m.configs[name]
	return store.Connector{Name: name, Config: c}, ok
}

func (m *memory) Append(_ context.Context, es ...api.ConfigHistoryEntry) ([]api.ConfigHistoryEntry, error) {
	if m.fail != nil {
		return nil, m.fail
	}
	for i := range es {
		es[i].ID = string(rune('a' + len(m.entries)))
		m.entries = append(m.entries, es[i])
	}
	return es, nil
}

// apply is the config topic: the commands' configs, applied.
func (m *memory) apply(_ context.Context, cmds ...store.Command) error {
	for _, cmd := range cmds {
		switch c := cmd.(type) {
		case store.CreateConnector:
			m.configs[c.Name] = maps.Clone(c.Config)
		case store.PutConnectorConfig:
			m.configs[c.Name] = maps.Clone(c.Config)
		case store.DeleteConnector:
			delete(m.configs, c.Name)
		}
	}
	return nil
}

func newRecorder(m *memory) *Recorder {
	return NewRecorder(RecorderConfig{Log: m, Configs: m, Logger: slog.New(slog.DiscardHandler),
		SecretKeys: func(_ context.Context, config map[string]string) []string {
			if _, ok := config["pw"]; ok {
				return []string{"pw"}
			}
			return nil
		},
		Principal: func(context.Context) string { return "ada" }})
}

// TestRecorderOperations: each config write is recorded once committed,
// named by what it did unless the context says, with the config it
// replaced; a target state change, a write of the same config and a failed
// write record nothing.
func TestRecorderOperations(t *testing.T) {
	m := &memory{configs: map[string]map[string]string{}}
	r := newRecorder(m)
	ctx := context.Background()
	steps := []struct {
		ctx  context.Context
		cmds []store.Command
	}{
		{ctx, []store.Command{store.CreateConnector{Name: "c", Config: map[string]string{"k": "1", "pw": "s3cret"}}}},
		{ctx, []store.Command{store.PutConnectorConfig{Name: "c", Config: map[string]string{"k": "2", "pw": "s3cret"}}}},
		{ctx, []store.Command{store.PutConnectorConfig{Name: "c", Config: map[string]string{"k": "2", "pw": "s3cret"}}}}, // the same config
		{ctx, []store.Command{store.SetTargetState{Name: "c", State: "PAUSED"}}},
		{WithChange(ctx, &Change{Operation: api.ConfigRollout, Detail: "rollout r, batch 1", Principal: "otto"}),
			[]store.Command{store.PutConnectorConfig{Name: "c", Config: map[string]string{"k": "3", "pw": "s3cret"}}}},
		{ctx, []store.Command{store.DeleteConnector{Name: "c"}}},
		{ctx, []store.Command{store.DeleteConnector{Name: "never"}}},
	}
	for _, s := range steps {
		if err := r.Apply(s.ctx, m.apply, s.cmds...); err != nil {
			t.Fatal(err)
		}
	}
	failing := errors.New("not the leader")
	if err := r.Apply(ctx, func(context.Context, ...store.Command) error { return failing }, store.PutConnectorConfig{Name: "c", Config: map[string]string{"k": "9"}}); !errors.Is(err, failing) {
		t.Fatalf("a failed write answered %v", err)
	}
	var got []string
	for _, e := range m.entries {
		got = append(got, e.Operation+" by "+e.Principal)
	}
	want := []string{"create by ada", "put by ada", "rollout by otto", "delete by ada"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("recorded %v, want %v", got, want)
	}
	put := m.entries[1]
	if put.Before["k"] != "1" || put.After["k"] != "2" || !reflect.DeepEqual(put.Diff.Changed, []string{"k"}) {
		t.Fatalf("put entry %+v", put)
	}
	if put.Before["pw"] != Hidden || put.After["pw"] != Hidden || !reflect.DeepEqual(put.Hidden, []string{"pw"}) {
		t.Fatalf("the secret is stored: %+v", put)
	}
	if m.entries[0].Before != nil || m.entries[3].After != nil || m.entries[2].Detail != "rollout r, batch 1" {
		t.Fatalf("entries %+v", m.entries)
	}
}

// TestRecorderNotesIDsAndSurvivesAFailedAppend: the change in the context
// learns its entries' ids; an entry that cannot be written does not fail
// the write, which was made.
func TestRecorderNotesIDsAndSurvivesAFailedAppend(t *testing.T) {
	m := &memory{configs: map[string]map[string]string{"c": {"k": "1"}}}
	r := newRecorder(m)
	ch := &Change{Operation: api.ConfigRestore}
	if err := r.Apply(WithChange(context.Background(), ch), m.apply, store.PutConnectorConfig{Name: "c", Config: map[string]string{"k": "2"}}); err != nil {
		t.Fatal(err)
	}
	if ids := ch.Recorded(); len(ids) != 1 || ids[0] != m.entries[0].ID {
		t.Fatalf("recorded ids %v, entries %+v", ids, m.entries)
	}
	if inner := OrChange(WithChange(context.Background(), ch), &Change{Operation: api.ConfigPut}); ChangeFrom(inner) != ch {
		t.Fatal("OrChange replaced the change the context carried")
	}
	m.fail = errors.New("broker gone")
	if err := r.Apply(context.Background(), m.apply, store.PutConnectorConfig{Name: "c", Config: map[string]string{"k": "3"}}); err != nil {
		t.Fatalf("a write whose entry failed answered %v", err)
	}
	if m.configs["c"]["k"] != "3" {
		t.Fatal("the write was not made")
	}
}
