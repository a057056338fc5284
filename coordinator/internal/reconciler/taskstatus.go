package reconciler

import (
	"sync/atomic"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
)

// statusLookup is a task's status as the leader last decided it.
type statusLookup func(connector string, task int) (store.InstanceStatus, bool)

// writeTaskStatuses marks tasks without an agent UNASSIGNED and removes the
// statuses of tasks that no longer exist, or that lie beyond their
// connector's current task count (it shrank, or it stopped).
func (r *Reconciler) writeTaskStatuses(unassigned []api.TaskID, reasons map[api.TaskID]string, removed []api.TaskID) {
	r.status.Queue(planTaskStatuses(unassigned, reasons, removed, r.status.Task)...)
	r.status.Queue(r.pruneRecords()...)
}

// planTaskStatuses decides the records of a pass's unassigned and removed
// tasks. An UNASSIGNED task keeps the worker id of its status — the agent
// that last ran it, "" when none has — as Kafka Connect shows the worker
// that last ran a task it let go: that is how a restarted leader knows
// where to place the task back (startup.go).
func planTaskStatuses(unassigned []api.TaskID, reasons map[api.TaskID]string, removed []api.TaskID, status statusLookup) []records.Record {
	var recs []records.Record
	for _, id := range unassigned {
		st, ok := status(id.Connector, id.Task)
		if ok && st.State == api.StateUnassigned && st.Trace == reasons[id] {
			continue
		}
		// Keep the task's own generation: a cluster-wide one would be
		// higher than the generation its agent reports when it comes back
		// and adopts it, and that report would then be ignored.
		recs = append(recs, records.Record{Key: records.TaskStatusKey(id.Connector, id.Task), Value: records.EncodeStatus(api.StateUnassigned, reasons[id], st.WorkerID, st.Generation)})
	}
	for _, id := range removed {
		if _, ok := status(id.Connector, id.Task); ok {
			recs = append(recs, records.Record{Key: records.TaskStatusKey(id.Connector, id.Task)})
		}
	}
	return recs
}

// pruneRecords are the tombstones of task statuses beyond their
// connector's current task count whose task is placed nowhere.
func (r *Reconciler) pruneRecords() []records.Record {
	var recs []records.Record
	for conn := range r.cfg.Statuses.TaskOwners() {
		c, ok := r.cfg.Connectors.Get(conn)
		n := 0
		if ok && c.TargetState != records.TargetStopped {
			n = len(c.Tasks)
		}
		for _, task := range r.cfg.Statuses.TaskIDs(conn) {
			if task < n {
				continue
			}
			_, placed := r.table.Placement(api.TaskID{Connector: conn, Task: task})
			if _, has := r.status.Task(conn, task); !placed && has {
				recs = append(recs, records.Record{Key: records.TaskStatusKey(conn, task)})
			}
		}
	}
	return recs
}

// assignSlot is an assignment in flight to an agent.
type assignSlot struct {
	// skipped: a pass had assignments for the agent and did not send them.
	skipped atomic.Bool
}
