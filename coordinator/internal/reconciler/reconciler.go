// Package reconciler is the leader component that places tasks on agents:
// it owns the agent registry, the placements, presence probing, liveness
// beats, assignment slots and task moves, runs the reconcile loop (plan,
// revoke, assign, task statuses) and serves the agents' endpoints of a term.
//
//	config change / agent report / lease tick ─► Pass ─► desired tasks (Connectors)
//	  ─► planner.Plan on the agents and placements of one instant
//	  ─► revokes and assigns over AgentRPC ─► task statuses on the status queue
//
// Its parts: Table (table.go, moves.go) is what the leader knows of its
// agents and their tasks, behind one mutex, every decision taking its time
// as an argument; StatusWriter (status.go) is the term's status queue;
// Reconciler drives them — the loop and its Pass (pass.go), the agent
// endpoints (agents.go), presence probes (presence.go) and liveness beats
// (liveness.go). Fleet controllers (fleet/drain, fleet/rebalance) read a
// Snapshot and ask for a task to move with Move; the rest of the
// coordinator reads the Table, and none touches the registry or the
// placements otherwise.
//
// Locks: the Table's mutex is never held while another lock is taken, nor
// across I/O; the ports (Connectors, Fleet, Statuses) are called outside
// it. The status queue and the watchers' list have locks of their own,
// never nested with it.
package reconciler

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/agentrpc"
	"github.com/sluice-io/sluice/coordinator/internal/instances"
	"github.com/sluice-io/sluice/coordinator/internal/metrics"
	"github.com/sluice-io/sluice/coordinator/internal/scheduler"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/logthrottle"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// Clock tells the time. Every decision of the reconciler reads it here, so
// that tests move time by hand.
type Clock interface{ Now() time.Time }

// RealClock is the wall clock.
type RealClock struct{}

// Now implements Clock.
func (RealClock) Now() time.Time { return time.Now() }

// AgentRPC is how the reconciler commands agents (agentrpc.Client in
// production).
type AgentRPC interface {
	// Revoke stops tasks on an agent and answers which stopped.
	Revoke(ctx context.Context, agent string, req wire.RevokeRequest) (wire.RevokeReply, error)
	// Assign sends assignments; it answers which the agent refused (a
	// revoke overtook them) and which requests failed.
	Assign(ctx context.Context, agent string, term, issued int64, tasks []wire.TaskAssignment) (refused []api.TaskID, failed []agentrpc.AssignFailure)
}

// Statuses is the status topic as the leader read it (store.StatusState).
type Statuses interface {
	Connector(name string) (store.InstanceStatus, bool)
	Task(name string, task int) (store.InstanceStatus, bool)
	TaskIDs(name string) []int
	Topics(name string) []string
	MaxGeneration() int64
	TaskOwners() map[string]map[int]store.InstanceStatus
}

// Fleet is the fleet topic's agent marks (store.FleetState): a marked
// agent (cordoned or draining) takes no new task.
type Fleet interface {
	Agents() map[string]store.AgentMark
}

// Instances are the leadership's connector instances (instances.Manager).
type Instances interface {
	Sync(conns []instances.Connector)
	TaskConfigs(name string) (instances.TaskSet, bool)
	Changed() <-chan struct{}
}

// Shape is what placing a connector's tasks needs beyond its config.
type Shape struct {
	// Plugin is how placement names the connector's plugin; empty when
	// nobody has it.
	Plugin string
	// Policy is the tenant's rules the tasks run under (nil: none).
	Policy *wire.TenantPolicy
	// Source: the connector is a source (exactly-once fencing applies).
	Source bool
	// PluginVersion, when set, is the Java plugin version the tasks run
	// (the one the config resolved to when written): the agents get it
	// as the connector's connector.plugin.version, in place of the
	// range or keyword the config may have, so that every agent's host
	// loads that version.
	PluginVersion string
}

// Connectors is the connectors' side as the reconciler needs it: their
// committed configs, how to place them, and the writes a pass makes.
type Connectors interface {
	// All are the committed connectors; Get one of them; Changed closes
	// on the next change.
	All() []store.Connector
	Get(name string) (store.Connector, bool)
	Changed() <-chan struct{}
	// Shape says how c's tasks are placed and run.
	Shape(c store.Connector) Shape
	// SchedulerTask is task id as the scheduler sees it; ok is false for a
	// task that is placed nowhere (a selector that does not parse).
	SchedulerTask(id api.TaskID) (scheduler.Task, bool)
	// ReservedTopics are the topics no task of conns may touch.
	ReservedTopics(conns []store.Connector) map[string]string
	// TryLock takes connector name's lock unless a request holds it.
	TryLock(name string) (unlock func(), ok bool)
	// PutTaskConfigs and PutFencingCount write the config topic.
	PutTaskConfigs(ctx context.Context, name string, tasks []map[string]string) error
	PutFencingCount(ctx context.Context, name string, count int) error
	// Fence fences every transactional id an earlier generation of c's
	// tasks may hold.
	Fence(ctx context.Context, c store.Connector) error
	// BeforePass runs first in every pass (the leader writer's check).
	BeforePass(ctx context.Context)
}

// Listener hears what the reconciler learns that concerns the rest of the
// leadership: the host of Java connectors, and the log levels' pusher.
type Listener interface {
	// AgentsGone: agents left or were taken for lost.
	AgentsGone(ids []string)
	// HostAgentJoined: an agent with Java plugins registered or changed them.
	HostAgentJoined()
	// Registered: an agent registered.
	Registered(id string)
	// ConnectorEvent: a Java connector's event from an agent's host.
	ConnectorEvent(ev wire.PluginConnectorEvent)
}

// Config configures a Reconciler.
type Config struct {
	GroupID  string
	WorkerID string
	Version  string
	// AgentLease is how long an agent not heard from keeps its tasks.
	AgentLease time.Duration
	// AgentProbe is how often each agent's presence is probed; 0: never.
	AgentProbe time.Duration
	// PlacementSettle is how long a start holds the tasks no agent ever
	// ran after its first agent registered, so that agents starting
	// together share them (startup.go); 0: they are placed at once.
	PlacementSettle     time.Duration
	TaskShutdownTimeout time.Duration
	// LivenessTopic is told to agents as they register (empty: no beats).
	LivenessTopic string
	// ExactlyOnce: fence source tasks before a new task count runs.
	ExactlyOnce bool
	// DialNATS opens a connection of a term's own for its endpoints (nil:
	// NATS serves them on NC).
	DialNATS func(name string) (*nats.Conn, error)
	// NC is the coordinator's NATS connection (probes, endpoints).
	NC *nats.Conn
	// Term is the current leadership term (0 while following).
	Term func() int64

	RPC        AgentRPC
	Statuses   Statuses
	Fleet      Fleet
	Connectors Connectors
	Listener   Listener
	// Prober probes presence; nil: NATS requests on NC.
	Prober  Prober
	Clock   Clock
	Metrics *metrics.Metrics
	Logger  *slog.Logger
	// Faults is asked at faults.StatusWrite before each status batch is
	// written (nil: never).
	Faults faults.Injector
}

// Reconciler is the leader's placement of tasks on agents.
type Reconciler struct {
	cfg   Config
	log   *slog.Logger
	clock Clock

	// table is what the leader knows of its agents and their tasks.
	table *Table
	// status writes the term's statuses.
	status *StatusWriter

	// lastBeat is when the leader last read an agent's liveness beat (Unix
	// nanoseconds).
	lastBeat atomic.Int64
	// watchers are woken when a move ends; watchMu guards the list alone.
	watchMu  sync.Mutex
	watchers []chan struct{}
	kick     chan struct{}
	warn     *logthrottle.Limiter
	// assigning holds the agents an assignment is in flight to: agent id
	// → *assignSlot.
	assigning sync.Map
	// assignStopped: no assignment is sent again (StopAssigning).
	assignStopped atomic.Bool
}

// New makes a Reconciler that follows; Establish starts a term.
func New(cfg Config) *Reconciler {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = RealClock{}
	}
	if cfg.Term == nil {
		cfg.Term = func() int64 { return 0 }
	}
	if cfg.Prober == nil && cfg.NC != nil {
		cfg.Prober = natsProber{nc: cfg.NC, group: cfg.GroupID}
	}
	return &Reconciler{cfg: cfg, log: cfg.Logger, clock: cfg.Clock, kick: make(chan struct{}, 1), warn: logthrottle.New(warnEvery),
		table: NewTable(cfg.AgentLease, cfg.PlacementSettle), status: &StatusWriter{topic: cfg.Statuses, log: cfg.Logger, faults: cfg.Faults}}
}

func (r *Reconciler) now() time.Time { return r.clock.Now() }

// presence is the reconciler's presence prober.
func (r *Reconciler) presence() presence { return presence{r} }

// Establish starts a term: it forgets the last term's agents and presumes
// that the agents named in the status topic still run their tasks, so a
// new leader neither marks them unassigned nor places them elsewhere
// before those agents had a chance to report; and that the agents that last
// ran the tasks it shows unassigned may come back (startup.go), so those
// tasks go back to them rather than to the first agent to register.
func (r *Reconciler) Establish() {
	r.table.Reset()
	running, returning := owners(r.cfg.Statuses.TaskOwners(), r.cfg.Connectors.Get)
	r.table.Presume(running, returning, r.cfg.Statuses.MaxGeneration(), r.now())
}

// owners are the task owners the status topic names: the agents of the
// tasks it says run, are paused or failed there; and, sorted, the agents
// that last ran the tasks it shows unassigned, of connectors that are not
// stopped (get), which no agent runs now.
func owners(byConnector map[string]map[int]store.InstanceStatus, get func(string) (store.Connector, bool)) (map[api.TaskID]Owner, []string) {
	out := map[api.TaskID]Owner{}
	last := map[string]bool{}
	for conn, tasks := range byConnector {
		c, ok := get(conn)
		for n, st := range tasks {
			switch {
			case st.State == api.StateRunning || st.State == api.StatePaused || st.State == api.StateFailed:
				out[api.TaskID{Connector: conn, Task: n}] = Owner{Agent: st.WorkerID, Generation: st.Generation}
			case st.State == api.StateUnassigned && st.WorkerID != "" && ok && c.TargetState != records.TargetStopped && n < len(c.Tasks):
				last[st.WorkerID] = true
			}
		}
	}
	return out, slices.Sorted(maps.Keys(last))
}

// Revoke ends a term: it forgets the agents, placements and moves.
func (r *Reconciler) Revoke() { r.table.Reset() }

// Table is what the leader knows of its agents and their tasks.
func (r *Reconciler) Table() *Table { return r.table }

// Status is the term's status writer.
func (r *Reconciler) Status() *StatusWriter { return r.status }

// RestartTasks gives tasks a new generation, so their agents restart them.
func (r *Reconciler) RestartTasks(ids []api.TaskID) {
	r.table.Restart(ids)
	r.Trigger()
}

// Trigger asks the reconcile loop for a pass.
func (r *Reconciler) Trigger() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// StopAssigning makes the reconciler send no more assignments, for as long
// as it runs (sluice dev stopping a whole cluster in one process).
func (r *Reconciler) StopAssigning() { r.assignStopped.Store(true) }

// Run runs the term's loops — the presence probes and the reconcile loop
// over the connector instances m — until ctx ends. The leadership starts
// the status queue and the agent endpoints first (StartStatusQueue,
// ServeAgents), since the instances it builds write to the queue.
func (r *Reconciler) Run(ctx context.Context, m Instances) {
	presence := make(chan struct{})
	go func() { defer close(presence); r.presence().loop(ctx) }()
	defer func() { <-presence }()
	r.reconcileLoop(ctx, m)
}
