package herder

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/coordinator/internal/instances"
	"github.com/sluice-io/sluice/coordinator/internal/reconciler"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/kafkautil"
)

// leadership is what a coordinator runs while it leads, Nomad-style: it is
// switched on by establishLeadership and off by revokeLeadership.
//
//	elected(term) ─► fence <group>-leader ─► read topics to the end ─► reconciler
//	  on (adopts task owners from statuses) ─► writer on ─► status queue, agent
//	  endpoints of this term ─► fleet controllers, reconcile loop, log levels to
//	  agents ─ … ─► deposed: everything off, reconciler forgets the term, writer closed
type leadership struct {
	term   int64
	cancel context.CancelFunc
	done   chan struct{}
	writer *store.Writer
}

// establishLeadership starts leader-only work for term. It returns at once
// (the elector renews the lease meanwhile); the work stops when ctx ends.
func (h *Herder) establishLeadership(ctx context.Context, term int64) {
	lctx, cancel := context.WithCancel(ctx)
	l := &leadership{term: term, cancel: cancel, done: make(chan struct{})}
	h.leadMu.Lock()
	h.leading = l
	h.leadMu.Unlock()
	go func() {
		defer close(l.done)
		backoff := 100 * time.Millisecond
		for lctx.Err() == nil {
			err := h.lead(lctx, l)
			if err == nil {
				return
			}
			h.log.Error("taking up leadership failed; retrying", "term", term, "err", err)
			select {
			case <-lctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
		}
	}()
}

// lead takes up leadership and runs the reconcile loop until ctx ends.
func (h *Herder) lead(ctx context.Context, l *leadership) error {
	txnID := h.cfg.GroupID + "-leader"
	// Fence the previous leader's writer first: from here on it can write
	// neither configs nor statuses, so what is read next is final.
	if err := kafkautil.Fence(ctx, h.adminCl, txnID); err != nil {
		return fmt.Errorf("fence the previous leader: %w", err)
	}
	w, err := store.NewWriter(ctx, txnID, h.cfg.KafkaOpts...)
	if err != nil {
		return err
	}
	for _, f := range []interface{ ReadToEnd(context.Context) error }{h.configs, h.statuses, h.offsets, h.fleet} {
		if err := f.ReadToEnd(ctx); err != nil {
			w.Close()
			return fmt.Errorf("catch up before leading: %w", err)
		}
	}
	h.term.Store(l.term)
	h.rec.Establish()
	h.setWriters(w)
	l.writer = w
	if err := h.markSigning(ctx); err != nil {
		h.setWriters(nil)
		w.Close()
		return err
	}
	// Off the path to leading: marks only matter once a topic vanishes.
	go h.markTopics(ctx)
	q, stopStatuses := h.rec.Status().Start(ctx, h.statuses.Write)
	defer stopStatuses()
	eps, err := h.rec.ServeAgents(l.term)
	if err != nil {
		h.setWriters(nil)
		w.Close()
		return err
	}
	// The endpoints end with this attempt at leading, whichever way it
	// ends: a retry serves them anew, and none outlives the term.
	defer eps.Close()
	// Java plugins' connectors run on agents' hosts, built-ins here.
	remote := instances.NewRemoteHost(h.plugins, h.cfg.Providers)
	h.remote.Store(remote)
	defer h.remote.CompareAndSwap(remote, nil)
	m, err := instances.New(instances.Config{
		Host: instances.NewDispatchHost(instances.NewLocalHost(h.reg, h.cfg.Providers), remote, h.plugins.IsJava),
		// This leadership's queue, not whichever is current when the report
		// comes: an instance that outlives its leadership's Close (stuck in
		// plugin code) must not write into the next term's statuses.
		OnStatus: func(name string, st instances.Status) {
			q.Enqueue(reconciler.ConnectorStatusRecord(name, st.State, st.Trace, h.cfg.WorkerID))
		},
		CheckTasks: func(name string, tasks []map[string]string) error { return h.admit.CheckTaskConfigs(ctx, name, tasks) },
		Prepare:    h.offs.Topics().Prepare,
		Logger:     h.log,
	})
	if err != nil {
		return err
	}
	h.instances.Store(m)
	defer func() {
		h.instances.CompareAndSwap(m, nil)
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := m.Close(cctx); err != nil {
			h.log.Warn("stopping connector instances", "err", err)
		}
	}()
	pushed := make(chan struct{})
	go func() { defer close(pushed); h.loggersLoop(ctx, l.term) }()
	defer func() { <-pushed }()
	resolved := make(chan struct{})
	go func() { defer close(resolved); h.offs.History().ResolvePending(ctx) }()
	defer func() { <-resolved }()
	fleetDone := make(chan struct{})
	go func() { defer close(fleetDone); h.runFleet(ctx) }()
	defer func() { <-fleetDone }()
	heard := make(chan struct{})
	go func() { defer close(heard); h.livenessLoop(ctx) }()
	defer func() { <-heard }()
	defer h.startRollouts(ctx)()
	h.log.Info("leading", "term", l.term)
	// The reconciler's loops (presence probes, reconcile passes) run until
	// the term ends.
	h.rec.Run(ctx, m)
	return nil
}

// ensureWriter replaces the leader writer if it became unusable while this
// coordinator still leads: a deposed leader that woke up may have bumped the
// id's epoch, a write was interrupted, or the broker lost the writer's
// producer state. Fencing again and reopening lets
// the rightful leader go on writing. It runs in the leadership goroutine.
func (h *Herder) ensureWriter(ctx context.Context) {
	h.leadMu.Lock()
	l := h.leading
	h.leadMu.Unlock()
	if l == nil || l.writer == nil || l.writer.Usable() {
		return
	}
	// Re-fencing fences whoever else holds the id: only the lease holder
	// may do it. A deposed leader that woke up finds it no longer leads.
	if !h.elector.Confirm(ctx, l.term) {
		h.log.Warn("leader writer unusable and the lease is no longer ours; not re-fencing", "term", l.term)
		return
	}
	h.log.Warn("leader writer unusable; fencing and reopening it", "term", l.term)
	txnID := h.cfg.GroupID + "-leader"
	if err := kafkautil.Fence(ctx, h.adminCl, txnID); err != nil {
		h.log.Error("re-fencing the leader writer failed", "err", err)
		return
	}
	w, err := store.NewWriter(ctx, txnID, h.cfg.KafkaOpts...)
	if err != nil {
		h.log.Error("reopening the leader writer failed", "err", err)
		return
	}
	old := l.writer
	l.writer = w
	h.setWriters(w)
	old.Close()
}

// revokeLeadership stops leader-only work; the elector has already
// cancelled its context.
func (h *Herder) revokeLeadership(term int64) {
	h.leadMu.Lock()
	l := h.leading
	h.leading = nil
	h.leadMu.Unlock()
	if l == nil {
		return
	}
	l.cancel()
	<-l.done
	h.setWriters(nil)
	if l.writer != nil {
		l.writer.Close()
	}
	h.rec.Revoke()
	h.term.CompareAndSwap(term, 0)
	h.log.Info("no longer leading", "term", term)
}

// setWriters installs the leader writer (nil: removes it) on every topic
// the leader writes.
func (h *Herder) setWriters(w *store.Writer) {
	h.all.SetWriter(w)
}

// Leader reports whether this coordinator leads, and the lease it follows.
func (h *Herder) Leader() (bool, v1.LeaderLease) {
	if h.elector == nil {
		return false, v1.LeaderLease{}
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
