package reconciler

import (
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/placements"
	"github.com/sluice-io/sluice/coordinator/internal/planner"
	"github.com/sluice-io/sluice/coordinator/internal/registry"
)

// A start is when agents come (back) to a leader that has none: the start
// of a term (a coordinator restarted or took over), and the first
// registration after every agent left or was lost (the whole fleet
// restarted under a running leader). Placement in a running cluster places
// a task the moment an agent can take it; at a start that would give the
// first agent to register everything. So, at a start:
//
//   - A task goes back to the agent that last ran it (its status's worker
//     id, planner.Desired.LastAgent) when that agent can take it, and waits
//     for it while it may still come back: every agent the status topic
//     names is presumed at the term's start (Establish), and every agent
//     that left gracefully within a lease is presumed again when the last
//     registered agent leaves (Table.leave). A presumed agent holds its
//     lease — from the term's start, or from when it left — and its tasks
//     go elsewhere once it runs out. An agent taken for lost (its NATS
//     connection closed, its lease ran out) is presumed by nobody: its
//     tasks are placed at once, as in a running cluster.
//   - The backlog — the unplaced tasks that no agent ever ran, or whose
//     last agent is neither registered nor presumed (lost), when the
//     start's first agent registers — is held for the settle window after
//     that registration, or until every presumed agent has registered or
//     expired, so that agents starting together share it. Tasks that
//     appear later in the window are placed at once.
//
// Neither moves a running task: both concern unplaced tasks only, so an
// agent that joins a running cluster still moves nothing.
//
//	term start / the last agent gone ─► open ─► first registration: backlog taken
//	  ─► settle window over, every presumed agent back (or expired), or no backlog ─► closed

// startup is the state of the current start. It is plain data, guarded by
// the Table's mutex; time is passed in.
type startup struct {
	// settle is how long the backlog waits after the start's first
	// registration; 0: it is never held.
	settle time.Duration
	open   bool
	// first is when the start's first agent registered (zero: none yet).
	first time.Time
	// presumed: agents were presumed when the first registered, so the
	// start may close as soon as they are all back.
	presumed bool
	backlog  map[api.TaskID]bool
}

// begin opens a start (again): the next registration is its first.
func (s *startup) begin() {
	s.open, s.first, s.presumed, s.backlog = true, time.Time{}, false, nil
}

// holds returns the backlog tasks the start holds back at now, and closes
// the start once it holds nothing more. agents are the registry's (the
// registered and the presumed), desired and placed the plan's input. With
// no agent registered a start is (re)opened: nothing can be placed yet.
func (s *startup) holds(now time.Time, agents []registry.Agent, desired map[api.TaskID]planner.Desired, placed map[api.TaskID]placements.Placement) map[api.TaskID]bool {
	registered, presumed := 0, 0
	for _, a := range agents {
		if a.Registered {
			registered++
		} else {
			presumed++
		}
	}
	if registered == 0 {
		if !s.open || !s.first.IsZero() {
			s.begin()
		}
		return nil
	}
	if !s.open {
		return nil
	}
	if s.first.IsZero() {
		s.first, s.presumed, s.backlog = now, presumed > 0, map[api.TaskID]bool{}
		// Tasks of an agent nobody waits for (lost: the whole fleet
		// crashed under a running leader) are as unowned as those no
		// agent ran: they are shared by the agents starting together too.
		known := make(map[string]bool, len(agents))
		for _, a := range agents {
			known[a.ID] = true
		}
		for id, d := range desired {
			if _, ok := placed[id]; !ok && !known[d.LastAgent] {
				s.backlog[id] = true
			}
		}
	}
	if len(s.backlog) == 0 || s.settle <= 0 || !now.Before(s.first.Add(s.settle)) || s.presumed && presumed == 0 {
		s.open, s.backlog = false, nil
		return nil
	}
	held := map[api.TaskID]bool{}
	for id := range s.backlog {
		if _, want := desired[id]; want {
			if _, ok := placed[id]; !ok {
				held[id] = true
			}
		}
	}
	return held
}

// settleEnd is when the start's settle window ends, if one is under way:
// the reconcile loop runs a pass then.
func (s *startup) settleEnd() (time.Time, bool) {
	if !s.open || s.first.IsZero() || len(s.backlog) == 0 || s.settle <= 0 {
		return time.Time{}, false
	}
	return s.first.Add(s.settle), true
}
