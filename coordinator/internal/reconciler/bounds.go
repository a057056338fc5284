package reconciler

import (
	"fmt"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/agentrpc"
	"github.com/sluice-io/sluice/shared/records"
)

// Numbers and sizes that come from the wire are bounded here:
//
//   - Generations are issued only by the leader. A report (register,
//     heartbeat, status) carrying one beyond any it issued or read from the
//     status topic is ignored — the task is not adopted at it, nor does the
//     counter move to it — and the planner revokes or replaces the instance
//     the agent runs, as it does any zombie.
//   - A refused or failed command is logged once per cause and warnEvery,
//     and retried at the reconcile loop's pace, never in a loop of its own.
//   - An assignment that cannot be sent at all (larger than the agent puts
//     together from chunks) fails its task, with a trace naming the limit,
//     and holds up no other assignment.

// warnEvery is how often one cause of a repeated warning is logged.
const warnEvery = time.Minute

// warnDue reports whether a warning about key may be logged now.
func (r *Reconciler) warnDue(key string) bool { return r.warn.Due(key, r.now()) }

// ignoreGeneration logs, once per agent and period, that a report of
// agent named a generation this leader never issued.
func (r *Reconciler) ignoreGeneration(what, agent string, id api.TaskID, gen int64) {
	if r.warnDue("generation/" + agent) {
		r.log.Warn("ignoring a report of a generation this coordinator never issued", "report", what,
			"agent", agent, "task", id.String(), "connector", id.Connector, "generation", gen, "highest_issued", r.table.Generation())
	}
}

// assignFailed handles a batch of assignments whose request failed. A task
// whose assignment alone is too large to send is marked FAILED, with the
// limit in its trace; the other failures are logged (rate-limited) and
// retried by the next reconcile pass.
func (r *Reconciler) assignFailed(agent string, f agentrpc.AssignFailure) {
	e := api.AsError(f.Err)
	if e.Code == api.CodeTooLarge && len(f.Tasks) == 1 {
		a := f.Tasks[0]
		trace := fmt.Sprintf("The task's assignment cannot be sent to agent %s: %s", agent, e.Message)
		if st, ok := r.status.Task(a.ID.Connector, a.ID.Task); !ok || st.State != api.StateFailed || st.Trace != trace {
			r.status.Queue(records.Record{Key: records.TaskStatusKey(a.ID.Connector, a.ID.Task),
				Value: records.EncodeStatus(api.StateFailed, trace, agent, a.Generation)})
		}
		if r.warnDue("assign-too-large/" + a.ID.String()) {
			r.log.Warn("assignment too large to send; the task is failed", "agent", agent, "task", a.ID.String(), "connector", a.ID.Connector, "err", e.Message)
		}
		return
	}
	if r.warnDue(fmt.Sprintf("assign-failed/%s/%d", agent, e.Code)) {
		r.log.Warn("assign failed; retrying on the next pass", "agent", agent, "tasks", len(f.Tasks), "err", f.Err)
	}
}
