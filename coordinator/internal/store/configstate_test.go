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
	if s.TaskIDBound("p") != 3 {
		t.Fatalf("fencing count lost on delete: %d", s.TaskIDBound("p"))
	}
}

// TestTaskIDBoundOutlivesFewerTasks: once a connector had 4 tasks, its
// offsets may be held by task ids 0-3 even after it runs 1 task, or was
// deleted and re-created, so all four are fenced before an offsets change.
func TestTaskIDBoundOutlivesFewerTasks(t *testing.T) {
	s := NewConfigState()
	if s.TaskIDBound("b") != 0 {
		t.Fatalf("unknown name: bound %d", s.TaskIDBound("b"))
	}
	apply(t, s, records.ConnectorKey("b"), records.EncodeProperties(map[string]string{"tasks.max": "4"}))
	for i := range 4 {
		apply(t, s, records.TaskKey("b", i), records.EncodeProperties(map[string]string{"n": "x"}))
	}
	apply(t, s, records.CommitKey("b"), records.EncodeCommit(4))
	apply(t, s, records.TaskKey("b", 0), records.EncodeProperties(map[string]string{"n": "y"}))
	apply(t, s, records.CommitKey("b"), records.EncodeCommit(1))
	if c, _ := s.Get("b"); len(c.Tasks) != 1 || s.TaskIDBound("b") != 4 {
		t.Fatalf("after lowering to 1 task: %d tasks, bound %d, want 1 and 4", len(c.Tasks), s.TaskIDBound("b"))
	}
	apply(t, s, records.ConnectorKey("b"), nil)
	apply(t, s, records.ConnectorKey("b"), records.EncodeProperties(map[string]string{"tasks.max": "1"}))
	if got := s.TaskIDBound("b"); got != 4 {
		t.Fatalf("after delete and re-create: bound %d, want 4", got)
	}
	// A restarted coordinator reads only what compaction kept: the latest
	// record of each task key, and the last commit.
	r := NewConfigState()
	apply(t, r, records.ConnectorKey("b"), records.EncodeProperties(map[string]string{"tasks.max": "1"}))
	for i := 1; i < 4; i++ {
		apply(t, r, records.TaskKey("b", i), records.EncodeProperties(map[string]string{"n": "x"}))
	}
	apply(t, r, records.TaskKey("b", 0), records.EncodeProperties(map[string]string{"n": "y"}))
	apply(t, r, records.CommitKey("b"), records.EncodeCommit(1))
	if got := r.TaskIDBound("b"); got != 4 {
		t.Fatalf("after compaction and restart: bound %d, want 4", got)
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
