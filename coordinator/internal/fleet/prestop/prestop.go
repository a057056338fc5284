// Package prestop is the leader controller that lifts the marks agents'
// own pre-stop hooks made. In Kubernetes an agent's container drains its
// agent before it stops (sluice agents drain --self --pre-stop,
// deploy/k8s): its tasks move away while the pod goes. When the agent is
// back — a new process of the same id registered — that drain has done its
// job, and the agent takes tasks again without anyone uncordoning it. Only
// a pre-stop mark is lifted: an operator's cordon or a rolling restart's
// drain stays (a stronger origin takes a mark over, fleet/drain), and so
// does a pre-stop drain while the process that was running as it started
// still runs — it re-registers with a new leader in the middle of its own
// pre-stop hook.
//
//	preStop hook ─► drain?origin=pre-stop (mark: origin, process start)
//	pod restarts ─► a process of another start registers ─► Step: lift the mark
package prestop

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// Marks are the agents' marks in the fleet topic (store.FleetState).
type Marks interface {
	Agents() map[string]store.AgentMark
}

// Agents is what the leader knows of its agents (reconciler.Table).
type Agents interface {
	Agents() []registry.Agent
}

// Back reports whether agent a, as it registered, is a process other than
// the one running when the pre-stop mark m was made: one that started at
// another time than the mark recorded or, when the mark recorded none (the
// leader did not know the agent then), after the mark was made.
func Back(m store.AgentMark, a registry.Agent) bool {
	switch {
	case m.By() != api.CordonPreStop || !a.Registered || a.StartedAt.IsZero():
		return false
	case m.AgentStartedAt.IsZero():
		return a.StartedAt.After(m.StartedAt)
	}
	return !a.StartedAt.Equal(m.AgentStartedAt)
}

// Lifts are the commands lifting the pre-stop marks of the agents that are
// back, in order of id.
func Lifts(marks map[string]store.AgentMark, agents []registry.Agent) []store.Command {
	byID := make(map[string]registry.Agent, len(agents))
	for _, a := range agents {
		byID[a.ID] = a
	}
	var out []store.Command
	for _, id := range slices.Sorted(maps.Keys(marks)) {
		m := marks[id]
		if a, ok := byID[id]; ok && Back(m, a) {
			out = append(out, store.LiftAgentMark{ID: id, Origin: api.CordonPreStop, StartedAt: m.StartedAt})
		}
	}
	return out
}

// Controller lifts pre-stop marks while this coordinator leads.
type Controller struct {
	marks   Marks
	agents  Agents
	apply   func(ctx context.Context, cmds ...store.Command) error
	changed func()
	log     *slog.Logger
}

// New makes a controller writing through apply (the leader's one write
// path) and calling changed after a lift, so that the reconciler places
// tasks on the agent again.
func New(marks Marks, agents Agents, apply func(ctx context.Context, cmds ...store.Command) error, changed func(), log *slog.Logger) *Controller {
	if log == nil {
		log = slog.Default()
	}
	return &Controller{marks: marks, agents: agents, apply: apply, changed: changed, log: log}
}

// Step lifts the pre-stop mark of every agent that is back, each in its
// own write, and returns how many it lifted. With no pre-stop mark it
// does nothing (the usual case, every tick).
func (c *Controller) Step(ctx context.Context) int {
	marks := c.marks.Agents()
	pending := false
	for _, m := range marks {
		pending = pending || m.By() == api.CordonPreStop
	}
	if !pending {
		return 0
	}
	lifted := 0
	for _, cmd := range Lifts(marks, c.agents.Agents()) {
		l := cmd.(store.LiftAgentMark)
		// Stale: the mark changed since it was read (an operator took it
		// over, or uncordoned it): the next step decides on what stands.
		if err := c.apply(ctx, cmd); err != nil {
			level := slog.LevelWarn
			if errors.Is(err, store.ErrStale) {
				level = slog.LevelDebug
			}
			c.log.Log(ctx, level, "pre-stop mark not lifted", "agent", l.ID, "err", err)
			continue
		}
		c.log.Info("agent back after its pre-stop drain: uncordoned", "agent", l.ID, "drained_at", l.StartedAt.Format(time.RFC3339))
		lifted++
	}
	if lifted > 0 && c.changed != nil {
		c.changed()
	}
	return lifted
}
