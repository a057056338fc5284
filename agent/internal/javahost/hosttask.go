package javahost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
)

// stopTimeout bounds task.stop: a plugin that hangs in stop must not hold
// the agent's revoke forever.
const stopTimeout = 30 * time.Second

// hostTask is what the Java source and sink tasks share: the host they
// started on, their id there, and the OffsetStorageReader they serve.
type hostTask struct {
	sup    *Supervisor
	id     string
	conn   map[string]string
	worker map[string]string
	// c is the connection the task started on: a task lives in one JVM,
	// so once that is lost every call fails, even after a restart.
	c       *Conn
	offsets connect.OffsetReader
	// dead is a sink task's dead letter queue (nil: none, and always for
	// a source task, as in Kafka Connect).
	dead connect.DeadLetterQueue
}

func newHostTask(sup *Supervisor, id api.TaskID, conn, worker map[string]string) hostTask {
	return hostTask{sup: sup, id: fmt.Sprintf("%s-%d", id.Connector, id.Task), conn: conn, worker: worker}
}

// start starts the task in the host; ep serves what the host asks of it,
// registered first since a task may read its offsets while starting.
func (h *hostTask) start(ctx context.Context, props map[string]string, ep taskEndpoint, kind connect.Kind) error {
	c, err := h.sup.Conn(ctx)
	if err != nil {
		return err
	}
	h.c = c
	h.sup.router.addTask(h.id, ep)
	req := taskStartRequest{ID: h.id, ConnectorConfig: h.conn, TaskConfig: props, Worker: h.worker}
	var resp taskStartReply
	if err := h.call(ctx, OpTaskStart, req, &resp); err != nil {
		if !errors.Is(err, ErrHostLost) {
			// The start may have been given up here (ctx ended: the task is
			// being stopped, replaced by a newer config) while the host goes
			// on starting it: stop it there too, or it would run on unowned
			// and refuse the next start of its id. The host runs a task's
			// starts and stops in order, and stopping one not running is no
			// error.
			_ = h.stopInHost()
		}
		h.sup.router.removeTask(h.id, ep)
		return err
	}
	if resp.Kind != string(kind) {
		_ = h.call(ctx, OpTaskStop, taskRef{h.id}, nil)
		h.sup.router.removeTask(h.id, ep)
		return fmt.Errorf("the connector's task is a %s task, not a %s task", resp.Kind, kind)
	}
	return nil
}

// call calls op on the task's host; a plugin's exception becomes an
// error whose text is its Java stack trace, which the runtime reports as
// the task's trace.
func (h *hostTask) call(ctx context.Context, op string, req, resp any) error {
	if h.c == nil {
		return fmt.Errorf("%s: task %s not started", op, h.id)
	}
	return asTaskError(h.c.CallJSON(ctx, op, req, resp))
}

func asTaskError(err error) error {
	if he, ok := errors.AsType[*HostError](err); ok && he.Trace != "" {
		return errors.New(he.Trace)
	}
	return err
}

// stop stops the task in the host. A task whose host is gone is stopped
// already: that is no error of the stop.
func (h *hostTask) stop(ep taskEndpoint) error {
	defer h.sup.router.removeTask(h.id, ep)
	return h.stopInHost()
}

// stopInHost sends task.stop, within stopTimeout whatever the caller's
// context; a host gone is no error.
func (h *hostTask) stopInHost() error {
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	if err := h.call(ctx, OpTaskStop, taskRef{h.id}, nil); err != nil && !errors.Is(err, ErrHostLost) {
		return err
	}
	return nil
}

// Err is nil while the task's host lives, then why it is gone: the
// runtime fails the task at its next step, even one that calls the host
// no more (an idle sink, a source between polls).
func (h *hostTask) Err() error {
	if h.c == nil {
		return nil
	}
	return h.c.Err()
}

// readOffsets answers offsets.read from the task's OffsetReader.
func (h *hostTask) readOffsets(ctx context.Context, body []byte) ([]byte, error) {
	var req offsetsReadRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("offsets.read: %w", err)
	}
	if h.offsets == nil {
		return nil, fmt.Errorf("offsets.read: task %s reads no offsets", h.id)
	}
	out := offsetsReadReply{Offsets: make([]map[string]any, len(req.Partitions))}
	for i, p := range req.Partitions {
		o, err := h.offsets.Offset(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("offsets.read: %w", err)
		}
		out.Offsets[i] = o
	}
	return json.Marshal(out)
}

// mustJSON encodes a request made of strings and numbers only, which
// cannot fail to encode.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("encode %T: %v", v, err))
	}
	return b
}
