package instances

import (
	"errors"
	"maps"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/records"
)

// worker runs one connector's lifecycle. Its fields are its own; what it
// shares with the Manager is in instance, under Manager.mu.
type worker struct {
	m  *Manager
	in *instance

	running bool
	plugin  Plugin
	// config is what the last start attempt used: a different one in
	// the next snapshot is a config change.
	config    map[string]string
	restarts  int64
	needTasks bool
	// failed: the connector raised an error; it stays down until a
	// restart, a config change or a new target state.
	failed bool

	attempt   int   // failures since the last success
	retry     int64 // the number of the pending retry's timer; 0: none
	retries   int64 // the last retry number handed out
	stopTimer func() bool
	// prepared is the config Config.Prepare last readied; unprepared the
	// one it last failed on, whose retry backs off.
	prepared, unprepared map[string]string
	reported             Status
	haveReported         bool
}

// snapshot is what the worker acts on in one step.
type snapshot struct {
	config      map[string]string
	target      string
	gone        bool
	restarts    int64
	reconfigure bool
	raised      error
	lost        bool
	retryDue    int64
}

func (w *worker) run() {
	defer w.m.wg.Done()
	for {
		if w.step(w.next()) {
			return
		}
	}
}

// next waits for work and takes it, clearing the one-shot requests.
func (w *worker) next() snapshot {
	m, in := w.m, w.in
	m.mu.Lock()
	in.parked = true
	m.mu.Unlock()
	<-in.wake
	m.mu.Lock()
	defer m.mu.Unlock()
	in.parked, in.pending = false, false
	select {
	case <-in.wake: // a poke between the receive and the lock: this step serves it
	default:
	}
	s := snapshot{config: in.config, target: in.target, gone: in.deleted || m.closing, restarts: in.restarts,
		reconfigure: in.reconfigure, raised: in.raised, lost: in.lost, retryDue: in.retryDue}
	in.reconfigure, in.raised, in.lost = false, nil, false
	return s
}

// step moves the instance towards s and reports whether the worker is done.
func (w *worker) step(s snapshot) bool {
	if s.restarts != w.restarts {
		w.restarts = s.restarts
		w.haveReported = false // the herder shows RESTARTING: say what follows
		w.down()
	}
	if s.gone {
		w.down()
		return w.m.retire(w.in)
	}
	if !w.prepare(s) {
		return false
	}
	if s.target != records.TargetStarted {
		w.down()
		if st, ok := map[string]string{records.TargetPaused: api.StatePaused, records.TargetStopped: api.StateStopped}[s.target]; ok {
			w.report(Status{State: st})
		}
		return false
	}
	if !maps.Equal(s.config, w.config) {
		w.down()
	}
	if s.raised != nil && w.running {
		w.down()
		w.failed = true
		w.m.cfg.Logger.Warn("connector failed", "connector", w.in.name, "err", s.raised)
		w.report(Status{State: api.StateFailed, Trace: s.raised.Error()})
		return false
	}
	if s.lost && w.running {
		// Its host is gone: start a new instance at once, without
		// waiting out a backoff (Start's failure, if any, backs off).
		w.m.cfg.Logger.Warn("connector instance lost with its host; starting it again", "connector", w.in.name)
		w.down()
	}
	if w.failed {
		return false
	}
	if s.reconfigure {
		w.needTasks = true
	}
	if w.retry != 0 && s.retryDue != w.retry {
		return false // backing off: the timer wakes the worker
	}
	w.retry = 0
	if !w.running && !w.start(s.config) {
		return false
	}
	if w.needTasks && !w.computeTasks(s.config) {
		return false
	}
	w.attempt = 0
	w.report(Status{State: api.StateRunning})
	return false
}

// prepare runs Config.Prepare for a config it has not readied yet, and
// reports whether the step may go on. A failure is retried with the
// backoff, which grows while the same config keeps failing; another
// config is tried at once.
func (w *worker) prepare(s snapshot) bool {
	prep := w.m.cfg.Prepare
	if prep == nil || maps.Equal(s.config, w.prepared) {
		return true
	}
	retrying := w.unprepared != nil && maps.Equal(s.config, w.unprepared)
	if retrying && w.retry != 0 && s.retryDue != w.retry {
		return false // backing off: the timer wakes the worker
	}
	if err := prep(w.m.ctx, w.in.name, s.config); err != nil {
		attempt := 0
		if retrying {
			attempt = w.attempt
		}
		w.down() // forgets the attempts: put back this config's
		w.attempt, w.unprepared = attempt, s.config
		w.fail(err)
		return false
	}
	if retrying {
		w.retry = 0 // this step is the retry
	}
	w.prepared, w.unprepared = s.config, nil
	return true
}

// start starts a new plugin instance with config and marks its task
// configs as wanted; the caller computes them next.
func (w *worker) start(config map[string]string) bool {
	m, in := w.m, w.in
	m.mu.Lock()
	m.epoch++
	epoch := m.epoch
	in.live = epoch
	m.mu.Unlock()
	w.config = config
	p, err := m.cfg.Host.Start(m.ctx, in.name, config, &connectorContext{m: m, in: in, epoch: epoch})
	if err != nil {
		m.mu.Lock()
		in.live = 0
		m.mu.Unlock()
		w.fail(err)
		return false
	}
	m.mu.Lock()
	in.reconfigure = false // the computation that follows a start serves it
	m.mu.Unlock()
	w.running, w.plugin, w.needTasks = true, p, true
	return true
}

// computeTasks asks the running instance for its task configs and
// publishes them.
func (w *worker) computeTasks(config map[string]string) bool {
	tasks, err := w.m.cfg.Host.TaskConfigs(w.m.ctx, w.in.name, MaxTasks(config))
	if err != nil {
		w.fail(err)
		return false
	}
	w.needTasks = false
	finished := finish(w.plugin, config, tasks)
	if check := w.m.cfg.CheckTasks; check != nil {
		if err := check(w.in.name, finished); err != nil {
			// Deterministic: the same config computes the same task
			// configs, so they are not computed again until something
			// changes (a restart, a config change, a new target state).
			w.down()
			w.failed = true
			w.m.cfg.Logger.Warn("connector's task configs refused; it stays failed until its config changes or it is restarted", "connector", w.in.name, "err", err)
			w.report(Status{State: api.StateFailed, Trace: err.Error()})
			return false
		}
	}
	w.m.publish(w.in, finished, config)
	return true
}

// down stops the running instance, if any, and forgets any failure and
// pending retry: what comes next starts afresh.
func (w *worker) down() {
	if w.stopTimer != nil {
		w.stopTimer()
		w.stopTimer = nil
	}
	w.retry, w.attempt, w.failed = 0, 0, false
	if !w.running {
		return
	}
	w.running = false
	m, in := w.m, w.in
	m.mu.Lock()
	in.live = 0
	m.mu.Unlock()
	if err := m.cfg.Host.Stop(m.ctx, in.name); err != nil {
		// Nothing is retried: the instance is gone either way, and what
		// comes next (a new instance, or none) does not depend on it.
		m.cfg.Logger.Warn("stopping a connector instance failed", "connector", in.name, "err", err)
	}
}

// fail reports err and schedules the next attempt after the backoff.
func (w *worker) fail(err error) {
	m, in := w.m, w.in
	delay := m.cfg.InitialBackoff
	for i := 0; i < w.attempt && delay < m.cfg.MaxBackoff; i++ {
		delay *= 2
	}
	delay = min(delay, m.cfg.MaxBackoff)
	w.attempt++
	w.retries++
	n := w.retries
	w.retry = n
	w.stopTimer = m.cfg.AfterFunc(delay, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		in.retryDue = n
		in.poke()
	})
	m.cfg.Logger.Warn("connector instance failed; retrying", "connector", in.name, "retry_in", delay, "err", err)
	// Reported at every failed attempt, not once: the reconciler may have
	// written the connector's target state (RUNNING) over the first report
	// when it looked before that report was read back, and an unchanged
	// failure must not stay hidden behind it (the backoff bounds these
	// writes).
	w.haveReported = false
	w.report(Status{State: api.StateFailed, Trace: err.Error()})
}

// report tells OnStatus about a state it has not been told yet.
func (w *worker) report(st Status) {
	if w.haveReported && w.reported == st {
		return
	}
	w.reported, w.haveReported = st, true
	w.m.cfg.OnStatus(w.in.name, st)
}

// connectorContext is what one plugin instance is given: its requests
// reach the worker only while it is the running instance.
type connectorContext struct {
	m     *Manager
	in    *instance
	epoch int64
}

// RequestTaskReconfiguration implements connect.ConnectorContext.
func (c *connectorContext) RequestTaskReconfiguration() {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if c.in.live == c.epoch {
		c.in.reconfigure = true
		c.in.poke()
	}
}

// InstanceLost says the instance is gone with the host that ran it (a
// remote host's agent left, or its connector host died): the worker starts
// the connector again.
func (c *connectorContext) InstanceLost() {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if c.in.live == c.epoch {
		c.in.lost = true
		c.in.poke()
	}
}

// RaiseError implements connect.ConnectorContext.
func (c *connectorContext) RaiseError(err error) {
	if err == nil {
		err = errors.New("the connector raised an error without saying which")
	}
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if c.in.live == c.epoch {
		c.in.raised = err
		c.in.poke()
	}
}
