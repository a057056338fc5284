package offsets

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/coordinator/internal/connlock"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/offsetstore"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// The fakes of the service's ports: a whole service runs on them without
// Kafka or NATS.

const (
	srcClass  = "test.Source"
	sinkClass = "test.Sink"
	javaClass = "test.JavaSource"
)

// fakeConnectors is the config topic's state.
type fakeConnectors struct {
	mu    sync.Mutex
	conns map[string]store.Connector
	bound map[string]int
}

func (f *fakeConnectors) Get(name string) (store.Connector, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.conns[name]
	return c, ok
}

func (f *fakeConnectors) TaskIDBound(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bound[name]
}

func (f *fakeConnectors) All() []store.Connector {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []store.Connector
	for _, c := range f.conns {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// alterer is a connector with an alterOffsets hook.
type alterer struct {
	connect.Connector
	definite bool
	err      error
	calls    *[][]connect.Offset
}

func (a alterer) AlterOffsets(_ map[string]string, offsets []connect.Offset) (bool, error) {
	*a.calls = append(*a.calls, offsets)
	return a.definite, a.err
}

// fakePlugins knows a source, a sink and a Java source class; the source
// has a hook that answers as hook says.
type fakePlugins struct {
	hook      alterer
	hookCalls [][]connect.Offset
}

func (f *fakePlugins) Choose(config map[string]string) (Plugin, bool) {
	switch config["connector.class"] {
	case srcClass:
		h := f.hook
		h.calls = &f.hookCalls
		return Plugin{Plugin: &connect.Plugin{Class: srcClass, Kind: connect.KindSource, NewConnector: func() connect.Connector { return h }}}, true
	case sinkClass:
		return Plugin{Plugin: &connect.Plugin{Class: sinkClass, Kind: connect.KindSink, NewConnector: func() connect.Connector { return nil }}}, true
	case javaClass:
		return Plugin{Plugin: &connect.Plugin{Class: javaClass, Kind: connect.KindSource}, Java: true, Pinned: "1.0"}, true
	}
	return Plugin{}, false
}

func (f *fakePlugins) Type(config map[string]string) string {
	p, ok := f.Choose(config)
	switch {
	case !ok:
		return api.TypeUnknown
	case p.Plugin.Kind == connect.KindSink:
		return api.TypeSink
	}
	return api.TypeSource
}

func (f *fakePlugins) UnknownConnectorMessage(class string) string {
	return "Failed to find any class that implements Connector and which name matches " + class
}

// fakeHosts are agents' connector hosts.
type fakeHosts struct {
	agents []string
	reply  wire.PluginConnectorReply
	err    error
	got    []wire.PluginConnectorRequest
}

func (f *fakeHosts) HostAgents(class, pinned string) ([]string, string) {
	return f.agents, "No live agent has the plugin " + class + "@" + pinned
}

func (f *fakeHosts) CallAnyHost(_ context.Context, _ []string, req wire.PluginConnectorRequest) (wire.PluginConnectorReply, error) {
	f.got = append(f.got, req)
	return f.reply, f.err
}

// fakeAgents is the registry: agents, what they hold, and how they answer
// a revoke.
type fakeAgents struct {
	mu        sync.Mutex
	known     []string
	held      []api.TaskID
	seen      map[string]time.Time
	revokeErr map[string]error
	short     map[string]bool // answers a revoke with fewer tasks stopped
	revoked   map[string][]api.TaskID
	forgotten []string
}

func newFakeAgents(ids ...string) *fakeAgents {
	f := &fakeAgents{known: ids, seen: map[string]time.Time{}, revokeErr: map[string]error{}, short: map[string]bool{}, revoked: map[string][]api.TaskID{}}
	for _, id := range ids {
		f.seen[id] = time.Unix(0, 0)
	}
	return f
}

func (f *fakeAgents) Holders(string) ([]string, []api.TaskID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.known...), append([]api.TaskID(nil), f.held...)
}

func (f *fakeAgents) Revoke(_ context.Context, agent string, ids []api.TaskID) (wire.RevokeReply, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revoked[agent] = ids
	if err := f.revokeErr[agent]; err != nil {
		return wire.RevokeReply{}, err
	}
	if f.short[agent] {
		return wire.RevokeReply{Stopped: ids[1:], Failed: []string{"task 0"}}, nil
	}
	return wire.RevokeReply{Stopped: ids}, nil
}

func (f *fakeAgents) ForgetReported(agent string, _ []api.TaskID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgotten = append(f.forgotten, agent)
}

func (f *fakeAgents) Registered() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, id := range f.known {
		if _, ok := f.seen[id]; ok {
			out = append(out, id)
		}
	}
	return out
}

func (f *fakeAgents) LastSeen(agent string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.seen[agent]
	return t, ok
}

// remove loses agent, as the presence probes or the lease expiry do.
func (f *fakeAgents) remove(agent string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.seen, agent)
}

// fakeRPC records the requests agents get and answers each with err[agent].
type fakeRPC struct {
	mu       sync.Mutex
	err      map[string]error
	offsets  []wire.SourceOffsetsRequest
	sinks    []wire.SinkOffsetsRequest
	replaces []wire.OffsetsReplaceRequest
	agents   []string
	// apply, when set, makes the change in the fake Kafka.
	apply func()
}

func (f *fakeRPC) answer(agent string) error {
	f.agents = append(f.agents, agent)
	if err := f.err[agent]; err != nil {
		return err
	}
	if f.apply != nil {
		f.apply()
	}
	return nil
}

func (f *fakeRPC) SourceOffsets(_ context.Context, agent string, req wire.SourceOffsetsRequest) ([]wire.WrittenOffset, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.offsets = append(f.offsets, req)
	return nil, f.answer(agent)
}

func (f *fakeRPC) SinkOffsets(_ context.Context, agent string, req wire.SinkOffsetsRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sinks = append(f.sinks, req)
	return f.answer(agent)
}

// changes is how many offsets changes of either kind were sent.
func (f *fakeRPC) changes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.offsets) + len(f.sinks)
}

func (f *fakeRPC) ReplaceOffsets(_ context.Context, agent string, req wire.OffsetsReplaceRequest) ([]wire.WrittenOffset, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replaces = append(f.replaces, req)
	return nil, f.answer(agent)
}

// fakeReader is what Kafka holds: groups' committed offsets and source
// connectors' entries.
type fakeReader struct {
	mu     sync.Mutex
	groups map[string]map[string]map[int32]int64 // group → topic → partition → offset
	source map[string][]offsetstore.Entry
	err    error
	reads  int
}

func (f *fakeReader) GroupOffsets(_ context.Context, group string) (kadm.OffsetResponses, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.err != nil {
		return nil, f.err
	}
	out := kadm.OffsetResponses{}
	for t, ps := range f.groups[group] {
		for p, at := range ps {
			out.Add(kadm.OffsetResponse{Offset: kadm.Offset{Topic: t, Partition: p, At: at}})
		}
	}
	return out, nil
}

func (f *fakeReader) SourceEntries(_ context.Context, name, topic string) ([]offsetstore.Entry, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.err != nil {
		return nil, "", f.err
	}
	return append([]offsetstore.Entry(nil), f.source[name]...), topic, nil
}

// setSource makes name's source offsets those of offsets (partition id →
// offset), each under its canonical key.
func (f *fakeReader) setSource(name string, parts ...api.ConnectorOffset) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var entries []offsetstore.Entry
	for _, p := range parts {
		key, _ := records.EncodeOffsetKey(name, p.Partition)
		entries = append(entries, offsetstore.Entry{Partition: p.Partition, Offset: p.Offset, RawKeys: []string{string(key)}, Live: p.Offset != nil})
	}
	f.source[name] = entries
}

// fakeHistory is the offsets history in memory.
type fakeHistory struct {
	mu       sync.Mutex
	entries  []api.OffsetsHistoryEntry // oldest first
	next     int
	beginErr error
	finished map[string]error
	now      func() time.Time
}

func newFakeHistory() *fakeHistory {
	return &fakeHistory{finished: map[string]error{}, now: func() time.Time { return time.Unix(1700000000, 0) }}
}

func (f *fakeHistory) Begin(_ context.Context, e api.OffsetsHistoryEntry) (api.OffsetsHistoryEntry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.beginErr != nil {
		return e, f.beginErr
	}
	f.next++
	e.ID, e.Time, e.State = fmt.Sprintf("e%04d", f.next), f.now(), api.HistoryPending
	f.entries = append(f.entries, e)
	return e, nil
}

func (f *fakeHistory) Finish(_ context.Context, e api.OffsetsHistoryEntry, cause error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finished[e.ID] = cause
	for i := range f.entries {
		if f.entries[i].ID == e.ID {
			f.entries[i].State = api.HistoryApplied
			if cause != nil {
				f.entries[i].State, f.entries[i].Error = api.HistoryFailed, cause.Error()
			}
		}
	}
	return nil
}

// add records an applied entry as an earlier change did.
func (f *fakeHistory) add(e api.OffsetsHistoryEntry) api.OffsetsHistoryEntry {
	e, _ = f.Begin(context.Background(), e)
	if e.State == api.HistoryPending && e.Error == "" {
		_ = f.Finish(context.Background(), e, nil)
	}
	e.State = api.HistoryApplied
	return e
}

func (f *fakeHistory) applied(connector string) []api.OffsetsHistoryEntry {
	var out []api.OffsetsHistoryEntry
	for i := len(f.entries) - 1; i >= 0; i-- {
		if e := f.entries[i]; e.Connector == connector && e.State == api.HistoryApplied {
			out = append(out, e)
		}
	}
	return out
}

func (f *fakeHistory) List(_ context.Context, connector string, limit int, before string) (api.OffsetsHistory, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out api.OffsetsHistory
	for _, e := range f.applied(connector) {
		if before != "" && e.ID >= before {
			continue
		}
		if len(out.Entries) == limit {
			out.More = true
			break
		}
		out.Entries = append(out.Entries, e)
	}
	return out, nil
}

func (f *fakeHistory) Get(_ context.Context, connector, id string) (api.OffsetsHistoryEntry, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.applied(connector) {
		if e.ID == id {
			return e, true, nil
		}
	}
	return api.OffsetsHistoryEntry{}, false, nil
}

func (f *fakeHistory) Newest(_ context.Context, connector string) (api.OffsetsHistoryEntry, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if a := f.applied(connector); len(a) > 0 {
		return a[0], true, nil
	}
	return api.OffsetsHistoryEntry{}, false, nil
}

func (f *fakeHistory) Pending(context.Context) ([]api.OffsetsHistoryEntry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []api.OffsetsHistoryEntry
	for _, e := range f.entries {
		if e.State == api.HistoryPending {
			out = append(out, e)
		}
	}
	return out, nil
}

// fakeMarks are the fleet topic's topic marks.
type fakeMarks struct {
	marks map[string]store.TopicMark
}

func (f *fakeMarks) Marked(topic string) bool { _, ok := f.marks[topic]; return ok }

func (f *fakeMarks) Mark(_ context.Context, topic string, m store.TopicMark) error {
	f.marks[topic] = m
	return nil
}

func (f *fakeMarks) Forget(_ context.Context, topic string) error {
	delete(f.marks, topic)
	return nil
}

// fakeClock is a clock that moves only when told; After's channels fire
// once the clock passed their time.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []clockWaiter
	asked   []time.Duration
	added   chan struct{}
}

type clockWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock(now time.Time) *fakeClock {
	return &fakeClock{now: now, added: make(chan struct{}, 100)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	c.asked = append(c.asked, d)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, clockWaiter{at: c.now.Add(d), ch: ch})
	select {
	case c.added <- struct{}{}:
	default:
	}
	return ch
}

// Advance moves the clock by d, firing the waiters it passes.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.ch <- c.now
			continue
		}
		kept = append(kept, w)
	}
	c.waiters = kept
}

// awaitWaiter blocks until something waits on the clock.
func (c *fakeClock) awaitWaiter(t *testing.T) {
	t.Helper()
	for {
		c.mu.Lock()
		n := len(c.waiters)
		c.mu.Unlock()
		if n > 0 {
			return
		}
		select {
		case <-c.added:
		case <-time.After(5 * time.Second):
			t.Fatal("nothing waited on the clock")
		}
	}
}

// world is a service on fakes, with what each fake saw.
type world struct {
	svc     *Service
	conns   *fakeConnectors
	plugins *fakePlugins
	hosts   *fakeHosts
	agents  *fakeAgents
	rpc     *fakeRPC
	kafka   *fakeReader
	hist    *fakeHistory
	marks   *fakeMarks
	clock   *fakeClock
	locks   *connlock.Table
	faults  map[faults.Point]error
}

// newWorld is a service whose cluster has agents a1 and a2 and the
// connectors conns.
func newWorld(t *testing.T, conns ...store.Connector) *world {
	t.Helper()
	w := &world{
		conns:   &fakeConnectors{conns: map[string]store.Connector{}, bound: map[string]int{}},
		plugins: &fakePlugins{},
		hosts:   &fakeHosts{},
		agents:  newFakeAgents("a1", "a2"),
		rpc:     &fakeRPC{err: map[string]error{}},
		kafka:   &fakeReader{groups: map[string]map[string]map[int32]int64{}, source: map[string][]offsetstore.Entry{}},
		hist:    newFakeHistory(),
		marks:   &fakeMarks{marks: map[string]store.TopicMark{}},
		clock:   newFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
		locks:   connlock.New(func() {}),
		faults:  map[faults.Point]error{},
	}
	for _, c := range conns {
		w.conns.conns[c.Name] = c
	}
	w.svc = New(w.config())
	return w
}

func (w *world) config() Config {
	return Config{
		GroupID: "sluice", OffsetsTopic: "sluice-offsets", ClusterID: "cluster-1",
		AgentLease: 10 * time.Second, TaskShutdownTimeout: 5 * time.Second,
		Term:       func() int64 { return 7 },
		Connectors: w.conns, Locks: w.locks, Plugins: w.plugins, Hosts: w.hosts, Agents: w.agents,
		RPC: w.rpc, Reader: w.kafka, History: w.hist, Marks: w.marks,
		Reserved:  func() map[string]string { return map[string]string{"sluice-configs": "Sluice's config topic"} },
		MayCreate: func(string) error { return nil },
		Principal: func(context.Context) string { return "alice" },
		Faults:    faults.Func(func(_ context.Context, at faults.Point, _ any) error { return w.faults[at] }),
		Clock:     w.clock,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// stopped is a STOPPED connector of class.
func stopped(name, class string, extra ...string) store.Connector {
	cfg := map[string]string{"connector.class": class, "tasks.max": "2"}
	for i := 0; i+1 < len(extra); i += 2 {
		cfg[extra[i]] = extra[i+1]
	}
	return store.Connector{Name: name, Config: cfg, TargetState: records.TargetStopped}
}

// part is a source partition {"file": f}; off is the offset {"pos": n},
// nil for none.
func part(f string) map[string]any { return map[string]any{"file": f} }

func off(n int) map[string]any { return map[string]any{"pos": n} }
