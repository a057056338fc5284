package herder

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/sluice-io/sluice/coordinator/internal/instances"
	"github.com/sluice-io/sluice/coordinator/internal/leadership"
	"github.com/sluice-io/sluice/coordinator/internal/reconciler"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/wire"
)

// The leader-only components, in the order leadership starts them (it
// stops them in reverse):
//
//	writer     fence <group>-leader, read the topics to their end, the
//	           reconciler adopts task owners from statuses, writer on,
//	           signing marked
//	ids        the config history's id clock past its newest entry
//	statuses   the term's status queue
//	agents     the agent endpoints of this term
//	instances  the connector instances (built-ins here, Java on agents' hosts)
//	loggers, history, fleet, liveness, lag history, rollouts, agent rolls, reconcile:
//	           the loops
//
// Each component's values that a later one needs (the writer, the status
// queue, the instances) live in the herder's per-term fields below.
func (h *Herder) leaderComponents() []leadership.Component {
	return []leadership.Component{
		{Name: "leader writer", Start: h.startWriter},
		{Name: "config history ids", Start: h.observeConfigHistory},
		{Name: "status queue", Start: h.startStatuses},
		{Name: "agent endpoints", Start: func(_ context.Context, term int64) (func(), error) {
			eps, err := h.rec.ServeAgents(term)
			if err != nil {
				return nil, err
			}
			// The endpoints end with this attempt at leading, whichever
			// way it ends: a retry serves them anew, and none outlives the
			// term.
			return eps.Close, nil
		}},
		{Name: "connector instances", Start: h.startInstances},
		loop("log levels to agents", func(ctx context.Context, term int64) { h.levels.Run(ctx, term) }),
		loop("pending offsets history", func(ctx context.Context, _ int64) { h.offs.History().ResolvePending(ctx) }),
		loop("fleet controllers", func(ctx context.Context, _ int64) { h.runFleet(ctx) }),
		loop("liveness beats", func(ctx context.Context, _ int64) { h.livenessLoop(ctx) }),
		loop("lag history", h.runLagHistory),
		{Name: "rollouts", Start: func(ctx context.Context, _ int64) (func(), error) { return h.startRollouts(ctx), nil }},
		{Name: "agent rolls", Start: func(ctx context.Context, _ int64) (func(), error) { return h.startAgentRolls(ctx), nil }},
		// The reconciler's loops (presence probes, reconcile passes) run
		// until the term ends.
		loop("reconcile", func(ctx context.Context, _ int64) { h.rec.Run(ctx, h.instances.Load()) }),
	}
}

// loop is a component that runs fn until the term ends; its stop waits for
// fn to return.
func loop(name string, fn func(ctx context.Context, term int64)) leadership.Component {
	return leadership.Component{Name: name, Start: func(ctx context.Context, term int64) (func(), error) {
		done := make(chan struct{})
		go func() { defer close(done); fn(ctx, term) }()
		return func() { <-done }, nil
	}}
}

// termWriter is the leader writer of the running term: ensureWriter
// replaces it when it becomes unusable.
type termWriter struct {
	mu     sync.Mutex
	term   int64
	writer *store.Writer
}

// startWriter fences the previous leader's writer and opens this term's:
// from then on a deposed leader can write neither configs nor statuses, so
// what is read next is final.
func (h *Herder) startWriter(ctx context.Context, term int64) (func(), error) {
	w, err := h.openWriter(ctx)
	if err != nil {
		return nil, err
	}
	for _, f := range []interface{ ReadToEnd(context.Context) error }{h.configs, h.statuses, h.offsets, h.fleet} {
		if err := f.ReadToEnd(ctx); err != nil {
			w.Close()
			return nil, fmt.Errorf("catch up before leading: %w", err)
		}
	}
	// The writer is in place before the term is: from the moment this
	// coordinator says it leads (Leader, GET /health), a write through it
	// finds a writer.
	h.rec.Establish()
	h.all.SetWriter(w)
	h.writer.mu.Lock()
	h.writer.term, h.writer.writer = term, w
	h.writer.mu.Unlock()
	h.term.Store(term)
	stop := func() {
		h.all.SetWriter(nil)
		h.writer.mu.Lock()
		w := h.writer.writer
		h.writer.term, h.writer.writer = 0, nil
		h.writer.mu.Unlock()
		w.Close()
		h.rec.Revoke()
		h.term.CompareAndSwap(term, 0)
	}
	if err := h.markSigning(ctx); err != nil {
		stop()
		return nil, err
	}
	// Off the path to leading: marks only matter once a topic vanishes.
	go h.topics.MarkAll(ctx)
	return stop, nil
}

// openWriter fences <group>-leader and opens a writer under it.
func (h *Herder) openWriter(ctx context.Context) (*store.Writer, error) {
	txnID := h.cfg.GroupID + "-leader"
	if err := kafkautil.Fence(ctx, h.adminCl, txnID); err != nil {
		return nil, fmt.Errorf("fence the previous leader: %w", err)
	}
	w, err := store.NewWriter(ctx, txnID, h.cfg.KafkaOpts...)
	if err != nil {
		return nil, err
	}
	w.SetRenew(h.ensureWriter)
	return w, nil
}

// startStatuses starts the term's status queue.
func (h *Herder) startStatuses(ctx context.Context, _ int64) (func(), error) {
	q, stop := h.rec.Status().Start(ctx, h.statuses.Write)
	h.statusQ.Store(q)
	return func() {
		stop()
		h.statusQ.CompareAndSwap(q, nil)
	}, nil
}

// startInstances starts the term's connector instances: Java plugins'
// connectors run on agents' hosts, built-ins here.
func (h *Herder) startInstances(ctx context.Context, _ int64) (func(), error) {
	// This term's queue, not whichever is current when the report comes: an
	// instance that outlives its leadership's Close (stuck in plugin code)
	// must not write into the next term's statuses.
	q := h.statusQ.Load()
	remote := instances.NewRemoteHost(h.plugins, h.cfg.Providers)
	h.remote.Store(remote)
	m, err := instances.New(instances.Config{
		Host: instances.NewDispatchHost(instances.NewLocalHost(h.reg, h.cfg.Providers), remote, h.plugins.IsJava),
		OnStatus: func(name string, st instances.Status) {
			q.Enqueue(reconciler.ConnectorStatusRecord(name, st.State, st.Trace, h.cfg.WorkerID))
		},
		CheckTasks: func(name string, tasks []map[string]string) error { return h.admit.CheckTaskConfigs(ctx, name, tasks) },
		Prepare:    h.offs.Topics().Prepare,
		Logger:     h.log,
	})
	if err != nil {
		h.remote.CompareAndSwap(remote, nil)
		return nil, err
	}
	h.instances.Store(m)
	return func() {
		h.instances.CompareAndSwap(m, nil)
		h.remote.CompareAndSwap(remote, nil)
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := m.Close(cctx); err != nil {
			h.log.Warn("stopping connector instances", "err", err)
		}
	}, nil
}

// ensureWriter replaces the leader writer if it became unusable while this
// coordinator still leads: a deposed leader that woke up may have bumped the
// id's epoch, a write was interrupted, or the broker lost the writer's
// producer state. Fencing again and reopening lets the rightful leader go
// on writing. The reconcile loop calls it before each pass, and a write
// that finds the writer fenced calls it at once (store.Writer.SetRenew). It
// returns the writer in place afterwards when that one is usable, nil
// otherwise.
func (h *Herder) ensureWriter(ctx context.Context) *store.Writer {
	h.writer.mu.Lock()
	defer h.writer.mu.Unlock()
	term, old := h.writer.term, h.writer.writer
	if old == nil || old.Usable() {
		return old
	}
	// Re-fencing fences whoever else holds the id: only the lease holder
	// may do it. A deposed leader that woke up finds it no longer leads.
	if !h.elector.Confirm(ctx, term) {
		h.log.Warn("leader writer unusable and the lease is no longer ours; not re-fencing", "term", term)
		return nil
	}
	h.log.Warn("leader writer unusable; fencing and reopening it", "term", term)
	w, err := h.openWriter(ctx)
	if err != nil {
		h.log.Error("reopening the leader writer failed", "err", err)
		return nil
	}
	h.writer.writer = w
	h.all.SetWriter(w)
	old.Close()
	return w
}

// Leader reports whether this coordinator leads, and the lease it follows.
func (h *Herder) Leader() (bool, wire.LeaderLease) {
	if h.elector == nil {
		return false, wire.LeaderLease{}
	}
	return h.elector.IsLeader() && h.term.Load() != 0, h.elector.Current()
}

// Ready reports whether the coordinator finished starting: its stores are
// read and it can answer.
func (h *Herder) Ready() bool { return h.ready.Load() }

// CatchUp reads the config and status topics to their end, so a follower's
// answer reflects every write the leader made before it.
func (h *Herder) CatchUp(ctx context.Context) error {
	if err := h.configs.ReadToEnd(ctx); err != nil {
		return err
	}
	return h.statuses.ReadToEnd(ctx)
}

func randomID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// NATSReconnected is called when the coordinator's NATS connection comes
// back: the elector looks at the lease at once rather than at its next tick.
func (h *Herder) NATSReconnected() {
	if h.elector != nil {
		h.elector.Poke()
	}
}
