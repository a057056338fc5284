// Package drain is the leader controller that empties draining agents: it
// decides, from a snapshot of the placements, which of a draining agent's
// tasks move next (Parallel at a time) and asks the reconciler to move
// them. The drain itself lives in the fleet topic (an agent's mark), so a
// new leader's controller takes it up where the old one stopped.
//
//	PUT …/drain ─► mark draining (fleet topic) ─► Step: Decide ─► reconciler.Move ─► planner moves the task
package drain

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/reconciler"
	"github.com/sluice-io/sluice/coordinator/internal/scheduler"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/labels"
)

// Parallel bounds the tasks one drain moves at a time.
const Parallel = 2

// Mover is the reconciler as a drain uses it.
type Mover interface {
	// Snapshot is the placement world now, moves done retired.
	Snapshot() reconciler.Snapshot
	// DrainMove starts moving task off from (anywhere, or nowhere) for
	// the drain of from that started at drain.
	DrainMove(task api.TaskID, from string, drain time.Time) error
}

// Marks are the agents' marks in the fleet topic (store.FleetState).
type Marks interface {
	Agents() map[string]store.AgentMark
}

// Start is one move a drain starts: Task off agent From, for the drain
// that started at Drain (its mark's StartedAt).
type Start struct {
	Task  api.TaskID
	From  string
	Drain time.Time
}

// Decide returns the moves to start now: for every draining agent, in
// order of id, its tasks in order, up to Parallel in flight per agent. A
// task no other live, uncordoned agent may run is left (blocked) unless
// the drain is forced, which moves it off to nowhere (unassigned).
func Decide(s reconciler.Snapshot, marks map[string]store.AgentMark) []Start {
	var out []Start
	moving := maps.Clone(s.Moves)
	if moving == nil {
		moving = map[api.TaskID]reconciler.MoveInfo{}
	}
	for _, agent := range slices.Sorted(maps.Keys(marks)) {
		m := marks[agent]
		if m.State != api.AgentDraining {
			continue
		}
		inflight := 0
		for _, mv := range moving {
			if mv.From == agent {
				inflight++
			}
		}
		for _, t := range s.Tasks {
			if inflight >= Parallel {
				break
			}
			if s.Current[t.ID] != agent {
				continue
			}
			if _, busy := moving[t.ID]; busy {
				continue
			}
			if len(scheduler.Eligible(t, s.Agents, agent)) == 0 && !m.Force {
				continue // blocked: shown in the drain's status
			}
			moving[t.ID] = reconciler.MoveInfo{From: agent, Owner: reconciler.OwnerDrain, Since: s.At, Drain: m.StartedAt}
			out = append(out, Start{Task: t.ID, From: agent, Drain: m.StartedAt})
			inflight++
		}
	}
	return out
}

// Blocked are the tasks placed on agent that no other live, uncordoned
// agent may run, with why.
func Blocked(s reconciler.Snapshot, agent string) []api.BlockedTask {
	out := []api.BlockedTask{}
	for _, t := range s.Tasks {
		if s.Current[t.ID] != agent || len(scheduler.Eligible(t, s.Agents, agent)) > 0 {
			continue
		}
		out = append(out, api.BlockedTask{Connector: t.ID.Connector, Task: t.ID.Task, Reason: blockedReason(t)})
	}
	return out
}

// DescribeBlocked names blocked tasks as a refusal lists them:
// "connector/task (reason)", comma-separated.
func DescribeBlocked(blocked []api.BlockedTask) string {
	names := make([]string, len(blocked))
	for i, b := range blocked {
		names[i] = fmt.Sprintf("%s/%d (%s)", b.Connector, b.Task, b.Reason)
	}
	return strings.Join(names, ", ")
}

// Mark is an agent's mark as a caller asks for it.
type Mark struct {
	// State is AgentCordoned or AgentDraining; AgentActive removes the
	// mark.
	State string
	// Force: a drain that unassigns what it cannot move.
	Force bool
	// Origin is who asks (api.CordonOperator, CordonPreStop,
	// CordonAgentRoll), Principal the caller behind it, if named.
	Origin    string
	Principal string
	// AgentStartedAt is, for a pre-stop drain, when the agent's running
	// process started (zero: not known), which the lift compares a
	// registering process's with (fleet/prestop).
	AgentStartedAt time.Time
}

// originRank orders the origins by whose mark a caller may take over: an
// operator's over a rolling restart's over a pre-stop hook's. The weaker
// never takes over the stronger: a pre-stop hook draining an agent an
// operator cordoned leaves the mark the operator's, and an operator
// cordoning an agent its pre-stop hook drains makes the mark theirs —
// either way it stays when the agent comes back.
func originRank(origin string) int {
	switch origin {
	case api.CordonPreStop:
		return 0
	case api.CordonAgentRoll:
		return 1
	}
	return 2
}

// MarkCommand is the command giving agent id, whose mark is cur (ok: it
// has one), the mark want, at now. It returns nil when the agent is so
// already: a cordon or a drain keeps when it started, and who made it
// unless a stronger origin takes it over (originRank), which keeps when it
// started too.
func MarkCommand(id string, cur store.AgentMark, ok bool, want Mark, now time.Time) store.Command {
	if want.State == api.AgentActive {
		if !ok {
			return nil
		}
		return store.MarkAgent{ID: id, Mark: store.AgentMark{State: api.AgentActive}}
	}
	mark := store.AgentMark{State: want.State, Force: want.Force, StartedAt: now.UTC(), Principal: want.Principal, Origin: want.Origin}
	if want.Origin == api.CordonPreStop {
		mark.AgentStartedAt = want.AgentStartedAt.UTC()
	}
	if !ok {
		return store.MarkAgent{ID: id, Mark: mark}
	}
	if originRank(cur.By()) > originRank(want.Origin) {
		mark.Origin, mark.Principal, mark.AgentStartedAt = cur.By(), cur.Principal, cur.AgentStartedAt
	}
	if cur.State == want.State && cur.Force == want.Force {
		// The same mark again is nothing to write — but a pre-stop drain
		// of a newer process of the agent (it restarted and is stopping
		// again before its old mark was lifted) is that process's own,
		// or the lift meant for the old one would end it mid-drain.
		if mark.Origin == cur.By() {
			if mark.AgentStartedAt.Equal(cur.AgentStartedAt) {
				return nil
			}
			return store.MarkAgent{ID: id, Mark: mark} // a new drain: counted from now
		}
		mark.StartedAt = cur.StartedAt
	}
	return store.MarkAgent{ID: id, Mark: mark}
}

// blockedReason says why no other agent may run t.
func blockedReason(t scheduler.Task) string {
	var parts []string
	if len(t.Selector) > 0 {
		parts = append(parts, "sluice.agent.selector "+labels.Format(t.Selector))
	}
	if t.Plugin != "" {
		parts = append(parts, "plugin "+t.Plugin)
	}
	if len(parts) == 0 {
		return "no other live, uncordoned agent"
	}
	return "no other live, uncordoned agent has " + strings.Join(parts, " and ")
}

// Status is the drain of agent, marked m (draining), as s shows it: done
// once every task left and runs where it went (or, forced, nowhere),
// blocked while only blocked tasks remain, running otherwise.
func Status(s reconciler.Snapshot, agent string, m store.AgentMark) api.DrainStatus {
	st := api.DrainStatus{Agent: agent, Force: m.Force, StartedAt: m.StartedAt, Origin: m.By(), Remaining: s.TasksOn(agent), Moving: []api.TaskID{}, Blocked: []api.BlockedTask{}}
	for id, mv := range s.Moves {
		if mv.From == agent {
			st.Moving = append(st.Moving, id)
		}
	}
	sort.Slice(st.Moving, func(i, j int) bool { return reconciler.TaskLess(st.Moving[i], st.Moving[j]) })
	// Only this drain's moves: an agent drained, uncordoned and drained
	// again starts from zero.
	if tally := s.Drained[agent]; tally.Started.Equal(m.StartedAt) {
		st.Moved = tally.Moved
	}
	if !m.Force {
		st.Blocked = Blocked(s, agent)
	}
	switch {
	case len(st.Remaining) == 0 && len(st.Moving) == 0:
		st.State = api.DrainDone
	case len(st.Blocked) > 0 && len(st.Moving) == 0:
		st.State = api.DrainBlocked
	default:
		st.State = api.DrainRunning
	}
	return st
}

// Controller drives the drains while this coordinator leads.
type Controller struct {
	mover Mover
	marks Marks
	log   *slog.Logger
}

// New makes a drain controller.
func New(mover Mover, marks Marks, log *slog.Logger) *Controller {
	if log == nil {
		log = slog.Default()
	}
	return &Controller{mover: mover, marks: marks, log: log}
}

// Step starts the next moves of every draining agent and returns how many
// it started. With no agent draining it does nothing (the usual case,
// every tick).
func (c *Controller) Step(ctx context.Context) int {
	marks := c.marks.Agents()
	draining := false
	for _, m := range marks {
		draining = draining || m.State == api.AgentDraining
	}
	if !draining {
		return 0
	}
	started := 0
	for _, s := range Decide(c.mover.Snapshot(), marks) {
		// A refusal means the task moved or went meanwhile: the next step
		// decides on what then stands.
		if err := c.mover.DrainMove(s.Task, s.From, s.Drain); err != nil {
			c.log.Debug("drain: move not started", "task", s.Task, "err", err)
			continue
		}
		started++
	}
	return started
}
