package reconciler

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/agentrpc"
	"github.com/sluice-io/sluice/coordinator/internal/instances"
	"github.com/sluice-io/sluice/coordinator/internal/scheduler"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/labels"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// The fakes below stand for Kafka, NATS and the herder: the reconciler's
// ports, each a map under a mutex.

// fakeClock is a clock moved by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// fakeListener records what the reconciler tells the rest.
type fakeListener struct {
	mu         sync.Mutex
	gone       []string
	joined     int
	registered []string
	events     []wire.PluginConnectorEvent
}

func (l *fakeListener) AgentsGone(ids []string) {
	l.mu.Lock()
	l.gone = append(l.gone, ids...)
	l.mu.Unlock()
}
func (l *fakeListener) HostAgentJoined() { l.mu.Lock(); l.joined++; l.mu.Unlock() }
func (l *fakeListener) Registered(id string) {
	l.mu.Lock()
	l.registered = append(l.registered, id)
	l.mu.Unlock()
}
func (l *fakeListener) ConnectorEvent(ev wire.PluginConnectorEvent) {
	l.mu.Lock()
	l.events = append(l.events, ev)
	l.mu.Unlock()
}

func (l *fakeListener) goneIDs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.gone)
}

// fakeRPC is the agents: it records revokes and assigns and answers as
// told.
type fakeRPC struct {
	mu       sync.Mutex
	revokes  map[string][]api.TaskID
	assigns  map[string][]wire.TaskAssignment
	refuse   map[api.TaskID]bool
	failWith map[string]error // agent → error of every assign
	revErr   error
	assigned chan struct{}
}

func newRPC() *fakeRPC {
	return &fakeRPC{revokes: map[string][]api.TaskID{}, assigns: map[string][]wire.TaskAssignment{}, refuse: map[api.TaskID]bool{},
		failWith: map[string]error{}, assigned: make(chan struct{}, 100)}
}

func (f *fakeRPC) Revoke(ctx context.Context, agent string, req wire.RevokeRequest) (wire.RevokeReply, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.revErr != nil {
		return wire.RevokeReply{}, f.revErr
	}
	f.revokes[agent] = append(f.revokes[agent], req.Tasks...)
	return wire.RevokeReply{Stopped: req.Tasks}, nil
}

func (f *fakeRPC) Assign(ctx context.Context, agent string, term, issued int64, tasks []wire.TaskAssignment) ([]api.TaskID, []agentrpc.AssignFailure) {
	f.mu.Lock()
	defer func() { f.mu.Unlock(); f.assigned <- struct{}{} }()
	if err := f.failWith[agent]; err != nil {
		return nil, []agentrpc.AssignFailure{{Tasks: tasks, Err: err}}
	}
	var refused []api.TaskID
	for _, a := range tasks {
		if f.refuse[a.ID] {
			refused = append(refused, a.ID)
			continue
		}
		f.assigns[agent] = append(f.assigns[agent], a)
	}
	return refused, nil
}

func (f *fakeRPC) assignedTo(agent string) []wire.TaskAssignment {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.assigns[agent])
}

func (f *fakeRPC) revokedOn(agent string) []api.TaskID {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.revokes[agent])
}

// fakeStatuses is the status topic: the store's own state, to which
// every written record is applied at once.
type fakeStatuses struct {
	*store.StatusState
	mu     sync.Mutex
	writes []records.Record
}

func newStatuses() *fakeStatuses { return &fakeStatuses{StatusState: store.NewStatusState()} }

func (s *fakeStatuses) setTask(conn string, task int, st store.InstanceStatus) {
	_ = s.write(context.Background(), records.Record{Key: records.TaskStatusKey(conn, task), Value: records.EncodeStatus(st.State, st.Trace, st.WorkerID, st.Generation)})
}

// write is the status queue's writer: it applies records as the topic would.
func (s *fakeStatuses) write(ctx context.Context, recs ...records.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range recs {
		rec, err := records.DecodeStatus(r.Key, r.Value)
		if err != nil {
			return err
		}
		s.Apply(rec)
	}
	s.writes = append(s.writes, recs...)
	return nil
}

// fakeFleet is the agents' marks.
type fakeFleet struct {
	mu    sync.Mutex
	marks map[string]store.AgentMark
}

func (f *fakeFleet) Agents() map[string]store.AgentMark {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.marks)
}

// fakeConnectors are the committed connectors and the writes of a pass.
type fakeConnectors struct {
	mu       sync.Mutex
	conns    map[string]store.Connector
	source   map[string]bool
	locked   map[string]bool
	fenced   []string
	fenceErr error
	changed  chan struct{}
}

func newConnectors(cs ...store.Connector) *fakeConnectors {
	f := &fakeConnectors{conns: map[string]store.Connector{}, source: map[string]bool{}, locked: map[string]bool{}, changed: make(chan struct{})}
	for _, c := range cs {
		f.conns[c.Name] = c
	}
	return f
}

func (f *fakeConnectors) All() []store.Connector {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []store.Connector
	for _, n := range slices.Sorted(maps.Keys(f.conns)) {
		out = append(out, f.conns[n])
	}
	return out
}
func (f *fakeConnectors) Get(name string) (store.Connector, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.conns[name]
	return c, ok
}
func (f *fakeConnectors) Changed() <-chan struct{} { return f.changed }
func (f *fakeConnectors) Shape(c store.Connector) Shape {
	f.mu.Lock()
	defer f.mu.Unlock()
	return Shape{Source: f.source[c.Name]}
}
func (f *fakeConnectors) SchedulerTask(id api.TaskID) (scheduler.Task, bool) {
	c, ok := f.Get(id.Connector)
	if !ok {
		return scheduler.Task{ID: id}, true
	}
	sel, err := labels.Parse(c.Config[labels.SelectorKey])
	if err != nil {
		return scheduler.Task{ID: id}, false
	}
	return scheduler.Task{ID: id, Selector: sel}, true
}
func (f *fakeConnectors) ReservedTopics([]store.Connector) map[string]string { return nil }
func (f *fakeConnectors) TryLock(name string) (func(), bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.locked[name] {
		return nil, false
	}
	return func() {}, true
}
func (f *fakeConnectors) PutTaskConfigs(ctx context.Context, name string, tasks []map[string]string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.conns[name]
	c.Tasks = tasks
	f.conns[name] = c
	return nil
}
func (f *fakeConnectors) PutFencingCount(ctx context.Context, name string, count int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.conns[name]
	c.FencingCount = count
	f.conns[name] = c
	return nil
}
func (f *fakeConnectors) Fence(ctx context.Context, c store.Connector) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fenceErr != nil {
		return f.fenceErr
	}
	f.fenced = append(f.fenced, c.Name)
	return nil
}
func (f *fakeConnectors) BeforePass(context.Context) {}

// fakeInstances are connector instances that computed the committed task
// configs already (or those set in computed).
type fakeInstances struct {
	mu       sync.Mutex
	computed map[string][]map[string]string
	synced   []instances.Connector
}

func (f *fakeInstances) Sync(conns []instances.Connector) {
	f.mu.Lock()
	f.synced = conns
	f.mu.Unlock()
}
func (f *fakeInstances) TaskConfigs(name string) (instances.TaskSet, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ts, ok := f.computed[name]
	if !ok {
		return instances.TaskSet{}, false
	}
	return instances.TaskSet{Configs: ts, Current: true}, true
}
func (f *fakeInstances) Changed() <-chan struct{} { return make(chan struct{}) }

// world is a reconciler on fakes.
type world struct {
	r        *Reconciler
	clock    *fakeClock
	rpc      *fakeRPC
	statuses *fakeStatuses
	fleet    *fakeFleet
	conns    *fakeConnectors
	inst     *fakeInstances
	listener *fakeListener
	stop     func()
}

// newWorld makes a reconciler leading term 1 on fakes, with connectors cs,
// its status queue running until the test ends.
func newWorld(t interface{ Cleanup(func()) }, cs ...store.Connector) *world {
	return newWorldWith(t, nil, cs...)
}

// newWorldWith is newWorld with its config changed by change (nil: as is)
// and its status topic holding statuses (connector → task → status) when
// its term is established.
func newWorldWith(t interface{ Cleanup(func()) }, change func(*Config, *fakeStatuses), cs ...store.Connector) *world {
	w := &world{clock: newClock(), rpc: newRPC(), statuses: newStatuses(), fleet: &fakeFleet{marks: map[string]store.AgentMark{}},
		conns: newConnectors(cs...), inst: &fakeInstances{computed: map[string][]map[string]string{}}, listener: &fakeListener{}}
	cfg := Config{GroupID: "g", WorkerID: "coord:8083", AgentLease: 10 * time.Second, TaskShutdownTimeout: time.Second,
		Term: func() int64 { return 1 }, RPC: w.rpc, Statuses: w.statuses, Fleet: w.fleet, Connectors: w.conns, Listener: w.listener,
		Clock: w.clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if change != nil {
		change(&cfg, w.statuses)
	}
	w.r = New(cfg)
	w.r.Establish()
	_, stop := w.r.status.Start(context.Background(), w.statuses.write)
	w.stop = stop
	t.Cleanup(stop)
	return w
}

// ep are the world's agent endpoints.
func (w *world) ep() endpoints { return endpoints{w.r} }
