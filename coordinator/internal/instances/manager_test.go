package instances

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/records"
)

var (
	running = Status{State: api.StateRunning}
	paused  = Status{State: api.StatePaused}
	stopped = Status{State: api.StateStopped}
)

func failed(trace string) Status { return Status{State: api.StateFailed, Trace: trace} }

// TestTaskConfigsOnlyWhenTheyCanChange walks one connector through the
// events of its life and counts the plugin calls each one causes.
func TestTaskConfigsOnlyWhenTheyCanChange(t *testing.T) {
	h := newHarness(t, nil)
	a := conn("a", records.TargetStarted)
	changed := conn("a", records.TargetStarted, "extra", "1")
	steps := []struct {
		name string
		do   func()
		want counts // cumulative
		// newVersion says the step publishes new task configs.
		newVersion bool
	}{
		{"first sync", func() { h.Sync([]Connector{a}) }, counts{1, 1, 0, 1}, true},
		{"20 more syncs, same config", func() {
			for range 20 {
				h.Sync([]Connector{a})
			}
		}, counts{1, 1, 0, 1}, false},
		{"config change", func() { h.Sync([]Connector{changed}) }, counts{2, 2, 1, 1}, true},
		{"syncs after the change", func() { h.Sync([]Connector{changed}); h.Sync([]Connector{changed}) }, counts{2, 2, 1, 1}, false},
		{"restart", func() {
			if !h.Restart("a") {
				t.Fatal("restart of a known connector refused")
			}
		}, counts{3, 3, 2, 1}, false},
		{"reconfiguration request", func() { h.plugin.context("a", -1).RequestTaskReconfiguration() }, counts{3, 4, 2, 1}, false},
		{"request that changes the split", func() {
			h.plugin.mu.Lock()
			h.plugin.splitSalt = "x"
			h.plugin.mu.Unlock()
			h.plugin.context("a", -1).RequestTaskReconfiguration()
		}, counts{3, 5, 2, 1}, true},
		{"request from a stopped instance", func() { h.plugin.context("a", 0).RequestTaskReconfiguration() }, counts{3, 5, 2, 1}, false},
	}
	var version int64
	for _, s := range steps {
		before := h.Changed()
		s.do()
		h.settle(t)
		if got := h.plugin.counts(); got != s.want {
			t.Fatalf("%s: calls %+v, want %+v", s.name, got, s.want)
		}
		ts, ok := h.TaskConfigs("a")
		if !ok || !ts.Current || len(ts.Configs) != 2 {
			t.Fatalf("%s: task configs %+v, %v", s.name, ts, ok)
		}
		select {
		case <-before:
			if !s.newVersion {
				t.Errorf("%s: Changed closed without new task configs", s.name)
			}
		default:
			if s.newVersion {
				t.Errorf("%s: new task configs, Changed not closed", s.name)
			}
		}
		if (ts.Version != version) != s.newVersion {
			t.Errorf("%s: version %d after %d", s.name, ts.Version, version)
		}
		version = ts.Version
	}
	if got, want := h.status.of("a"), []Status{running, running}; !reflect.DeepEqual(got, want) {
		t.Errorf("statuses = %+v, want %+v (once at the start, once after the restart)", got, want)
	}
}

func TestTaskConfigsFinished(t *testing.T) {
	tests := []struct {
		name  string
		class string
		extra []string
		want  map[string]string // added to every task config
		tasks int
	}{
		{"source", sourceClass, []string{"topics", "ignored"}, map[string]string{"task.class": "test.FakeSourceTask", "topics": "ignored"}, 2},
		{"sink with topics", sinkClass, []string{"topics", "a,b"}, map[string]string{"task.class": "test.FakeSinkTask", "topics": "a,b"}, 2},
		{"sink with a regex, tasks.max 3", sinkClass, []string{"topics.regex", "t.*", "tasks.max", " 3 "}, map[string]string{"task.class": "test.FakeSinkTask", "topics.regex": "t.*"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			c := conn("c", records.TargetStarted, tt.extra...)
			c.Config["connector.class"] = tt.class
			h.Sync([]Connector{c})
			h.settle(t)
			ts, ok := h.TaskConfigs("c")
			if !ok || len(ts.Configs) != tt.tasks {
				t.Fatalf("task configs %+v, %v; want %d", ts, ok, tt.tasks)
			}
			for i, tc := range ts.Configs {
				for k, v := range tt.want {
					if tc[k] != v {
						t.Errorf("task %d: %s = %q, want %q", i, k, tc[k], v)
					}
				}
			}
		})
	}
}

func TestTaskConfigsFailureRetriesWithBackoff(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.InitialBackoff, c.MaxBackoff = time.Second, 4*time.Second })
	h.Sync([]Connector{conn("a", records.TargetStarted)})
	h.settle(t)
	good, _ := h.TaskConfigs("a")

	boom := errors.New("database unreachable")
	h.plugin.failTasks(boom, boom, boom, boom)
	h.plugin.context("a", -1).RequestTaskReconfiguration()
	for i, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second} {
		h.settle(t)
		if got := h.plugin.counts().taskConfigs; got != 2+i {
			t.Fatalf("attempt %d: %d TaskConfigs calls, want %d", i, got, 2+i)
		}
		if got := h.clock.pending(); !reflect.DeepEqual(got, []time.Duration{wait}) {
			t.Fatalf("attempt %d: retry timers %v, want [%v]", i, got, wait)
		}
		if ts, ok := h.TaskConfigs("a"); !ok || !reflect.DeepEqual(ts, good) {
			t.Fatalf("attempt %d: task configs %+v, want the last good %+v", i, ts, good)
		}
		h.clock.fire()
	}
	h.settle(t)
	if c := h.plugin.counts(); c.taskConfigs != 6 || c.starts != 1 || c.stops != 0 {
		t.Errorf("calls %+v: want TaskConfigs retried on the running instance", c)
	}
	if p := h.clock.pending(); len(p) != 0 {
		t.Errorf("timers left after success: %v", p)
	}
	trace := "computing the task configs of connector a: database unreachable"
	// Each failed attempt reports FAILED again (a status written over the
	// first must not hide the failure), then the success RUNNING.
	if got, want := h.status.of("a"), []Status{running, failed(trace), failed(trace), failed(trace), failed(trace), running}; !reflect.DeepEqual(got, want) {
		t.Errorf("statuses = %+v, want %+v", got, want)
	}
	// The backoff starts over after a success.
	h.plugin.failTasks(boom)
	h.plugin.context("a", -1).RequestTaskReconfiguration()
	h.settle(t)
	if got := h.clock.pending(); !reflect.DeepEqual(got, []time.Duration{time.Second}) {
		t.Errorf("retry timers after a new failure %v, want [1s]", got)
	}
}

func TestStartFailureRetriesAndKeepsTaskConfigs(t *testing.T) {
	h := newHarness(t, nil)
	boom := errors.New("no route to host")
	h.plugin.failStarts(boom)
	h.Sync([]Connector{conn("a", records.TargetStarted)})
	h.settle(t)
	if _, ok := h.TaskConfigs("a"); ok {
		t.Fatal("task configs published though no start succeeded")
	}
	if got := h.clock.pending(); !reflect.DeepEqual(got, []time.Duration{time.Second}) {
		t.Fatalf("retry timers %v, want [1s] (the default)", got)
	}
	h.clock.fire()
	h.settle(t)
	good, ok := h.TaskConfigs("a")
	if !ok || !good.Current {
		t.Fatalf("task configs after the retry: %+v %v", good, ok)
	}

	// A config change whose start fails keeps the old task configs, not
	// current, until a start with it succeeds.
	h.plugin.failStarts(boom, boom)
	changed := conn("a", records.TargetStarted, "extra", "1")
	h.Sync([]Connector{changed})
	h.settle(t)
	ts, _ := h.TaskConfigs("a")
	if ts.Current || !reflect.DeepEqual(ts.Configs, good.Configs) || ts.Version != good.Version {
		t.Fatalf("after a failed start: %+v, want the last good %+v, not current", ts, good)
	}
	// Another change does not wait out the backoff: it may be the fix.
	changed.Config["extra"] = "2"
	h.Sync([]Connector{changed})
	h.settle(t)
	if got := h.plugin.counts(); got.starts != 4 || got.stops != 1 || got.live != 0 {
		t.Fatalf("calls %+v: want the second change started at once, no Stop of a failed start", got)
	}
	before := h.Changed()
	h.clock.fire()
	h.settle(t)
	ts, _ = h.TaskConfigs("a")
	if !ts.Current || ts.Configs[0]["extra"] != "2" {
		t.Fatalf("after the retry: %+v", ts)
	}
	select {
	case <-before:
	default:
		t.Error("Changed not closed for the new task configs")
	}
	trace := "starting " + sourceClass + ": no route to host"
	want := []Status{failed(trace), running, failed(trace), failed(trace), running}
	if got := h.status.of("a"); !reflect.DeepEqual(got, want) {
		t.Errorf("statuses = %+v, want %+v", got, want)
	}
}

func TestRaiseError(t *testing.T) {
	h := newHarness(t, nil)
	h.Sync([]Connector{conn("a", records.TargetStarted)})
	h.settle(t)
	good, _ := h.TaskConfigs("a")
	cc := h.plugin.context("a", -1)
	cc.RaiseError(errors.New("lost the replication slot"))
	h.settle(t)
	if c := h.plugin.counts(); c.stops != 1 || c.live != 0 {
		t.Fatalf("calls %+v: a connector that raised an error is stopped", c)
	}
	if p := h.clock.pending(); len(p) != 0 {
		t.Errorf("a raised error is retried: timers %v", p)
	}
	if ts, _ := h.TaskConfigs("a"); !reflect.DeepEqual(ts, good) {
		t.Errorf("task configs %+v, want the last good %+v", ts, good)
	}
	// Its context is dead now.
	cc.RequestTaskReconfiguration()
	cc.RaiseError(nil)
	h.Sync([]Connector{conn("a", records.TargetStarted)})
	h.settle(t)
	if c := h.plugin.counts(); c.starts != 1 || c.taskConfigs != 1 {
		t.Fatalf("calls %+v after requests of a stopped instance", c)
	}
	h.Restart("a")
	h.settle(t)
	if c := h.plugin.counts(); c.starts != 2 || c.live != 1 {
		t.Fatalf("calls %+v: a restart starts it again", c)
	}
	want := []Status{running, failed("lost the replication slot"), running}
	if got := h.status.of("a"); !reflect.DeepEqual(got, want) {
		t.Errorf("statuses = %+v, want %+v", got, want)
	}
}

// TestStopsOnce checks that every way out of STARTED stops the instance
// exactly once, and that a return to STARTED starts a new one.
func TestStopsOnce(t *testing.T) {
	tests := []struct {
		name   string
		target string // "": the connector is deleted
		status []Status
	}{
		{"pause", records.TargetPaused, []Status{running, paused, running}},
		{"stop", records.TargetStopped, []Status{running, stopped, running}},
		{"delete", "", []Status{running, running}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			b := conn("b", records.TargetStarted)
			h.Sync([]Connector{conn("a", records.TargetStarted), b})
			h.settle(t)
			good, _ := h.TaskConfigs("a")
			leave := []Connector{b}
			if tt.target != "" {
				leave = append(leave, conn("a", tt.target))
			}
			for range 3 {
				h.Sync(leave)
			}
			h.settle(t)
			if got, want := h.plugin.counts(), (counts{starts: 2, taskConfigs: 2, stops: 1, live: 1}); got != want {
				t.Fatalf("calls %+v, want %+v", got, want)
			}
			ts, ok := h.TaskConfigs("a")
			if kept := tt.target != ""; ok != kept || kept && !reflect.DeepEqual(ts, good) {
				t.Errorf("task configs %+v, %v; want kept: %v", ts, ok, kept)
			}
			// Back to STARTED: a new instance computes them again.
			h.Sync([]Connector{conn("a", records.TargetStarted), b})
			h.settle(t)
			if got, want := h.plugin.counts(), (counts{starts: 3, taskConfigs: 3, stops: 1, live: 2}); got != want {
				t.Fatalf("calls after the return %+v, want %+v", got, want)
			}
			if got := h.status.of("a"); !reflect.DeepEqual(got, tt.status) {
				t.Errorf("statuses = %+v, want %+v", got, tt.status)
			}
			if ts, ok := h.TaskConfigs("a"); !ok || !ts.Current {
				t.Errorf("task configs after the return: %+v %v", ts, ok)
			}
		})
	}
}

func TestRestartOfAnInstanceNotStarted(t *testing.T) {
	h := newHarness(t, nil)
	h.Sync([]Connector{conn("a", records.TargetPaused)})
	h.settle(t)
	if !h.Restart("a") {
		t.Fatal("restart refused")
	}
	h.settle(t)
	if c := h.plugin.counts(); c.starts != 0 {
		t.Errorf("a paused connector was started: %+v", c)
	}
	// Reported again, since the herder showed RESTARTING meanwhile.
	if got, want := h.status.of("a"), []Status{paused, paused}; !reflect.DeepEqual(got, want) {
		t.Errorf("statuses = %+v, want %+v", got, want)
	}
	if h.Restart("nope") {
		t.Error("restart of an unknown connector accepted")
	}
}

// TestDeleteAndCreateAgain gives a deleted connector back with the same
// config, whether or not its worker got to stop it in between: either way
// it is a new connector, with a new instance and new task configs.
func TestDeleteAndCreateAgain(t *testing.T) {
	h := newHarness(t, nil)
	a := conn("a", records.TargetStarted)
	h.Sync([]Connector{a})
	h.settle(t)
	old, _ := h.TaskConfigs("a")
	h.Sync(nil)
	h.Sync([]Connector{a})
	h.settle(t)
	if got, want := h.plugin.counts(), (counts{starts: 2, taskConfigs: 2, stops: 1, live: 1}); got != want {
		t.Fatalf("calls %+v, want %+v", got, want)
	}
	ts, ok := h.TaskConfigs("a")
	if !ok || !ts.Current || ts.Version <= old.Version {
		t.Errorf("task configs %+v %v after %+v", ts, ok, old)
	}
}

func TestCloseStopsEveryInstance(t *testing.T) {
	h := newHarness(t, nil)
	h.plugin.failStarts(errors.New("boom")) // one in backoff
	h.Sync([]Connector{conn("a", records.TargetStarted), conn("b", records.TargetStarted), conn("c", records.TargetPaused)})
	h.settle(t)
	if err := h.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if c := h.plugin.counts(); c.live != 0 || c.stops != 1 {
		t.Errorf("calls %+v after Close: want the one started instance stopped", c)
	}
	h.Sync([]Connector{conn("d", records.TargetStarted)})
	if h.Restart("a") || !h.idle() {
		t.Error("the manager still acts after Close")
	}
}

// TestSlowPluginHoldsOnlyItself: a plugin stuck in TaskConfigs neither
// blocks the caller nor another connector.
func TestSlowPluginHoldsOnlyItself(t *testing.T) {
	h := newHarness(t, nil)
	release := make(chan struct{})
	h.plugin.block["slow"] = release
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.Sync([]Connector{conn("slow", records.TargetStarted)})
		eventually(t, func() bool { return h.plugin.counts().taskConfigs == 1 })
		h.Sync([]Connector{conn("slow", records.TargetStarted, "extra", "1"), conn("fast", records.TargetStarted)})
		h.Restart("slow")
		h.TaskConfigs("slow")
		h.settle(t, "fast")
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("calls on the manager blocked behind a slow plugin")
	}
	if _, ok := h.TaskConfigs("fast"); !ok {
		t.Error("the other connector has no task configs")
	}
	if _, ok := h.TaskConfigs("slow"); ok {
		t.Error("the slow connector has task configs")
	}
	close(release)
	h.settle(t)
	if ts, ok := h.TaskConfigs("slow"); !ok || ts.Configs[0]["extra"] != "1" {
		t.Errorf("slow connector after release: %+v %v", ts, ok)
	}
}

func TestConfigValidate(t *testing.T) {
	host := NewLocalHost(nil, nil)
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"defaults", Config{Host: host}, true},
		{"no host", Config{}, false},
		{"negative", Config{Host: host, InitialBackoff: -1}, false},
		{"max below initial", Config{Host: host, InitialBackoff: time.Minute, MaxBackoff: time.Second}, false},
		{"max below the default initial", Config{Host: host, MaxBackoff: time.Millisecond}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok %v", err, tt.ok)
			}
			if tt.ok && (tt.cfg.InitialBackoff != time.Second || tt.cfg.MaxBackoff != time.Minute || tt.cfg.AfterFunc == nil) {
				t.Errorf("defaults not filled in: %+v", tt.cfg)
			}
		})
	}
}
