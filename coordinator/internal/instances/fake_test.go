package instances

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/plugins"
)

// Class names of the fake plugins.
const (
	sourceClass = "test.FakeSourceConnector"
	sinkClass   = "test.FakeSinkConnector"
)

// fakePlugin is a connect plugin double: it counts lifecycle calls of all
// its instances, fails the calls it is told to, and records every breach of
// the SDK's lifecycle contract.
type fakePlugin struct {
	mu          sync.Mutex
	starts      int
	taskConfigs int
	stops       int
	live        map[*fakeConnector]bool
	contexts    map[string][]connect.ConnectorContext // per config "name" key, in start order
	// startErrs and taskErrs fail the next calls, one error each; a nil
	// error lets the call succeed.
	startErrs []error
	taskErrs  []error
	// block, when set, holds TaskConfigs of connectors whose name key is
	// in it until the channel is closed.
	block     map[string]chan struct{}
	breaches  []string
	splitSalt string // changes every task config when set
}

func newFakePlugin() *fakePlugin {
	return &fakePlugin{live: map[*fakeConnector]bool{}, contexts: map[string][]connect.ConnectorContext{}, block: map[string]chan struct{}{}}
}

// registry returns a registry with a source and a sink backed by f.
func (f *fakePlugin) registry(t *testing.T) *plugins.Registry {
	t.Helper()
	mk := func(class string, kind connect.Kind) *connect.Plugin {
		return &connect.Plugin{Class: class, Kind: kind, Version: "1",
			NewConnector: func() connect.Connector { return &fakeConnector{f: f} }}
	}
	reg, err := plugins.New(mk(sourceClass, connect.KindSource), mk(sinkClass, connect.KindSink))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

type counts struct{ starts, taskConfigs, stops, live int }

func (f *fakePlugin) counts() counts {
	f.mu.Lock()
	defer f.mu.Unlock()
	return counts{f.starts, f.taskConfigs, f.stops, len(f.live)}
}

func (f *fakePlugin) failStarts(errs ...error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.startErrs = append(f.startErrs, errs...)
}

func (f *fakePlugin) failTasks(errs ...error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.taskErrs = append(f.taskErrs, errs...)
}

// context returns the ConnectorContext of the i-th start of connector name
// (-1: the latest), nil if there is none.
func (f *fakePlugin) context(name string, i int) connect.ConnectorContext {
	f.mu.Lock()
	defer f.mu.Unlock()
	cs := f.contexts[name]
	if i < 0 {
		i = len(cs) + i
	}
	if i < 0 || i >= len(cs) {
		return nil
	}
	return cs[i]
}

func (f *fakePlugin) checkContract(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.breaches) > 0 {
		t.Errorf("lifecycle contract broken: %q", f.breaches)
	}
}

func (f *fakePlugin) breach(format string, args ...any) {
	f.breaches = append(f.breaches, fmt.Sprintf(format, args...))
}

func next(errs *[]error) error {
	if len(*errs) == 0 {
		return nil
	}
	err := (*errs)[0]
	*errs = (*errs)[1:]
	return err
}

// fakeConnector is one instance. It checks that its calls come in
// lifecycle order and never overlap.
type fakeConnector struct {
	f       *fakePlugin
	props   map[string]string
	state   string // "", started, stopped
	calling bool
}

func (c *fakeConnector) ConfigDef() *connect.ConfigDef                    { return connect.NewConfigDef() }
func (c *fakeConnector) Validate(map[string]string) []connect.ConfigValue { return nil }

// enter marks a call in progress; the caller holds f.mu.
func (c *fakeConnector) enter(call string) {
	if c.calling {
		c.f.breach("%s of %s overlaps another call", call, c.props["name"])
	}
	c.calling = true
}

func (c *fakeConnector) Start(cc connect.ConnectorContext, props map[string]string) error {
	f := c.f
	f.mu.Lock()
	defer f.mu.Unlock()
	c.enter("Start")
	defer func() { c.calling = false }()
	f.starts++
	if c.state != "" {
		f.breach("Start of %s in state %q", props["name"], c.state)
	}
	if err := next(&f.startErrs); err != nil {
		return err
	}
	c.state, c.props = "started", props
	f.live[c] = true
	f.contexts[props["name"]] = append(f.contexts[props["name"]], cc)
	return nil
}

func (c *fakeConnector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	f := c.f
	f.mu.Lock()
	c.enter("TaskConfigs")
	f.taskConfigs++
	if c.state != "started" {
		f.breach("TaskConfigs of %s in state %q", c.props["name"], c.state)
	}
	block := f.block[c.props["name"]]
	err := next(&f.taskErrs)
	salt := f.splitSalt
	f.mu.Unlock()
	if block != nil {
		<-block
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c.calling = false
	if err != nil {
		return nil, err
	}
	out := make([]map[string]string, maxTasks)
	for i := range out {
		out[i] = maps.Clone(c.props)
		out[i]["task"] = strconv.Itoa(i) + salt
	}
	return out, nil
}

func (c *fakeConnector) Stop() error {
	f := c.f
	f.mu.Lock()
	defer f.mu.Unlock()
	c.enter("Stop")
	defer func() { c.calling = false }()
	f.stops++
	if c.state != "started" {
		f.breach("Stop of %s in state %q", c.props["name"], c.state)
	}
	c.state = "stopped"
	delete(f.live, c)
	return nil
}

// fakeClock runs retry timers only when the test says so.
type fakeClock struct {
	mu     sync.Mutex
	timers []*fakeTimer
}

type fakeTimer struct {
	d    time.Duration
	f    func()
	done bool // fired or stopped
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{d: d, f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.done
		t.done = true
		return was
	}
}

// pending returns the delays of the timers neither fired nor stopped.
func (c *fakeClock) pending() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Duration
	for _, t := range c.timers {
		if !t.done {
			out = append(out, t.d)
		}
	}
	return out
}

// fire runs every pending timer.
func (c *fakeClock) fire() {
	c.mu.Lock()
	var due []*fakeTimer
	for _, t := range c.timers {
		if !t.done {
			t.done = true
			due = append(due, t)
		}
	}
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
}

// statusLog records what OnStatus was told.
type statusLog struct {
	mu  sync.Mutex
	got map[string][]Status
}

func (l *statusLog) record(name string, st Status) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.got == nil {
		l.got = map[string][]Status{}
	}
	l.got[name] = append(l.got[name], st)
}

func (l *statusLog) of(name string) []Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got[name])
}

// harness is a Manager over a LocalHost of fake plugins, on a fake clock.
type harness struct {
	*Manager
	plugin *fakePlugin
	clock  *fakeClock
	status *statusLog
}

func newHarness(t *testing.T, tweak func(*Config)) *harness {
	t.Helper()
	h := &harness{plugin: newFakePlugin(), clock: &fakeClock{}, status: &statusLog{}}
	cfg := Config{Host: NewLocalHost(h.plugin.registry(t), nil), OnStatus: h.status.record, AfterFunc: h.clock.AfterFunc,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if tweak != nil {
		tweak(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.Manager = m
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
		if c := h.plugin.counts(); c.live != 0 {
			t.Errorf("%d instances still started after Close", c.live)
		}
		h.plugin.checkContract(t)
	})
	return h
}

// settle waits until every worker (or the named ones) waits for work with
// none pending: what the last calls caused has happened.
func (h *harness) settle(t *testing.T, names ...string) {
	t.Helper()
	eventually(t, func() bool { return h.idle(names...) })
}

// idle reports whether the named workers (all when none is named) wait
// for work with none pending.
func (m *Manager) idle(names ...string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(names) == 0 {
		names = slices.Collect(maps.Keys(m.conns))
	}
	for _, n := range names {
		if in := m.conns[n]; in != nil && (!in.parked || in.pending) {
			return false
		}
	}
	return true
}

// eventually polls cond until it holds, failing the test after 5s.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

// conn is a connector of the fake source; its config names it, so the
// fake can tell instances of different connectors apart.
func conn(name, target string, extra ...string) Connector {
	cfg := map[string]string{"connector.class": sourceClass, "name": name, "tasks.max": "2"}
	for i := 0; i+1 < len(extra); i += 2 {
		cfg[extra[i]] = extra[i+1]
	}
	return Connector{Name: name, Config: cfg, TargetState: target}
}
