// Package agentroll drives rolling restarts of agents (POST
// /sluice/fleet/rolls, docs/operations.md) on the leader: batch by batch,
// each agent is drained (fleet/drain moves its tasks), waited for until it
// comes back restarted — registered with a later started_at than when its
// drain began — and uncordoned; then the next batch.
//
//	batch pending ─► draining (each agent's drain mark and the roll's
//	  step, in ONE transaction) ─► drain done ─► waiting_restart
//	  ─► registered with a later started_at ─► uncordoning
//	  ─► uncordoned and done, in ONE transaction ─► next batch
//	     └► a drain blocked, or a step past its timeout ─► failed (the
//	        agent is left draining or cordoned, as it is)
//
// Something else restarts each agent — an operator, systemd, Kubernetes,
// the CLI's --restart-cmd, which runs where the CLI runs: the coordinator
// never runs a command. The roll and every agent's step live in the fleet
// topic; every step is one store.Stores.Apply of its transition
// (store/agentrollcommands.go) and the agent mark it changes, so a new
// leader resumes at the step the last one committed: an agent done stays
// done. The controller reads its world through narrow ports and decides
// with an injected clock: each transition is tested without Kafka.
package agentroll

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/drain"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/lifecycle"
	"github.com/sluice-io/sluice/coordinator/internal/reconciler"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// DefaultTimeout bounds each waiting step of an agent (its drain, its
// restart) when a request leaves it out.
const DefaultTimeout = 10 * time.Minute

// keptRolls is how many finished rolls the fleet topic keeps.
const keptRolls = 50

// maxStepsAPass bounds the steps one pass takes of one roll.
const maxStepsAPass = 20

// Agents are the agents the leader knows (reconciler.Table).
type Agents interface {
	Agents() []registry.Agent
}

// Fleet is the fleet topic as this coordinator applied it
// (store.FleetState): the agents' marks and the rolls.
type Fleet interface {
	Agent(id string) (store.AgentMark, bool)
	AgentRoll(id string) (store.AgentRoll, bool)
	AgentRolls() []store.AgentRoll
	Changed() <-chan struct{}
}

// Store writes commands in one transaction (store.Stores).
type Store interface {
	Apply(ctx context.Context, cmds ...store.Command) error
}

// Config is what a Controller needs.
type Config struct {
	Agents Agents
	Fleet  Fleet
	Store  Store
	// Snapshot is the reconciler's placement world, which a drain's
	// progress is read from (reconciler.Snapshot).
	Snapshot func() reconciler.Snapshot
	// Clock is the time every decision is made at.
	Clock func() time.Time
	// NewID names a roll made at a time.
	NewID func(now time.Time) string
	// Changed asks for a reconcile pass once an agent's mark changed.
	Changed func()
	// WriteFailed turns a failed write into the REST error answered.
	WriteFailed func(err error, what string, args ...any) error
	// Tick is how often the controller looks at the rolls when nothing in
	// the fleet topic changed (a restart shows in the registry, not the
	// topic); default 250ms.
	Tick   time.Duration
	Logger *slog.Logger
}

// Controller creates and drives agent rolls. Its mutex serialises every
// change of a roll's record — a REST call's or a step of the loop — from
// its read to its write.
//
// Lock order: Controller.mu, then the store's fleet write lock.
type Controller struct {
	cfg  Config
	mu   sync.Mutex
	kind lifecycle.Kind[store.AgentRoll] // Pause, Resume, Abort
}

// New makes a controller.
func New(cfg Config) *Controller {
	if cfg.Tick <= 0 {
		cfg.Tick = 250 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c := &Controller{cfg: cfg}
	c.kind = lifecycle.Kind[store.AgentRoll]{
		Noun:        "Roll",
		Mu:          &c.mu,
		Get:         func(id string) (store.AgentRoll, bool) { return c.cfg.Fleet.AgentRoll(id) },
		State:       func(r store.AgentRoll) string { return r.State },
		Running:     store.AgentRollRunning,
		Paused:      store.AgentRollPaused,
		Clock:       cfg.Clock,
		Apply:       func(ctx context.Context, cmds ...store.Command) error { return c.cfg.Store.Apply(ctx, cmds...) },
		WriteFailed: cfg.WriteFailed,
		PauseCmd:    func(id string, at time.Time) store.Command { return store.PauseAgentRoll{ID: id, At: at} },
		ResumeCmd:   func(id string, at time.Time) store.Command { return store.ResumeAgentRoll{ID: id, At: at} },
		AbortCmd:    func(id string, at time.Time) store.Command { return store.AbortAgentRoll{ID: id, At: at} },
	}
	return c
}

// CheckSpec checks a roll's batch size and timeout and fills in their
// defaults (1 agent at a time, DefaultTimeout).
func CheckSpec(spec *store.AgentRollSpec) error {
	switch {
	case spec.BatchSize == 0:
		spec.BatchSize = 1
	case spec.BatchSize < 0:
		return api.Errorf(api.CodeBadRequest, "Invalid batch_size %d: roll at least one agent at a time", spec.BatchSize)
	}
	if spec.Timeout == "" {
		spec.Timeout = DefaultTimeout.String()
	}
	if d, err := time.ParseDuration(spec.Timeout); err != nil || d <= 0 {
		return api.Errorf(api.CodeBadRequest, "Invalid timeout '%s': give a duration such as 90s or 10m", spec.Timeout)
	}
	seen := map[string]bool{}
	for _, id := range spec.Agents {
		if seen[id] {
			return api.Errorf(api.CodeBadRequest, "Agent %s is named twice in agents", id)
		}
		seen[id] = true
	}
	return nil
}

// timeout is a roll's timeout (checked by CheckSpec when it was made).
func timeout(r store.AgentRoll) time.Duration {
	d, err := time.ParseDuration(r.Spec.Timeout)
	if err != nil || d <= 0 {
		return DefaultTimeout
	}
	return d
}

// Create records a roll of spec (checked by CheckSpec) over agents (each
// known, in the order they roll), which Run then drives. An agent may be
// in one roll in progress only (409).
func (c *Controller) Create(ctx context.Context, spec store.AgentRollSpec, agents []string, principal string) (store.AgentRoll, error) {
	if len(agents) == 0 {
		return store.AgentRoll{}, api.Errorf(api.CodeBadRequest, "No registered agent to roll")
	}
	now := c.cfg.Clock().UTC()
	r := store.AgentRoll{ID: c.cfg.NewID(now), State: store.AgentRollRunning, Spec: spec, Principal: principal, CreatedAt: now, UpdatedAt: now}
	for _, id := range agents {
		r.Agents = append(r.Agents, store.RolledAgent{ID: id, Step: store.RollPending})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, other := range c.cfg.Fleet.AgentRolls() {
		if other.Final() {
			continue
		}
		for _, id := range other.Names() {
			if slices.Contains(agents, id) {
				return store.AgentRoll{}, api.Errorf(api.CodeConflict, "Agent %s is already in roll %s (%s): wait for it to end or abort it", id, other.ID, other.State)
			}
		}
	}
	if err := c.cfg.Store.Apply(ctx, store.StartAgentRoll{Roll: r}); err != nil {
		return store.AgentRoll{}, c.cfg.WriteFailed(err, "Failed to record roll %s", r.ID)
	}
	c.cfg.Logger.Info("agent roll started", "roll", r.ID, "agents", agents, "batch_size", spec.BatchSize, "timeout", spec.Timeout)
	return r, nil
}

// NotFound is the 404 of an unknown roll.
func NotFound(id string) error { return lifecycle.NotFound("Roll", id) }

// Pause stops a running roll before its next step; drains under way go
// on, and the agents stay as they are.
func (c *Controller) Pause(ctx context.Context, id string) (store.AgentRoll, error) {
	return c.kind.Pause(ctx, id)
}

// Resume goes on with a paused roll where it stopped; the agents that
// wait (drain, restart) wait a full timeout again.
func (c *Controller) Resume(ctx context.Context, id string) (store.AgentRoll, error) {
	return c.kind.Resume(ctx, id)
}

// Abort stops a roll at once and for good: its agents stay as they are,
// a draining or cordoned one too (uncordon it by hand).
func (c *Controller) Abort(ctx context.Context, id string) (store.AgentRoll, error) {
	return c.kind.Abort(ctx, id)
}

// Run drives every roll in progress until ctx ends: on each change of the
// fleet topic, and every Tick (a restart shows in the registry).
func (c *Controller) Run(ctx context.Context) {
	lifecycle.Run(ctx, c.cfg.Tick, c.cfg.Fleet.Changed, c.Pass)
}

// Pass takes the steps every running roll can take now, then prunes the
// final ones beyond keptRolls.
func (c *Controller) Pass(ctx context.Context) {
	rolls := c.cfg.Fleet.AgentRolls()
	var final []store.Command
	for _, r := range rolls {
		if r.Final() {
			final = append(final, store.DeleteAgentRoll{ID: r.ID})
			continue
		}
		if err := lifecycle.Steps(ctx, maxStepsAPass, func() (bool, error) { return c.Step(ctx, r.ID) }); err != nil {
			c.cfg.Logger.Warn("agent roll step failed; retrying", "roll", r.ID, "err", err)
		}
	}
	if len(final) > keptRolls {
		if err := c.cfg.Store.Apply(ctx, final[:len(final)-keptRolls]...); err != nil {
			c.cfg.Logger.Warn("removing finished agent rolls failed; retrying", "err", err)
		}
	}
}

// Step takes the next step of roll id, if it has one now, and reports
// whether it took one: one transaction of the roll's transition and the
// agent marks it changes.
func (c *Controller) Step(ctx context.Context, id string) (took bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.cfg.Fleet.AgentRoll(id)
	if !ok || r.State != store.AgentRollRunning || r.Batch >= r.Batches() {
		return false, nil
	}
	cmds := c.decide(r, c.cfg.Clock())
	if len(cmds) == 0 {
		return false, nil
	}
	if err := c.cfg.Store.Apply(ctx, cmds...); err != nil {
		if errors.Is(err, store.ErrStale) {
			return false, nil // moved on meanwhile: the next pass decides anew
		}
		return false, fmt.Errorf("agent roll %s: %w", id, err)
	}
	marked := false
	for _, cmd := range cmds {
		switch cmd := cmd.(type) {
		case store.MarkAgent:
			marked = true
		case store.FailAgentRoll:
			c.cfg.Logger.Warn("agent roll failed", "roll", id, "agent", cmd.Agent, "why", cmd.Why)
		}
	}
	if marked {
		c.cfg.Changed()
	}
	c.cfg.Logger.Info("agent roll step", "roll", id, "step", fmt.Sprintf("%T", cmds[len(cmds)-1]))
	return true, nil
}

// decide is the next step of running roll r at now: the start of its
// batch's drains, or the first step one agent of the batch can take.
func (c *Controller) decide(r store.AgentRoll, now time.Time) []store.Command {
	from, to := r.BatchRange(r.Batch)
	batch := r.Agents[from:to]
	snap := c.cfg.Snapshot()
	if batch[0].Step == store.RollPending {
		return c.drainBatch(r, batch, snap, now)
	}
	registered := map[string]registry.Agent{}
	for _, a := range c.cfg.Agents.Agents() {
		if a.Registered {
			registered[a.ID] = a
		}
	}
	for _, a := range batch {
		reg, ok := registered[a.ID]
		if cmds := c.agentStep(r, a, reg, ok, snap, now); len(cmds) > 0 {
			return cmds
		}
	}
	return nil
}

// drainBatch starts the drains of the batch's agents, in one transaction
// with their marks; an agent whose drain would leave tasks with nowhere to
// go fails the roll instead, and nothing is drained.
func (c *Controller) drainBatch(r store.AgentRoll, batch []store.RolledAgent, snap reconciler.Snapshot, now time.Time) []store.Command {
	var cmds []store.Command
	started := map[string]time.Time{}
	known := map[string]registry.Agent{}
	for _, a := range c.cfg.Agents.Agents() {
		known[a.ID] = a
	}
	for _, a := range batch {
		if blocked := drain.Blocked(snap, a.ID); len(blocked) > 0 {
			return c.fail(r, a.ID, now, "draining agent %s would leave %d task(s) with nowhere to go: %s (step %s)",
				a.ID, len(blocked), drain.DescribeBlocked(blocked), store.RollDraining)
		}
		if reg, ok := known[a.ID]; ok && reg.Registered {
			started[a.ID] = reg.StartedAt
		}
		mark, marked := c.cfg.Fleet.Agent(a.ID)
		if cmd := drain.MarkCommand(a.ID, mark, marked, drain.Mark{State: api.AgentDraining, Origin: api.CordonAgentRoll, Principal: r.Principal}, now); cmd != nil {
			cmds = append(cmds, cmd)
		}
	}
	return append(cmds, store.DrainRollBatch{ID: r.ID, Batch: r.Batch, StartedAt: started, At: now})
}

// agentStep is the step agent a of the batch in progress can take now;
// reg is its registration (registered: it has one).
func (c *Controller) agentStep(r store.AgentRoll, a store.RolledAgent, reg registry.Agent, registered bool, snap reconciler.Snapshot, now time.Time) []store.Command {
	late := now.Sub(a.Since) > timeout(r)
	gone := func() []store.Command {
		return []store.Command{store.RollAgentGone{ID: r.ID, Batch: r.Batch, Agent: a.ID, At: now}}
	}
	switch a.Step {
	case store.RollDraining:
		mark, ok := c.cfg.Fleet.Agent(a.ID)
		if !ok || mark.State != api.AgentDraining {
			return c.fail(r, a.ID, now, "agent %s is no longer draining: it was uncordoned or cordoned by hand (step %s)", a.ID, a.Step)
		}
		if !registered && !a.SeenGone {
			return gone()
		}
		st := drain.Status(snap, a.ID, mark)
		switch {
		case st.State == api.DrainDone:
			return []store.Command{store.RollAgentDrained{ID: r.ID, Batch: r.Batch, Agent: a.ID, Moved: st.Moved, At: now}}
		case st.State == api.DrainBlocked:
			return c.fail(r, a.ID, now, "agent %s did not drain: it keeps %d task(s) no other agent may run: %s (step %s)",
				a.ID, len(st.Blocked), drain.DescribeBlocked(st.Blocked), a.Step)
		case late:
			return c.fail(r, a.ID, now, "agent %s did not drain within %s: %d task(s) remain on it (step %s)",
				a.ID, timeout(r), len(st.Remaining), a.Step)
		}
	case store.RollWaitingRestart:
		switch {
		case !registered && !a.SeenGone:
			return gone()
		case registered && (reg.StartedAt.After(a.StartedAt) || a.StartedAt.IsZero() && a.SeenGone):
			return []store.Command{store.RollAgentRestarted{ID: r.ID, Batch: r.Batch, Agent: a.ID, StartedAt: reg.StartedAt, Version: reg.Version, At: now}}
		case late:
			why := "it is not registered"
			if registered {
				why = "it is registered but did not restart (started_at " + reg.StartedAt.Format(time.RFC3339Nano) + ")"
			}
			return c.fail(r, a.ID, now, "agent %s did not come back within %s: %s (step %s)", a.ID, timeout(r), why, a.Step)
		}
	case store.RollUncordoning:
		mark, marked := c.cfg.Fleet.Agent(a.ID)
		cmds := []store.Command{store.RollAgentDone{ID: r.ID, Batch: r.Batch, Agent: a.ID, At: now}}
		// The roll lifts only its own mark: one an operator took over
		// while the agent restarted (a cordon) is theirs to lift. A mark
		// without an origin, written before marks recorded one, is lifted
		// as it always was.
		if marked && mark.Origin == api.CordonOperator {
			return cmds
		}
		if cmd := drain.MarkCommand(a.ID, mark, marked, drain.Mark{State: api.AgentActive}, now); cmd != nil {
			cmds = append([]store.Command{cmd}, cmds...)
		}
		return cmds
	}
	return nil
}

// fail is the step failing roll r at agent id, and why.
func (c *Controller) fail(r store.AgentRoll, id string, now time.Time, format string, args ...any) []store.Command {
	return []store.Command{store.FailAgentRoll{ID: r.ID, Batch: r.Batch, Agent: id, Why: fmt.Sprintf(format, args...), At: now}}
}
