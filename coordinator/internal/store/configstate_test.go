package store

import (
	"reflect"
	"testing"

	"github.com/sluice-io/sluice/shared/records"
)

func apply(t *testing.T, s *ConfigState, key string, value []byte) {
	t.Helper()
	rec, err := records.DecodeConfig(key, value)
	if err != nil {
		t.Fatal(err)
	}
	s.Apply(rec)
}

func TestTaskConfigsApplyOnlyOnCommit(t *testing.T) {
	s := NewConfigState()
	apply(t, s, records.ConnectorKey("c"), records.EncodeProperties(map[string]string{"a": "1"}))
	apply(t, s, records.TaskKey("c", 0), records.EncodeProperties(map[string]string{"t": "0"}))
	apply(t, s, records.TaskKey("c", 1), records.EncodeProperties(map[string]string{"t": "1"}))
	c, _ := s.Get("c")
	if len(c.Tasks) != 0 || c.TargetState != records.TargetStarted {
		t.Fatalf("before commit: %+v", c)
	}
	apply(t, s, records.CommitKey("c"), records.EncodeCommit(2))
	c, _ = s.Get("c")
	if !reflect.DeepEqual(c.Tasks, []map[string]string{{"t": "0"}, {"t": "1"}}) {
		t.Fatalf("after commit: %+v", c.Tasks)
	}
	// A commit naming more tasks than were written is incomplete: ignored.
	apply(t, s, records.TaskKey("c", 0), records.EncodeProperties(map[string]string{"t": "new"}))
	apply(t, s, records.CommitKey("c"), records.EncodeCommit(3))
	c, _ = s.Get("c")
	if len(c.Tasks) != 2 || c.Tasks[0]["t"] != "0" {
		t.Fatalf("incomplete commit applied: %+v", c.Tasks)
	}
	// Stop: an empty task set.
	apply(t, s, records.CommitKey("c"), records.EncodeCommit(0))
	apply(t, s, records.TargetStateKey("c"), records.EncodeTargetState(records.TargetStopped))
	c, _ = s.Get("c")
	if len(c.Tasks) != 0 || c.TargetState != records.TargetStopped {
		t.Fatalf("after stop: %+v", c)
	}
}

func TestTargetStateBeforeConfigAndTombstones(t *testing.T) {
	s := NewConfigState()
	// Create with initial_state writes the target state first.
	apply(t, s, records.TargetStateKey("p"), records.EncodeTargetState(records.TargetPaused))
	if _, ok := s.Get("p"); ok {
		t.Fatal("a target state alone must not create a connector")
	}
	apply(t, s, records.ConnectorKey("p"), records.EncodeProperties(map[string]string{}))
	c, ok := s.Get("p")
	if !ok || c.TargetState != records.TargetPaused {
		t.Fatalf("got %+v %v", c, ok)
	}
	// A target-state tombstone while the config exists falls back to STARTED.
	apply(t, s, records.TargetStateKey("p"), nil)
	if c, _ = s.Get("p"); c.TargetState != records.TargetStarted {
		t.Fatalf("tombstoned target: %s", c.TargetState)
	}
	apply(t, s, records.FencingKey("p"), records.EncodeFencing(3))
	apply(t, s, records.ConnectorKey("p"), nil)
	if _, ok := s.Get("p"); ok || len(s.Names()) != 0 {
		t.Fatal("deleted connector still listed")
	}
	if s.FencingCount("p") != 3 {
		t.Fatalf("fencing count lost on delete: %d", s.FencingCount("p"))
	}
}

func TestVersionGrowsAndReadsAreCopies(t *testing.T) {
	s := NewConfigState()
	changed := s.Changed()
	apply(t, s, records.ConnectorKey("v"), records.EncodeProperties(map[string]string{"k": "1"}))
	select {
	case <-changed:
	default:
		t.Fatal("Changed not signalled")
	}
	c1, _ := s.Get("v")
	c1.Config["k"] = "mutated"
	apply(t, s, records.TargetStateKey("v"), records.EncodeTargetState(records.TargetPaused))
	c2, _ := s.Get("v")
	if c2.Config["k"] != "1" {
		t.Fatal("a read's copy leaked into the state")
	}
	if c2.Version <= c1.Version {
		t.Fatalf("version did not grow: %d then %d", c1.Version, c2.Version)
	}
}
