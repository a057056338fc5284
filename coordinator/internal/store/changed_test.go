package store

import (
	"testing"
	"time"

	"github.com/sluice-io/sluice/shared/records"
)

// TestChangedTimes: a connector's Changed is its latest config, target
// state or commit record's time (not a task config's or a fencing
// record's, which are written with those), and the status state keeps,
// per connector, the latest status record's time of it or its tasks; a
// deleted connector's is dropped.
func TestChangedTimes(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	cs := NewConfigState()
	cs.ApplyAt(records.ConfigRecord{Kind: records.KindConnector, Connector: "c", Properties: map[string]string{"k": "v"}}, t0)
	cs.ApplyAt(records.ConfigRecord{Kind: records.KindTask, Connector: "c", Task: 0, Properties: map[string]string{}}, t0.Add(time.Hour))
	cs.ApplyAt(records.ConfigRecord{Kind: records.KindFencing, Connector: "c", Count: 1}, t0.Add(time.Hour))
	if c, _ := cs.Get("c"); !c.Changed.Equal(t0) {
		t.Fatalf("after the config: %v", c.Changed)
	}
	cs.ApplyAt(records.ConfigRecord{Kind: records.KindTargetState, Connector: "c", TargetState: records.TargetPaused}, t0.Add(time.Minute))
	cs.Apply(records.ConfigRecord{Kind: records.KindCommit, Connector: "c", Count: 1}) // no time: keeps the last one
	if c, _ := cs.Get("c"); !c.Changed.Equal(t0.Add(time.Minute)) || len(c.Tasks) != 1 {
		t.Fatalf("after the target state: %v", c.Changed)
	}
	if all := cs.AllShared(); len(all) != 1 || !all[0].Changed.Equal(t0.Add(time.Minute)) || all[0].Config["k"] != "v" {
		t.Fatalf("AllShared: %+v", all)
	}

	ss := NewStatusState()
	trace := ""
	ss.ApplyAt(records.StatusRecord{Kind: records.StatusConnector, Connector: "c", Status: &records.Status{State: "RUNNING", Trace: &trace}}, t0)
	ss.ApplyAt(records.StatusRecord{Kind: records.StatusTask, Connector: "c", Task: 0, Status: &records.Status{State: "RUNNING", Trace: &trace, Generation: 2}}, t0.Add(time.Second))
	ss.ApplyAt(records.StatusRecord{Kind: records.StatusTask, Connector: "c", Task: 0, Status: &records.Status{State: "FAILED", Trace: &trace, Generation: 1}}, t0.Add(time.Hour))
	if got := ss.Changed("c"); !got.Equal(t0.Add(time.Second)) {
		t.Fatalf("a stale generation's report moved the time: %v", got)
	}
	ss.ApplyAt(records.StatusRecord{Kind: records.StatusConnector, Connector: "c", Tombstone: true}, t0.Add(2*time.Second))
	ss.ApplyAt(records.StatusRecord{Kind: records.StatusTask, Connector: "c", Task: 0, Tombstone: true}, t0.Add(3*time.Second))
	if got := ss.Changed("c"); !got.IsZero() {
		t.Fatalf("a deleted connector's time kept: %v", got)
	}
}
