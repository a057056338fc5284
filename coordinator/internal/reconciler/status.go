package reconciler

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/sluice-io/sluice/coordinator/internal/statusqueue"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/records"
)

// StatusWriter writes the term's statuses through its one status queue,
// in order: agent reports and reconcile passes queue and go on; a REST call
// that must answer with its status written waits for it. It reads a
// status as the leader last decided it: a record still queued wins over
// the topic.
type StatusWriter struct {
	topic  Statuses
	log    *slog.Logger
	faults faults.Injector
	// q is the term's queue; nil while following.
	q atomic.Pointer[statusqueue.Queue]
}

// Start starts the term's status queue, writing with write, until ctx
// ends or stop is called; stop takes it out of use first, then waits for it
// to end.
func (w *StatusWriter) Start(ctx context.Context, write func(context.Context, ...records.Record) error) (q *statusqueue.Queue, stop func()) {
	q = statusqueue.New(write, statusqueue.Options{Logger: w.log, Faults: w.faults})
	qctx, qcancel := context.WithCancel(ctx)
	qdone := make(chan struct{})
	go func() { defer close(qdone); q.Run(qctx) }()
	w.q.Store(q)
	return q, func() {
		w.q.CompareAndSwap(q, nil)
		qcancel()
		<-qdone
	}
}

// Queue queues status records; without leadership there is no queue
// and nothing to write.
func (w *StatusWriter) Queue(recs ...records.Record) {
	if q := w.q.Load(); q != nil && len(recs) > 0 {
		q.Enqueue(recs...)
	}
}

// Write queues status records and waits until they are written.
func (w *StatusWriter) Write(ctx context.Context, recs ...records.Record) error {
	q := w.q.Load()
	if q == nil {
		return store.ErrNotLeader
	}
	return q.Write(ctx, recs...)
}

// Task is a task's status as the leader last decided it: a record
// still queued wins over the topic, so a pass does not decide again on
// what it already decided.
func (w *StatusWriter) Task(connector string, task int) (store.InstanceStatus, bool) {
	return w.view(records.TaskStatusKey(connector, task), func() (store.InstanceStatus, bool) {
		return w.topic.Task(connector, task)
	})
}

// Connector is Task for a connector.
func (w *StatusWriter) Connector(name string) (store.InstanceStatus, bool) {
	return w.view(records.ConnectorStatusKey(name), func() (store.InstanceStatus, bool) {
		return w.topic.Connector(name)
	})
}

func (w *StatusWriter) view(key string, fromTopic func() (store.InstanceStatus, bool)) (store.InstanceStatus, bool) {
	if q := w.q.Load(); q != nil {
		if rec, ok := q.Pending(key); ok {
			return store.DecodeInstance(rec)
		}
	}
	return fromTopic()
}

// ConnectorStatusRecord is a connector's status record, as this
// coordinator (workerID) writes it.
func ConnectorStatusRecord(name, state, trace, workerID string) records.Record {
	return store.PutConnectorStatus{Name: name, State: state, Trace: trace, Worker: workerID}.Record()
}
