package herder

import (
	"context"

	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
)

// Status writes go through the leadership's one status queue, in order:
// agent reports and reconcile passes queue and go on; a REST call that must
// answer with its status written waits for it.

// queueStatus queues status records; without leadership there is no queue
// and nothing to write.
func (h *Herder) queueStatus(recs ...records.Record) {
	if q := h.statusQ.Load(); q != nil {
		q.Enqueue(recs...)
	}
}

// writeStatus queues status records and waits until they are written.
func (h *Herder) writeStatus(ctx context.Context, recs ...records.Record) error {
	q := h.statusQ.Load()
	if q == nil {
		return store.ErrNotLeader
	}
	return q.Write(ctx, recs...)
}

// taskStatus is a task's status as the leader last decided it: a record
// still queued wins over the topic, so a pass does not decide again on
// what it already decided.
func (h *Herder) taskStatus(connector string, task int) (store.InstanceStatus, bool) {
	return h.statusView(records.TaskStatusKey(connector, task), func() (store.InstanceStatus, bool) {
		return h.statuses.State.Task(connector, task)
	})
}

// connectorStatus is taskStatus for a connector.
func (h *Herder) connectorStatus(name string) (store.InstanceStatus, bool) {
	return h.statusView(records.ConnectorStatusKey(name), func() (store.InstanceStatus, bool) {
		return h.statuses.State.Connector(name)
	})
}

func (h *Herder) statusView(key string, fromTopic func() (store.InstanceStatus, bool)) (store.InstanceStatus, bool) {
	if q := h.statusQ.Load(); q != nil {
		if rec, ok := q.Pending(key); ok {
			return store.DecodeInstance(rec)
		}
	}
	return fromTopic()
}
