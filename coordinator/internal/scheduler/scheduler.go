// Package scheduler decides which agent runs which task. It is a pure
// function of the tasks, the live agents and the current assignment, so it
// is deterministic and tested without a cluster.
//
// It is sticky: a task stays where it runs as long as its agent is live,
// still matches the task's selector and still has its plugin, so adding a connector, an agent or a
// task never moves a running task. Only unplaced tasks are placed: back on
// the agent that last ran one (its Prefer) when that agent can take it, else
// on the matching agent that holds the fewest tasks (ties broken by agent id).
// A cordoned agent keeps what it runs but is never given a task; a task
// leaves an agent that still fits it only when asked to (a Move), and
// Rebalance works out the moves that even the agents out.
package scheduler

import (
	"sort"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/labels"
)

// Agent is a live agent.
type Agent struct {
	ID     string
	Labels map[string]string
	// Plugins are the classes of the plugins the agent can run.
	Plugins map[string]bool
	// Cordoned agents keep the tasks they run but are given none: this is
	// how an agent is taken out of service without stopping anything.
	Cordoned bool
}

// Task is a task to place.
type Task struct {
	ID       api.TaskID
	Selector map[string]string
	// Plugin is the full class of the task's connector; a task runs only
	// on an agent that has it. Empty places it on any agent.
	Plugin string
	// Prefer is the agent an unplaced task goes back to when that agent is
	// live, not cordoned and fits it (the agent that last ran it); empty,
	// or an agent that cannot take it: the least loaded one. A placed task
	// stays where it is whatever Prefer says.
	Prefer string
}

// Move takes a task off agent From, to agent To, or to wherever the
// scheduler chooses when To is empty.
type Move struct {
	// Task is the task moved, as Rebalance returns it. In the moves given
	// to Assign the map's key names the task and Task is not read.
	Task     api.TaskID
	From, To string
}

// Fits reports whether agent a may run task t: it matches the task's
// selector and has its plugin.
func Fits(t Task, a Agent) bool {
	return labels.Matches(t.Selector, a.Labels) && (t.Plugin == "" || a.Plugins[t.Plugin])
}

// placeable reports whether t may be given to a now: a fits and is not
// cordoned.
func placeable(t Task, a Agent) bool { return !a.Cordoned && Fits(t, a) }

// Assign returns the new placement: task id → agent id. Tasks that no live
// agent matches are absent from the result.
//
// moves (nil for none) take tasks off their agents: a task whose move's
// From is the agent current places it on is placed again, on To if To is
// another live, uncordoned agent that fits it, else on the least loaded one
// other than From; with none it is left unplaced, not kept on From, which
// is how a forced drain gives a task up. A move of a task that is not on
// From (it already moved) is ignored.
func Assign(tasks []Task, agents []Agent, current map[api.TaskID]string, moves map[api.TaskID]Move) map[api.TaskID]string {
	byID := index(agents)
	out := make(map[api.TaskID]string, len(tasks))
	load := make(map[string]int, len(agents))
	// pending is a task to place; exclude is the agent it is moved off.
	type pending struct {
		t           Task
		exclude, to string
	}
	var unplaced []pending
	for _, t := range tasks {
		id, placed := current[t.ID]
		if m, ok := moves[t.ID]; ok && placed && id == m.From {
			unplaced = append(unplaced, pending{t: t, exclude: m.From, to: m.To})
			continue
		}
		if a, live := byID[id]; placed && live && Fits(t, a) {
			out[t.ID] = id
			load[id]++
			continue
		}
		unplaced = append(unplaced, pending{t: t})
	}
	sort.Slice(unplaced, func(i, j int) bool { return less(unplaced[i].t.ID, unplaced[j].t.ID) })
	// Moves to a named agent first, then tasks going back to the agent that
	// last ran them, so that the least loaded choices below count both.
	var rest []pending
	for _, p := range unplaced {
		to := p.to
		if p.exclude == "" && to == "" {
			to = p.t.Prefer
		}
		if a, ok := byID[to]; ok && to != p.exclude && placeable(p.t, a) {
			out[p.t.ID] = to
			load[to]++
			continue
		}
		rest = append(rest, p)
	}
	sorted := sortedAgents(agents)
	for _, p := range rest {
		if best := leastLoaded(p.t, sorted, load, p.exclude); best != "" {
			out[p.t.ID] = best
			load[best]++
		}
	}
	return out
}

// Eligible returns the ids of the live, uncordoned agents other than
// exclude that fit t, sorted: where a task of a draining agent can go.
// It is nil when there are none.
func Eligible(t Task, agents []Agent, exclude string) []string {
	var ids []string
	for _, a := range sortedAgents(agents) {
		if a.ID != exclude && placeable(t, a) {
			ids = append(ids, a.ID)
		}
	}
	return ids
}

// Loads returns the number of tasks current places on each live, uncordoned
// agent, agents with none included: the figures a rebalance evens out.
func Loads(agents []Agent, current map[api.TaskID]string) map[string]int {
	load := make(map[string]int, len(agents))
	for _, a := range agents {
		if !a.Cordoned {
			load[a.ID] = 0
		}
	}
	for _, id := range current {
		if _, ok := load[id]; ok {
			load[id]++
		}
	}
	return load
}

// Rebalance returns the moves, in order, that even out the number of tasks
// across live, uncordoned agents, respecting Fits. It repeatedly takes the
// most loaded agent with a task whose least loaded other fitting agent holds
// at least two tasks fewer, and moves its highest such task (by connector,
// then task id) there; it stops when no move lowers the spread, or after
// maxMoves moves (maxMoves <= 0: no limit). Each task moves at most once,
// so the moves can be carried out together (as Assign's moves). Tasks on
// cordoned agents stay, cordoned agents receive nothing, and tasks that
// current does not place on a live agent are not counted.
func Rebalance(tasks []Task, agents []Agent, current map[api.TaskID]string, maxMoves int) []Move {
	placed := make(map[api.TaskID]string, len(tasks))
	for _, t := range tasks {
		if id, ok := current[t.ID]; ok {
			placed[t.ID] = id
		}
	}
	load := Loads(agents, placed)
	// on holds each agent's movable tasks, highest id first.
	on := make(map[string][]Task, len(load))
	for _, t := range tasks {
		id, ok := placed[t.ID]
		if _, counted := load[id]; ok && counted {
			on[id] = append(on[id], t)
		}
	}
	for _, ts := range on {
		sort.Slice(ts, func(i, j int) bool { return less(ts[j].ID, ts[i].ID) })
	}
	sorted := sortedAgents(agents)
	var moves []Move
	for maxMoves <= 0 || len(moves) < maxMoves {
		m, ok := nextMove(sorted, load, on)
		if !ok {
			break
		}
		moves = append(moves, m)
	}
	return moves
}

// nextMove finds and applies (to load and on) the next move of a
// rebalance, if one lowers the spread.
func nextMove(sorted []Agent, load map[string]int, on map[string][]Task) (Move, bool) {
	sources := make([]string, 0, len(load))
	for id := range load {
		sources = append(sources, id)
	}
	sort.Slice(sources, func(i, j int) bool {
		if load[sources[i]] != load[sources[j]] {
			return load[sources[i]] > load[sources[j]]
		}
		return sources[i] < sources[j]
	})
	if len(sources) == 0 {
		return Move{}, false
	}
	least := load[sources[len(sources)-1]]
	for _, from := range sources {
		if load[from]-least < 2 {
			break // nor can any agent after it, less loaded still
		}
		for i, t := range on[from] {
			to := leastLoaded(t, sorted, load, from)
			if to == "" || load[from]-load[to] < 2 {
				continue
			}
			on[from] = append(on[from][:i:i], on[from][i+1:]...)
			load[from]--
			load[to]++
			return Move{Task: t.ID, From: from, To: to}, true
		}
	}
	return Move{}, false
}

// leastLoaded returns the uncordoned agent other than exclude that fits t
// and holds the fewest tasks, the first by id on a tie; "" if none fits.
// sorted must be sorted by id.
func leastLoaded(t Task, sorted []Agent, load map[string]int, exclude string) string {
	best := ""
	for _, a := range sorted {
		if a.ID == exclude || !placeable(t, a) {
			continue
		}
		if best == "" || load[a.ID] < load[best] {
			best = a.ID
		}
	}
	return best
}

func index(agents []Agent) map[string]Agent {
	byID := make(map[string]Agent, len(agents))
	for _, a := range agents {
		byID[a.ID] = a
	}
	return byID
}

func sortedAgents(agents []Agent) []Agent {
	sorted := append([]Agent(nil), agents...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	return sorted
}

func less(a, b api.TaskID) bool {
	if a.Connector != b.Connector {
		return a.Connector < b.Connector
	}
	return a.Task < b.Task
}
