package registry

import (
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func req(id string, tasks ...wire.RunningTask) *wire.RegisterRequest {
	return &wire.RegisterRequest{AgentID: id, Labels: map[string]string{"zone": "a"}, Tasks: tasks}
}

func TestHeartbeatNeedsRegistration(t *testing.T) {
	r := New(time.Second)
	if known, _ := r.Observe(req("a"), false, t0); known {
		t.Fatal("a heartbeat from an unknown agent was accepted")
	}
	r.Presume("a", t0)
	if known, _ := r.Observe(req("a"), false, t0); known {
		t.Fatal("a heartbeat from a presumed agent was accepted: it must register first")
	}
	if known, changed := r.Observe(req("a"), true, t0); !known || !changed {
		t.Fatalf("register: known=%v changed=%v", known, changed)
	}
	if known, _ := r.Observe(req("a"), false, t0); !known {
		t.Fatal("heartbeat after register refused")
	}
	if got := r.Registered(); len(got) != 1 || got[0] != "a" {
		t.Fatalf("registered = %v", got)
	}
}

func TestObserveReportsChanges(t *testing.T) {
	r := New(time.Second)
	task := wire.RunningTask{ID: api.TaskID{Connector: "c", Task: 0}, Generation: 1, State: api.StateRunning}
	r.Observe(req("a", task), true, t0)
	if _, changed := r.Observe(req("a", task), false, t0.Add(time.Millisecond)); changed {
		t.Fatal("an identical heartbeat counted as a change")
	}
	task.State = api.StatePaused
	if _, changed := r.Observe(req("a", task), false, t0.Add(2*time.Millisecond)); !changed {
		t.Fatal("a changed task state was not a change")
	}
	other := req("a", task)
	other.Labels = map[string]string{"zone": "b"}
	if _, changed := r.Observe(other, false, t0.Add(3*time.Millisecond)); !changed {
		t.Fatal("changed labels were not a change")
	}
	if _, changed := r.Observe(req("a"), false, t0.Add(4*time.Millisecond)); !changed {
		t.Fatal("a task gone from the report was not a change")
	}
}

func TestExpireByLease(t *testing.T) {
	r := New(time.Second)
	r.Observe(req("a"), true, t0)
	r.Observe(req("b"), true, t0.Add(800*time.Millisecond))
	r.Presume("c", t0)
	if lost := r.Expire(t0.Add(time.Second)); len(lost) != 0 {
		t.Fatalf("expired at exactly the lease: %v", lost)
	}
	lost := r.Expire(t0.Add(1500 * time.Millisecond))
	if len(lost) != 2 || lost[0].ID != "a" || lost[1].ID != "c" {
		t.Fatalf("lost = %v, want a and c", lost)
	}
	if !r.Known("b") || r.Known("a") {
		t.Fatal("wrong agents left")
	}
}

// TestNextExpiry: the instant NextExpiry names is the first at which
// Expire takes an agent — not a moment before — and it moves on with a
// heartbeat and once the agent is gone.
func TestNextExpiry(t *testing.T) {
	r := New(time.Second)
	if _, ok := r.NextExpiry(); ok {
		t.Fatal("an empty registry has an expiry")
	}
	r.Observe(req("a"), true, t0)
	r.Observe(req("b"), true, t0.Add(300*time.Millisecond))
	next, ok := r.NextExpiry()
	if !ok || !next.After(t0.Add(time.Second)) || next.After(t0.Add(time.Second+time.Millisecond)) {
		t.Fatalf("next expiry = %v, %v; want just after a's lease (%v)", next, ok, t0.Add(time.Second))
	}
	if lost := r.Expire(next.Add(-time.Nanosecond)); len(lost) != 0 {
		t.Fatalf("expired before the next expiry: %v", lost)
	}
	r.Observe(req("a"), false, t0.Add(500*time.Millisecond)) // a heartbeat moves a's lease past b's
	if next, _ := r.NextExpiry(); !next.After(t0.Add(1300*time.Millisecond)) || next.After(t0.Add(1301*time.Millisecond)) {
		t.Fatalf("after a's heartbeat the next expiry = %v, want just after b's lease", next)
	}
	next, _ = r.NextExpiry()
	if lost := r.Expire(next); len(lost) != 1 || lost[0].ID != "b" {
		t.Fatalf("expired at the next expiry: %v, want b", lost)
	}
}

func TestCopiesAreIndependent(t *testing.T) {
	r := New(time.Second)
	id := api.TaskID{Connector: "c", Task: 0}
	r.Observe(req("a", wire.RunningTask{ID: id}), true, t0)
	a, _ := r.Get("a")
	a.Labels["zone"] = "changed"
	delete(a.Reported, id)
	again, _ := r.Get("a")
	if again.Labels["zone"] != "a" || len(again.Reported) != 1 {
		t.Fatalf("a copy changed the registry: %+v", again)
	}
	r.ForgetReported("a", []api.TaskID{id})
	if got := r.ReportedOf("c"); len(got) != 0 {
		t.Fatalf("reported after forget: %v", got)
	}
	if !r.Remove("a") || r.Remove("a") {
		t.Fatal("Remove should report whether the agent was known")
	}
}

// TestHostPlugins: an agent's host plugins are kept by class and version,
// a change of them is a change, copies do not share them, and placement
// names a Java plugin apart from a built-in of the same class.
func TestHostPlugins(t *testing.T) {
	r := New(time.Second)
	const file = "org.apache.kafka.connect.file.FileStreamSourceConnector"
	a := req("a")
	a.Plugins = []api.PluginInfo{{Class: file, Type: "source", Version: "0.1.0"}}
	a.HostPlugins = []api.PluginInfo{{Class: file, Type: "source", Version: "4.4.0"}, {Class: "com.example.X", Type: "sink", Version: "1"}}
	r.Observe(a, true, t0)
	if _, changed := r.Observe(a, false, t0.Add(time.Millisecond)); changed {
		t.Fatal("the same host plugins counted as a change")
	}
	b := *a
	b.HostPlugins = a.HostPlugins[:1]
	if _, changed := r.Observe(&b, false, t0.Add(2*time.Millisecond)); !changed {
		t.Fatal("a host plugin gone was not a change")
	}
	r.Observe(a, false, t0.Add(3*time.Millisecond))
	got, _ := r.Get("a")
	if !got.HasHost(file, "4.4.0") || got.HasHost(file, "0.1.0") || !got.HasHost("com.example.X", "") || got.HasHost("com.example.Y", "") {
		t.Fatalf("host plugins %v", got.HostPlugins)
	}
	delete(got.HostPlugins, PluginKey{"com.example.X", "1"})
	if again, _ := r.Get("a"); !again.HasHost("com.example.X", "1") {
		t.Fatal("a copy shares the registry's host plugins")
	}
	if n := len(r.HostPlugins()); n != 2 {
		t.Fatalf("union of host plugins: %d, want 2", n)
	}
	pp := got.PlacementPlugins()
	for _, want := range []string{file, HostPluginPlacement(file, ""), HostPluginPlacement(file, "4.4.0")} {
		if !pp[want] {
			t.Errorf("placement plugins %v lack %q", pp, want)
		}
	}
	if pp[HostPluginPlacement(file, "0.1.0")] {
		t.Error("the built-in's version counts as a host plugin")
	}
}
