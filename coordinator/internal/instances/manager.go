// Package instances owns the coordinator's connector instances: one started
// plugin Connector per connector, so that task configs are computed when
// they can change rather than on every reconcile pass, and a connector that
// asks its source system how to split the work does not ask on every
// heartbeat.
//
// The herder says what it wants with Sync (every connector, its config and
// target state) and Restart. Each connector has a worker goroutine of its
// own that makes it so through a Host, so a plugin that hangs holds up only
// itself, never the caller. The herder reads the results with TaskConfigs,
// is woken by Changed when there are new ones, and learns the instance's
// state through Config.OnStatus.
//
//	Sync STARTED ─► Start ──ok──► TaskConfigs ──ok──► RUNNING: publish task configs, close Changed
//	                  │ error        │ error ▲             │
//	                  ▼              ▼       │             ├─ RequestTaskReconfiguration ─► TaskConfigs
//	        FAILED; Start again   FAILED; TaskConfigs      ├─ config change, Restart ─► Stop ─► Start
//	        after the backoff     again after the backoff  ├─ RaiseError ─► Stop ─► FAILED until a
//	                              (last good task configs  │     Restart, a config change or a resume
//	                               stay published); or,    └─ PAUSED, STOPPED ─► Stop; task configs kept
//	                              refused by CheckTasks:      deleted, Close ─► Stop; the worker ends
//	                              Stop ─► FAILED as after RaiseError
//
// Task configs are recomputed only when an instance starts (the first time,
// after a config change, a restart or a resume) and when the connector
// itself calls RequestTaskReconfiguration. A failing Start or TaskConfigs is
// retried with exponential backoff (Config.InitialBackoff, doubling up to
// Config.MaxBackoff) and reported FAILED with the error as its trace; the
// last good task configs stay published meanwhile, so running tasks are not
// disturbed, and RUNNING is reported once a retry succeeds. An error the
// connector raises itself is not retried: like Kafka Connect's, the
// connector stays FAILED until it is restarted. As in Kafka Connect, a
// paused connector's instance is stopped and a resume starts a new one.
//
// The per-instance operations sit behind Host, keyed by connector name.
// LocalHost runs plugins in the coordinator; for plugins that must not run
// there, a Host that sends Start, TaskConfigs and Stop to an agent over NATS
// (and relays the connector's requests back to the ConnectorContext) fits
// in without changing the Manager.
package instances

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"
)

// Connector is one connector as the herder wants it.
type Connector struct {
	Name   string
	Config map[string]string
	// TargetState is records.TargetStarted, TargetPaused or TargetStopped.
	TargetState string
}

// Status is the state of a connector's instance, for the status topic.
type Status struct {
	// State is v1.StateRunning, StateFailed, StatePaused or StateStopped.
	State string
	// Trace is a FAILED state's error.
	Trace string
}

// TaskSet is the latest task configs computed for a connector.
type TaskSet struct {
	// Configs are the task configs, finished as Kafka Connect finishes them
	// (task.class, a sink's topics).
	Configs []map[string]string
	// Version is the same for the same Configs and grows whenever a
	// connector's Configs change; it never repeats across connectors, so a
	// connector deleted and created again never shows an old version.
	Version int64
	// Current says Configs were computed from the config of the latest
	// Sync. It is false while the connector's new config has no task
	// configs yet (its start is pending or failing); Configs are then the
	// last good ones, from an earlier config.
	Current bool
}

// Config configures a Manager.
type Config struct {
	// Host runs the instances.
	Host Host
	// OnStatus, when set, is told every change of an instance's state. It
	// is called from the connector's worker, in order for one connector and
	// concurrently for different ones; while it runs that connector's
	// lifecycle waits, no other's.
	OnStatus func(name string, st Status)
	// InitialBackoff is the wait before the first retry of a failed Start
	// or TaskConfigs (default 1s); each further failure doubles it, up to
	// MaxBackoff (default 1m).
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// AfterFunc schedules a retry; nil means time.AfterFunc. Tests pass a
	// fake clock's to step through the backoff without waiting.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	// CheckTasks, when set, vets a connector's finished task configs before
	// they are published. An error (task configs that cannot be stored)
	// fails the connector with the error as its trace, and it stays FAILED
	// until a restart, a config change or a new target state: a retry would
	// compute the same task configs and be refused again.
	CheckTasks func(name string, tasks []map[string]string) error
	// Prepare, when set, readies what a connector's config needs outside
	// the plugin, once per config and whatever the target state (Kafka
	// Connect creates a connector's own offsets topic even for a stopped
	// one). An error fails the connector with it as its trace, retried
	// with the backoff.
	Prepare func(ctx context.Context, name string, config map[string]string) error
	Logger  *slog.Logger
}

// Validate checks the config and fills in the defaults.
func (c *Config) Validate() error {
	if c.Host == nil {
		return errors.New("instances: a Host is required")
	}
	if c.InitialBackoff < 0 || c.MaxBackoff < 0 {
		return errors.New("instances: backoffs must not be negative")
	}
	if c.InitialBackoff == 0 {
		c.InitialBackoff = time.Second
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = time.Minute
	}
	if c.MaxBackoff < c.InitialBackoff {
		return fmt.Errorf("instances: MaxBackoff %v is below InitialBackoff %v", c.MaxBackoff, c.InitialBackoff)
	}
	if c.AfterFunc == nil {
		c.AfterFunc = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	if c.OnStatus == nil {
		c.OnStatus = func(string, Status) {}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// Manager holds one instance per started connector. It is safe for
// concurrent use; none of its methods waits on plugin code except Close.
type Manager struct {
	cfg Config
	// ctx is given to every Host call; Close cancels it when it gives up
	// waiting, so that a remote host's calls end too.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	conns   map[string]*instance
	version int64 // the last TaskSet.Version handed out
	epoch   int64 // the last instance epoch handed out
	changed chan struct{}
	closing bool
}

// instance is what the herder and the connector want of one connector's
// worker, and what the worker published. Every field is guarded by
// Manager.mu; the worker's own state is in worker.
type instance struct {
	name string
	wake chan struct{} // capacity 1: pending work, however many reasons

	config      map[string]string
	target      string
	deleted     bool
	restarts    int64
	reconfigure bool
	raised      error
	// lost: the running instance is gone with its host; start it again.
	lost bool
	// live is the epoch of the running plugin instance (0: none); the
	// ConnectorContext of an older one is ignored.
	live int64
	// retryDue is the number of the retry whose timer fired.
	retryDue int64
	// pending says a poke is not taken yet (wake may already be drained
	// by a worker that has not locked since); parked says the worker
	// waits for wake. Parked and not pending, the worker is idle.
	pending, parked bool

	published bool
	tasks     []map[string]string
	version   int64
	tasksFor  map[string]string // the config tasks were computed from
}

// poke wakes the worker; the caller holds Manager.mu.
func (in *instance) poke() {
	in.pending = true
	select {
	case in.wake <- struct{}{}:
	default: // already pending: the worker reads the latest state anyway
	}
}

// New returns a Manager with no connectors.
func New(cfg Config) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{cfg: cfg, ctx: ctx, cancel: cancel, conns: map[string]*instance{}, changed: make(chan struct{})}, nil
}

// Sync sets the connectors the herder wants: every connector, in any
// target state. A connector left out is deleted: its instance is stopped.
// Only what changed wakes a worker, so calling Sync on every reconcile pass
// with the same input costs no plugin call. Sync after Close does nothing.
func (m *Manager) Sync(conns []Connector) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closing {
		return
	}
	want := make(map[string]bool, len(conns))
	for _, c := range conns {
		want[c.Name] = true
		in := m.conns[c.Name]
		if in == nil {
			in = &instance{name: c.Name, wake: make(chan struct{}, 1)}
			m.conns[c.Name] = in
			m.wg.Add(1)
			go (&worker{m: m, in: in}).run()
		}
		if in.deleted {
			// Deleted and created again before the worker got to stop
			// it: a new connector, whose instance must start afresh
			// even if the config is the same.
			in.restarts++
			in.published, in.tasks, in.tasksFor = false, nil, nil
		}
		if in.deleted || in.target != c.TargetState || !maps.Equal(in.config, c.Config) {
			in.deleted, in.target, in.config = false, c.TargetState, maps.Clone(c.Config)
			in.poke()
		}
	}
	for name, in := range m.conns {
		if !want[name] && !in.deleted {
			in.deleted = true
			in.poke()
		}
	}
}

// Restart stops the connector's instance and starts a new one, which
// computes its task configs again; a FAILED connector is started at once,
// without waiting out its backoff. A connector that is not STARTED has no
// instance to restart, but its state is reported again (the herder shows
// RESTARTING meanwhile). It reports false for a connector Sync did not
// give.
func (m *Manager) Restart(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	in := m.conns[name]
	if in == nil || in.deleted || m.closing {
		return false
	}
	in.restarts++
	in.poke()
	return true
}

// TaskConfigs returns a copy of the latest task configs computed for the
// connector, and false when there are none yet (never started, or every
// start so far failed) or the connector is not known.
func (m *Manager) TaskConfigs(name string) (TaskSet, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	in := m.conns[name]
	if in == nil || in.deleted || !in.published {
		return TaskSet{}, false
	}
	configs := make([]map[string]string, len(in.tasks))
	for i, tc := range in.tasks {
		configs[i] = maps.Clone(tc)
	}
	return TaskSet{Configs: configs, Version: in.version, Current: maps.Equal(in.tasksFor, in.config)}, true
}

// Changed returns a channel closed at the next change of what TaskConfigs
// answers: a connector got new task configs, or its task configs became
// current again. (A Sync that makes them stale is the caller's own doing
// and closes nothing.)
func (m *Manager) Changed() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changed
}

// Close stops every instance and waits, until ctx ends, for their workers
// to finish. A plugin stuck in a call keeps its worker past ctx; Close then
// returns ctx's error.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closing = true
	for _, in := range m.conns {
		in.poke()
	}
	m.mu.Unlock()
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		close(done)
	}()
	defer m.cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stopping connector instances: %w", ctx.Err())
	}
}

// publish makes tasks, computed from config, the connector's task configs.
func (m *Manager) publish(in *instance, tasks []map[string]string, config map[string]string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	wasCurrent := in.published && maps.Equal(in.tasksFor, in.config)
	changed := !in.published || !equalTasks(in.tasks, tasks)
	if changed {
		m.version++
		in.published, in.tasks, in.version = true, tasks, m.version
	}
	in.tasksFor = config
	if changed || !wasCurrent && maps.Equal(in.tasksFor, in.config) {
		close(m.changed)
		m.changed = make(chan struct{})
	}
}

// retire removes a deleted connector's instance once its worker stopped
// it. It reports false when Sync gave the connector again meanwhile: the
// worker then carries on.
func (m *Manager) retire(in *instance) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !in.deleted && !m.closing {
		return false
	}
	if m.conns[in.name] == in {
		delete(m.conns, in.name)
	}
	return true
}

func equalTasks(a, b []map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !maps.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
