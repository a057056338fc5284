package herder

import (
	"fmt"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/coordinator/internal/agentrpc"
	"github.com/sluice-io/sluice/shared/records"
)

// Sizes that come from the wire are bounded here:
//
//   - A refused or failed command is logged once per cause and warnEvery,
//     and retried at the reconcile loop's pace, never in a loop of its own.
//   - An assignment that cannot be sent at all (larger than the agent puts
//     together from chunks) fails its task, with a trace naming the limit,
//     and holds up no other assignment.

// warnEvery is how often one cause of a repeated warning is logged.
const warnEvery = time.Minute

// warnDue reports whether a warning about key may be logged now.
func (h *Herder) warnDue(key string) bool { return h.warn.Due(key, time.Now()) }

// assignFailed handles a batch of assignments whose request failed. A task
// whose assignment alone is too large to send is marked FAILED, with the
// limit in its trace; the other failures are logged (rate-limited) and
// retried by the next reconcile pass.
func (h *Herder) assignFailed(agent string, f agentrpc.AssignFailure) {
	e := v1.AsError(f.Err)
	if e.Code == v1.CodeTooLarge && len(f.Tasks) == 1 {
		a := f.Tasks[0]
		trace := fmt.Sprintf("The task's assignment cannot be sent to agent %s: %s", agent, e.Message)
		if st, ok := h.taskStatus(a.ID.Connector, a.ID.Task); !ok || st.State != v1.StateFailed || st.Trace != trace {
			h.queueStatus(records.Record{Key: records.TaskStatusKey(a.ID.Connector, a.ID.Task),
				Value: records.EncodeStatus(v1.StateFailed, trace, agent, a.Generation)})
		}
		if h.warnDue("assign-too-large/" + a.ID.String()) {
			h.log.Warn("assignment too large to send; the task is failed", "agent", agent, "task", a.ID.String(), "err", e.Message)
		}
		return
	}
	if h.warnDue(fmt.Sprintf("assign-failed/%s/%d", agent, e.Code)) {
		h.log.Warn("assign failed; retrying on the next pass", "agent", agent, "tasks", len(f.Tasks), "err", f.Err)
	}
}
