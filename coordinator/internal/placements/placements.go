// Package placements records where each task runs and at which generation.
//
// A generation is issued by the leader each time it places a task anew
// (first placement, a move, a config change, a restart); an agent stamps
// its status reports with it, so a late report from an older owner loses.
// The counter only grows: it starts above every generation the status topic
// shows, so a new leader does not issue one its predecessor recorded, and it
// moves only when the leader issues one: a report of a generation beyond it
// is not adopted.
//
//	plan ─► Set (new generation) ─► agent runs it ─► reports carry the generation
//	restart ─► Restart (config hash cleared) ─► next plan places it at a new generation
//	agent refused (a revoke overtook it) ─► ForgetIf ─► next plan places it again
//
// A Table is plain data and not safe for concurrent use: the herder guards
// it and the agent registry with one mutex.
package placements

import (
	"maps"
	"math"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"
)

// Placement is where a task runs and which generation of it.
type Placement struct {
	Agent      string
	Generation int64
	// Hash identifies the connector and task config the agent was sent;
	// empty when unknown (adopted from the status topic) or cleared to
	// force a restart.
	Hash   string
	Paused bool
}

// Table is the placement of every placed task.
type Table struct {
	byTask map[api.TaskID]Placement
	gen    int64
}

// New returns an empty table.
func New() *Table { return &Table{byTask: map[api.TaskID]Placement{}} }

// Get returns a task's placement.
func (t *Table) Get(id api.TaskID) (Placement, bool) {
	p, ok := t.byTask[id]
	return p, ok
}

// All returns a copy of every placement.
func (t *Table) All() map[api.TaskID]Placement { return maps.Clone(t.byTask) }

// Replace installs a whole new table, as a plan computed it, with the
// highest generation issued so far.
func (t *Table) Replace(byTask map[api.TaskID]Placement, gen int64) {
	t.byTask = maps.Clone(byTask)
	t.ObserveGeneration(gen)
}

// Generation is the highest generation issued or seen.
func (t *Table) Generation() int64 { return t.gen }

// ObserveGeneration raises the counter to gen, so the next generation
// issued is above every one in use.
func (t *Table) ObserveGeneration(gen int64) {
	if gen > t.gen {
		t.gen = gen
	}
}

// Adopt records what an agent reports running when nothing is placed for
// the task (a new leader learning where tasks run), and fills in the
// config hash of a placement adopted from the status topic once its agent
// says which config it runs. Any other report leaves the table as it is.
// A report of a generation never issued (see Issued) is not adopted, and
// Adopt returns false: generations come from the leader alone, and a
// counter that followed a forged one would skip ahead, or saturate.
func (t *Table) Adopt(agent string, rt wire.RunningTask) bool {
	if !t.Issued(rt.Generation) {
		return false
	}
	p, ok := t.byTask[rt.ID]
	switch {
	case !ok:
		t.byTask[rt.ID] = Placement{Agent: agent, Generation: rt.Generation, Hash: rt.ConfigHash}
	case p.Agent == agent && p.Generation == rt.Generation && p.Hash == "":
		p.Hash = rt.ConfigHash
		t.byTask[rt.ID] = p
	}
	return true
}

// Issued reports whether gen may have been issued: positive, and at most
// the highest generation issued or seen in the status topic. A restarted
// leader starts from the status topic's highest, so every generation its
// predecessor recorded passes; one its predecessor issued but never
// recorded does not, and the task is replaced (at a new generation)
// rather than adopted.
func (t *Table) Issued(gen int64) bool { return gen > 0 && gen <= t.gen }

// Presume places a task on the owner the status topic names, at the
// generation it names, with no known config hash.
func (t *Table) Presume(id api.TaskID, agent string, gen int64) {
	t.byTask[id] = Placement{Agent: agent, Generation: gen}
	t.ObserveGeneration(gen)
}

// Restart clears a placed task's config hash: an empty hash never matches
// the desired one, so the next plan assigns the task again under a new
// generation and its agent restarts it.
func (t *Table) Restart(id api.TaskID) {
	if p, ok := t.byTask[id]; ok {
		p.Hash = ""
		t.byTask[id] = p
	}
}

// ForgetIf drops a placement if it is still on agent at generation gen, so
// that the next plan places the task again instead of resending a void
// assignment. It reports whether it dropped it.
func (t *Table) ForgetIf(id api.TaskID, agent string, gen int64) bool {
	if p, ok := t.byTask[id]; ok && p.Agent == agent && p.Generation == gen {
		delete(t.byTask, id)
		return true
	}
	return false
}

// ForgetAgent drops every placement on agent, which stopped its tasks (it
// left), so that the next plan places them again.
func (t *Table) ForgetAgent(agent string) {
	for id, p := range t.byTask {
		if p.Agent == agent {
			delete(t.byTask, id)
		}
	}
}

// Placed reports whether a task is placed.
func (t *Table) Placed(id api.TaskID) bool {
	_, ok := t.byTask[id]
	return ok
}

// OfConnector returns the placed tasks of a connector.
func (t *Table) OfConnector(connector string) []api.TaskID {
	var out []api.TaskID
	for id := range t.byTask {
		if id.Connector == connector {
			out = append(out, id)
		}
	}
	return out
}

// NextGeneration returns the generation after gen. It saturates instead of
// wrapping: a counter at the largest int64 stays there rather than turning
// negative, where every report would lose to an old one.
func NextGeneration(gen int64) int64 {
	if gen == math.MaxInt64 {
		return math.MaxInt64
	}
	return gen + 1
}
