// Package runtime runs an agent's tasks. A Worker holds one goroutine per
// assigned task; the coordinator's assign and revoke commands start, update,
// pause and stop them, and every state change is reported back.
//
//	Assign(gen N) ─► start ─► RUNNING ⇄ PAUSED ─► Revoke ─► final commit ─► clients closed ─► reply
//	                   └─► FAILED (error, or fenced by a newer owner) ── stays until revoked or reassigned
//
// Source tasks commit their offsets in a Kafka transaction under the task's
// transactional id; sink tasks commit in their consumer group.
package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/agent/internal/metrics"
	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/allowedpaths"
	"github.com/sluice-io/sluice/connect/configprovider"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/shared/kafkametrics"
	"github.com/sluice-io/sluice/shared/kafkasec"
	"github.com/sluice-io/sluice/shared/logthrottle"
	"github.com/sluice-io/sluice/shared/offsetstore"
	"github.com/sluice-io/sluice/shared/wire"
)

// Config configures a Worker.
type Config struct {
	AgentID string
	// GroupID prefixes transactional ids: <group>-<connector>-<task>.
	GroupID      string
	OffsetsTopic string
	WorkDir      string
	// FlushInterval is how often a running task commits its offsets.
	FlushInterval time.Duration
	// ExactlyOnce makes source tasks write records and offsets in one
	// transaction (--exactly-once-source-support=enabled).
	ExactlyOnce bool
	// SinkDynamicMembership makes sink tasks dynamic members of their
	// consumer groups, as Kafka Connect's are, instead of static ones
	// (sink_member.go): for brokers older than Kafka 2.4.
	SinkDynamicMembership bool
	// KeyConverter and ValueConverter are the worker-level converter classes.
	KeyConverter   string
	ValueConverter string
	// HeaderConverter is the worker-level header converter class ("":
	// SimpleHeaderConverter), for the headers Go transformations make.
	HeaderConverter string
	KafkaOpts       []kgo.Opt
	// Brokers and Security are what KafkaOpts were made of: a task whose
	// connector overrides its clients' credentials (sasl.jaas.config)
	// connects to the same brokers, with the same TLS, as another
	// principal.
	Brokers  string
	Security *kafkasec.Config
	// KafkaClients measures every Kafka client a task makes, each under a
	// client id of its own (nil: unmeasured).
	KafkaClients *kafkametrics.Clients
	// Metrics receives every task's series (nil: none).
	Metrics  *metrics.Agent
	Registry *plugins.Registry
	// Providers resolve the config providers' placeholders of a task's
	// configs just before it starts (nil: none are resolved).
	Providers *configprovider.Transformer
	// AllowedPaths confine the files tasks open (nil: anywhere).
	AllowedPaths *allowedpaths.Paths
	// Offsets are the worker's offsets topic and connectors' own.
	Offsets *offsetstore.Registry
	// Report receives every task state change; it must not block for long.
	Report func(wire.StatusReport)
	Logger *slog.Logger
	// BeforeOffsetCommit, when set, runs inside a source task's offset
	// transaction just before it commits: a seam for tests that hold a task
	// mid-commit.
	BeforeOffsetCommit func(ctx context.Context, id api.TaskID) error
	// Host makes the tasks of the connectors that run in the agent's
	// connector host, the Java plugins (nil: none do).
	Host HostTasks
	// MayRun reports whether the agent may still run its tasks (nil:
	// always): every task asks before each step, and one that may not
	// writes nothing until the agent stops it (agent/fence.go).
	MayRun func() bool
}

// HostTasks makes the tasks of connectors whose code runs outside the
// agent (docs/plugins.md): the runner drives them as it drives a Go task,
// and their records come and go as Kafka's bytes, so the runner makes no
// converters for them. A task that also has a method Err() error is
// failed with its answer, once not nil, at its next step: the process
// that ran it is gone.
type HostTasks interface {
	// TaskKind says whether the connector of the connector config runs in
	// the host, and whether it is a source or a sink.
	TaskKind(connectorConfig map[string]string) (connect.Kind, bool)
	// NewSourceTask and NewSinkTask make an unstarted task of such a
	// connector, of the kind TaskKind said.
	NewSourceTask(id api.TaskID, connectorConfig map[string]string) connect.SourceTask
	NewSinkTask(id api.TaskID, connectorConfig map[string]string) connect.SinkTask
	// Restartable reports whether err failed a host task only because its
	// process was lost: the task then starts again, with a new host.
	Restartable(err error) bool
}

// Worker runs tasks.
type Worker struct {
	cfg Config
	// cmdMu runs assign and revoke commands one at a time: a revoke that
	// confirmed a task stopped must not be followed by an assignment that
	// was already under way starting it again.
	cmdMu sync.Mutex
	// voided holds, per task, the newest (term, generation) a revoke voided:
	// an assignment at or below it arrived after the revoke that should have
	// followed it, and must not start. Guarded by cmdMu.
	voided map[api.TaskID]voidMark
	// issued is the newest term seen and the highest generation its leader
	// said it issued (ObserveIssued).
	issued voidMark
	// stopping is set by StopAll: the agent is shutting down, and an
	// assignment that arrives now (one in flight when the shutdown began)
	// is refused rather than starting a task as its clients close.
	// Guarded by cmdMu.
	stopping bool
	mu       sync.Mutex
	tasks    map[api.TaskID]*task
	// warn rate-limits the log of refused assignments.
	warn *logthrottle.Limiter
}

// voidMark is a revoke's (term, generation): assignments of an older term,
// or of the same term at this generation or older, are void.
type voidMark struct{ term, gen int64 }

func (m voidMark) voids(term, gen int64) bool {
	return term < m.term || term == m.term && gen <= m.gen
}

// NewWorker makes a Worker.
func NewWorker(cfg Config) *Worker {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = time.Second
	}
	if cfg.Report == nil {
		cfg.Report = func(wire.StatusReport) {}
	}
	return &Worker{cfg: cfg, tasks: map[api.TaskID]*task{}, voided: map[api.TaskID]voidMark{}, warn: logthrottle.New(time.Minute)}
}

// Assign starts tasks, restarts those whose generation changed, and applies
// the paused flag to the others. It returns the assignments it refused
// because a revoke of term had voided their generation.
func (w *Worker) Assign(ctx context.Context, term int64, assignments []wire.TaskAssignment) (refused []api.TaskID) {
	w.cmdMu.Lock()
	defer w.cmdMu.Unlock()
	if w.stopping {
		for _, a := range assignments {
			refused = append(refused, a.ID)
		}
		w.cfg.Logger.Info("assignment refused: the agent is shutting down", "tasks", len(assignments))
		return refused
	}
	for _, a := range assignments {
		if ctx.Err() != nil {
			// The coordinator stopped waiting (this agent may have been
			// paused past its lease and the task moved): starting it now
			// would fence its new owner. The next heartbeat decides.
			return refused
		}
		if m, ok := w.voided[a.ID]; ok && m.voids(term, a.Generation) {
			// Once per period and task: the coordinator places a refused
			// task again, and a revoke that voided generations it has yet
			// to issue would otherwise log at every pass.
			if w.warn.Due("voided "+a.ID.String(), time.Now()) {
				w.cfg.Logger.Info("assignment refused: a later revoke voided it", "task", a.ID.String(), "connector", a.ID.Connector, "generation", a.Generation)
			}
			refused = append(refused, a.ID)
			continue
		}
		w.mu.Lock()
		t := w.tasks[a.ID]
		w.mu.Unlock()
		// The same generation with another config is another instance: a
		// restarted leader may issue a number its predecessor issued but
		// never recorded.
		if t != nil && t.generation == a.Generation && t.assignment.ConfigHash == a.ConfigHash {
			t.setPaused(a.Paused)
			continue
		}
		if t != nil && (term < t.term || term == t.term && a.Generation < t.generation && w.issuedBy(term, t.generation)) {
			// An assignment older than the running instance's — sent before
			// it, delivered late, or replayed — must not replace it, when
			// the leader issued that instance's generation (one beyond what
			// it issued is none of its: its assignment wins).
			w.cfg.Logger.Info("assignment ignored: the task runs a newer one", "task", a.ID.String(),
				"generation", a.Generation, "term", term, "running_generation", t.generation, "running_term", t.term)
			continue
		}
		if t != nil {
			// A newer generation replaces the running instance: stop it
			// (committing its offsets) before the new one starts.
			_ = w.stopTask(ctx, t) // the task logs its stop errors; one still stopping is below
			select {
			case <-t.done:
			default:
				// Still stopping when the request ran out (a long final
				// flush): starting the new instance now would run two at
				// once. The old one goes on stopping; the coordinator sends
				// the assignment again, since this agent reports the task
				// at its old generation, and then it starts.
				continue
			}
		}
		nt := newTask(w.cfg, a)
		nt.term = term
		w.mu.Lock()
		w.tasks[a.ID] = nt
		w.mu.Unlock()
		nt.start()
	}
	return refused
}

// ObserveIssued records the highest generation the leader of term says it
// issued. Only the newest term's is kept: an older term's leader issues
// nothing any more.
func (w *Worker) ObserveIssued(term, issued int64) {
	w.cmdMu.Lock()
	defer w.cmdMu.Unlock()
	switch {
	case term > w.issued.term:
		w.issued = voidMark{term: term, gen: issued}
	case term == w.issued.term && issued > w.issued.gen:
		w.issued.gen = issued
	}
}

// issuedBy reports whether the leader of term said it issued gen. The
// caller holds cmdMu.
func (w *Worker) issuedBy(term, gen int64) bool {
	return w.issued.term == term && gen <= w.issued.gen
}

// Revoke stops tasks and returns once each stopped, committed its offsets
// and closed its clients, or ctx ended. Unknown tasks count as stopped.
// Assignments of the tasks of term at generation voidGen or older that
// arrive afterwards are refused (see wire.RevokeRequest).
func (w *Worker) Revoke(ctx context.Context, term, voidGen int64, ids []api.TaskID) (stopped []api.TaskID, failed []string) {
	w.cmdMu.Lock()
	defer w.cmdMu.Unlock()
	mark := voidMark{term: term, gen: voidGen}
	for _, id := range ids {
		if m, ok := w.voided[id]; !ok || !m.voids(mark.term, mark.gen) {
			w.voided[id] = mark
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, id := range ids {
		w.mu.Lock()
		t := w.tasks[id]
		w.mu.Unlock()
		if t == nil {
			stopped = append(stopped, id)
			continue
		}
		if voidGen != 0 && !mark.voids(t.term, t.generation) {
			// A revoke older than the running instance — one of its own
			// term that was delayed or replayed — must not stop it.
			w.cfg.Logger.Info("revoke ignored: the task runs a newer assignment", "task", id.String(),
				"generation", voidGen, "term", term, "running_generation", t.generation, "running_term", t.term)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := w.stopTask(ctx, t)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = append(failed, fmt.Sprintf("%s: %v", id, err))
			}
			if ctx.Err() == nil {
				stopped = append(stopped, id)
			}
		}()
	}
	wg.Wait()
	return stopped, failed
}

// Fence stops every task because the agent may no longer run them (the
// leader may start them elsewhere), and voids each one's assignment of its
// term at its generation and older: an assignment of it still on its way —
// queued in the connection while the process was paused, say — is refused
// instead of starting it again. A newer assignment starts it as usual. It
// returns the tasks it stopped.
func (w *Worker) Fence(ctx context.Context) []api.TaskID {
	running := w.Running()
	w.cmdMu.Lock()
	var ids []api.TaskID
	for _, rt := range running {
		w.mu.Lock()
		t := w.tasks[rt.ID]
		w.mu.Unlock()
		if t == nil {
			continue
		}
		mark := voidMark{term: t.term, gen: t.generation}
		if m, ok := w.voided[rt.ID]; !ok || !m.voids(mark.term, mark.gen) {
			w.voided[rt.ID] = mark
		}
		ids = append(ids, rt.ID)
	}
	w.cmdMu.Unlock()
	stopped, _ := w.Revoke(ctx, 0, 0, ids)
	return stopped
}

// stopTask stops t and forgets it once it has stopped. A task that did not
// stop in time stays listed — it still runs, and the coordinator must keep
// seeing it (and keep waiting) rather than believe it gone; it is forgotten
// when it finally stops.
func (w *Worker) stopTask(ctx context.Context, t *task) error {
	err := t.stop(ctx)
	forget := func() {
		w.mu.Lock()
		if w.tasks[t.id] == t {
			delete(w.tasks, t.id)
			// Gone from this agent: its series go too. Under the lock, so a
			// successor of the same id cannot have started meanwhile.
			t.metrics.Delete()
		}
		w.mu.Unlock()
	}
	select {
	case <-t.done:
		forget()
	default:
		go func() {
			<-t.done
			forget()
		}()
	}
	return err
}

// Running reports every task the worker holds.
func (w *Worker) Running() []wire.RunningTask {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]wire.RunningTask, 0, len(w.tasks))
	for _, t := range w.tasks {
		out = append(out, t.snapshot())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID.String() < out[j].ID.String() })
	return out
}

// RunningCount counts the tasks in state RUNNING.
func (w *Worker) RunningCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, t := range w.tasks {
		if t.snapshotState() == api.StateRunning {
			n++
		}
	}
	return n
}

// RefuseAssignments makes every assignment from now on refused: the agent
// is shutting down. Call it first, so that one in flight as the shutdown
// begins starts no task.
func (w *Worker) RefuseAssignments() {
	w.cmdMu.Lock()
	w.stopping = true
	w.cmdMu.Unlock()
}

// StopAll stops every task, committing offsets; used on graceful shutdown.
// Assignments that arrive from then on are refused (RefuseAssignments).
func (w *Worker) StopAll(ctx context.Context) {
	w.RefuseAssignments()
	w.mu.Lock()
	ids := make([]api.TaskID, 0, len(w.tasks))
	for id := range w.tasks {
		ids = append(ids, id)
	}
	w.mu.Unlock()
	w.Revoke(ctx, 0, 0, ids)
}
