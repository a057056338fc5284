package reconciler

import (
	"context"

	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
)

// Status writes go through the term's one status queue, in order: agent
// reports and reconcile passes queue and go on; a REST call that must
// answer with its status written waits for it.

// QueueStatus queues status records; without leadership there is no queue
// and nothing to write.
func (r *Reconciler) QueueStatus(recs ...records.Record) {
	if q := r.statusQ.Load(); q != nil && len(recs) > 0 {
		q.Enqueue(recs...)
	}
}

// WriteStatus queues status records and waits until they are written.
func (r *Reconciler) WriteStatus(ctx context.Context, recs ...records.Record) error {
	q := r.statusQ.Load()
	if q == nil {
		return store.ErrNotLeader
	}
	return q.Write(ctx, recs...)
}

// TaskStatus is a task's status as the leader last decided it: a record
// still queued wins over the topic, so a pass does not decide again on
// what it already decided.
func (r *Reconciler) TaskStatus(connector string, task int) (store.InstanceStatus, bool) {
	return r.statusView(records.TaskStatusKey(connector, task), func() (store.InstanceStatus, bool) {
		return r.cfg.Statuses.Task(connector, task)
	})
}

// ConnectorStatus is TaskStatus for a connector.
func (r *Reconciler) ConnectorStatus(name string) (store.InstanceStatus, bool) {
	return r.statusView(records.ConnectorStatusKey(name), func() (store.InstanceStatus, bool) {
		return r.cfg.Statuses.Connector(name)
	})
}

func (r *Reconciler) statusView(key string, fromTopic func() (store.InstanceStatus, bool)) (store.InstanceStatus, bool) {
	if q := r.statusQ.Load(); q != nil {
		if rec, ok := q.Pending(key); ok {
			return store.DecodeInstance(rec)
		}
	}
	return fromTopic()
}

// ConnectorStatusRecord is a connector's status record, as this
// coordinator (workerID) writes it.
func ConnectorStatusRecord(name, state, trace, workerID string) records.Record {
	return records.Record{Key: records.ConnectorStatusKey(name), Value: records.EncodeStatus(state, trace, workerID, 0)}
}
