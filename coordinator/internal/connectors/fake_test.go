package connectors

import (
	"context"
	"maps"
	"sync"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect/clientoverrides"
	"github.com/sluice-io/sluice/connect/file"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/coordinator/internal/connlock"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// The fakes: the real config state and command encoding (store.Memory),
// and recorders for what the service asks of the rest.

// fixture is a service over fakes, and what they saw.
type fixture struct {
	s        *Service
	mem      *store.Memory
	writer   *memWriter
	agents   *fakeAgents
	statuses *fakeStatuses
	runner   *fakeRunner
	offsets  *fakeOffsets
}

// newFixture makes a service over fakes; edit changes its Config first.
func newFixture(t *testing.T, edit ...func(*Config)) *fixture {
	t.Helper()
	mem := store.NewMemory()
	f := &fixture{mem: mem, writer: &memWriter{Memory: mem}, agents: &fakeAgents{}, statuses: newFakeStatuses(mem.Status),
		runner: &fakeRunner{}, offsets: &fakeOffsets{}}
	overrides, err := clientoverrides.ParsePolicy(clientoverrides.PolicyAllowlist, clientoverrides.DefaultAllowlist)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		WorkerID: "coordinator-1:8083", GroupID: "sluice", OffsetsTopic: "sluice-offsets",
		ReservedTopics: map[string]string{"sluice-configs": "Sluice's config topic", "sluice-offsets": "Sluice's offsets topic"},
		Overrides:      overrides, Term: func() int64 { return 7 },
		Registry: plugins.Builtin(), Configs: mem.Config, Writer: f.writer, Locks: connlock.New(nil), Agents: f.agents,
		RPC: fakeRPC{}, Statuses: f.statuses, Runner: f.runner, Offsets: f.offsets,
	}
	for _, e := range edit {
		e(&cfg)
	}
	f.s = New(cfg)
	return f
}

// create puts a connector in the config state, as a write would.
func (f *fixture) create(t *testing.T, name string, config map[string]string, target string) {
	t.Helper()
	config = maps.Clone(config)
	config["name"] = name
	if err := f.mem.Apply(context.Background(), store.CreateConnector{Name: name, Config: config, TargetState: target}); err != nil {
		t.Fatal(err)
	}
}

func sourceConfig(topic string) map[string]string {
	return map[string]string{"connector.class": file.SourceClass, "file": "/tmp/in.txt", "topic": topic}
}

func sinkConfig(topics string) map[string]string {
	return map[string]string{"connector.class": file.SinkClass, "file": "/tmp/out.txt", "topics": topics}
}

// memWriter is store.Memory with a size check, and failures to inject.
type memWriter struct {
	*store.Memory
	// check answers Check (nil: every command fits).
	check func(cmds []store.Command) error
	// applied counts the calls of Apply.
	applied int
}

func (w *memWriter) Apply(ctx context.Context, cmds ...store.Command) error {
	w.applied++
	return w.Memory.Apply(ctx, cmds...)
}

func (w *memWriter) Check(_ context.Context, cmds ...store.Command) error {
	if w.check != nil {
		return w.check(cmds)
	}
	return nil
}

// fakeAgents are the agents the leader knows.
type fakeAgents struct {
	agents []registry.Agent
	live   map[string]api.PluginInfo
	host   map[registry.PluginKey]api.PluginInfo
	known  map[registry.PluginKey]api.PluginInfo
}

func (a *fakeAgents) Agents() []registry.Agent                           { return a.agents }
func (a *fakeAgents) Plugins() map[string]api.PluginInfo                 { return a.live }
func (a *fakeAgents) HostPlugins() map[registry.PluginKey]api.PluginInfo { return a.host }
func (a *fakeAgents) KnownHostPlugins() map[registry.PluginKey]api.PluginInfo {
	if a.known == nil {
		return a.host
	}
	return a.known
}

// fakeRPC answers no agent.
type fakeRPC struct{}

func (fakeRPC) Connector(context.Context, string, wire.PluginConnectorRequest) (wire.PluginConnectorReply, error) {
	return wire.PluginConnectorReply{}, api.Errorf(api.CodeUnavailable, "no agent in this test")
}

// fakeStatuses reads a status state and records the writes.
type fakeStatuses struct {
	state   *store.StatusState
	mu      sync.Mutex
	written []records.Record
	fail    error
}

func newFakeStatuses(st *store.StatusState) *fakeStatuses { return &fakeStatuses{state: st} }

func (s *fakeStatuses) Connector(name string) (store.InstanceStatus, bool) {
	return s.state.Connector(name)
}
func (s *fakeStatuses) Task(name string, task int) (store.InstanceStatus, bool) {
	return s.state.Task(name, task)
}
func (s *fakeStatuses) TaskIDs(name string) []int { return s.state.TaskIDs(name) }
func (s *fakeStatuses) Stored(name string, task int) (store.InstanceStatus, bool) {
	return s.state.Task(name, task)
}
func (s *fakeStatuses) Topics(name string) []string { return s.state.Topics(name) }
func (s *fakeStatuses) Write(_ context.Context, recs ...records.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.written = append(s.written, recs...)
	return s.fail
}

// fakeRunner records the reconciler's and instances' calls.
type fakeRunner struct {
	triggers  int
	tasks     []api.TaskID
	instances []string
}

func (r *fakeRunner) Trigger()                      { r.triggers++ }
func (r *fakeRunner) RestartTasks(ids []api.TaskID) { r.tasks = append(r.tasks, ids...) }
func (r *fakeRunner) RestartInstance(name string)   { r.instances = append(r.instances, name) }

// fakeOffsets is the offsets service of a delete.
type fakeOffsets struct {
	reset     []string
	forgotten []string
}

func (o *fakeOffsets) ResetThen(ctx context.Context, name string, then func(ctx context.Context) error) error {
	o.reset = append(o.reset, name)
	return then(ctx)
}
func (o *fakeOffsets) OwnTopic(config map[string]string) string {
	return config["offsets.storage.topic"]
}
func (o *fakeOffsets) ForgetTopic(_ context.Context, topic string) {
	o.forgotten = append(o.forgotten, topic)
}

// wantErr fails t unless err is a REST error of code whose message is msg
// (any message when msg is "").
func wantErr(t *testing.T, err error, code api.Code, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %d %q", code, msg)
	}
	e := api.AsError(err)
	if e.Code != code || msg != "" && e.Message != msg {
		t.Fatalf("error %d %q, want %d %q", e.Code, e.Message, code, msg)
	}
}
