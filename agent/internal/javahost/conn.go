package javahost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
)

// ErrHostLost says the connection to the connector host is gone: every
// call pending then, and every later one, fails with an error wrapping it
// and the reason.
var ErrHostLost = errors.New("connector host lost")

// HostError is an exception the host's plugin code threw: its message and
// the full Java stack trace.
type HostError struct {
	Message string `json:"message"`
	Trace   string `json:"trace"`
	// Retriable says the exception was Kafka Connect's
	// RetriableException.
	Retriable bool `json:"retriable,omitempty"`
}

// Error returns the plugin's message.
func (e *HostError) Error() string { return e.Message }

// Dispatcher answers what the host sends on its own: Request returns the
// reply body of a host request (an error becomes an error reply), on a
// goroutine of its own, so a slow one holds up no other message; Notice
// takes a notice on the connection's reader, in the order sent, and must
// not block. The order matters: a task.rewind the host sends while in
// task.open must be taken before task.open's reply is.
type Dispatcher interface {
	Request(ctx context.Context, op string, body []byte) ([]byte, error)
	Notice(op string, body []byte)
}

// Conn is the multiplexed connection to a host: either side sends
// requests, each answered by one reply carrying its id, and notices.
type Conn struct {
	nc       net.Conn
	dispatch Dispatcher
	log      *slog.Logger
	// lostReason turns the read error that ended the connection into the
	// reason calls fail with (the supervisor waits for the JVM's exit
	// status there); nil: the read error.
	lostReason func(error) error

	writeMu sync.Mutex // one frame at a time on the socket

	mu      sync.Mutex
	nextID  uint32
	pending map[uint32]chan frame
	lost    error // set once: ErrHostLost and the reason
	done    chan struct{}
	ctx     context.Context // handlers' context, cancelled when the connection is lost
	cancel  context.CancelFunc
}

// newConn starts serving nc; d may be nil (host requests are then
// refused, notices dropped).
func newConn(nc net.Conn, d Dispatcher, log *slog.Logger, lostReason func(error) error) *Conn {
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Conn{nc: nc, dispatch: d, log: log, lostReason: lostReason, pending: map[uint32]chan frame{},
		done: make(chan struct{}), ctx: ctx, cancel: cancel}
	go c.readLoop()
	return c
}

// Done is closed once the connection is lost.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is nil while the connection lives, then the error calls fail with.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lost
}

// Close closes the connection; pending calls fail with ErrHostLost.
func (c *Conn) Close() error {
	c.fail(errors.New("connection closed by the agent"))
	return c.nc.Close()
}

// Call sends a request and waits for its reply: the reply's body, or a
// *HostError for an error reply. body nil sends "{}".
func (c *Conn) Call(ctx context.Context, op string, body []byte) ([]byte, error) {
	if body == nil {
		body = []byte("{}")
	}
	ch := make(chan frame, 1)
	c.mu.Lock()
	if c.lost != nil {
		err := c.lost
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	c.nextID++
	if c.nextID == 0 { // 0 is the notices' id
		c.nextID++
	}
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.write(frame{typ: frameRequest, id: id, op: op, body: body}); err != nil {
		if !errors.Is(err, ErrHostLost) {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		// The reader's reason beats the write's broken pipe.
		<-c.done
		return nil, fmt.Errorf("%s: %w", op, c.Err())
	}
	select {
	case f := <-ch:
		if f.typ == frameError {
			he := &HostError{}
			if err := json.Unmarshal(f.body, he); err != nil {
				return nil, fmt.Errorf("%s: undecodable error reply: %w", op, err)
			}
			return nil, he
		}
		return f.body, nil
	case <-c.done:
		return nil, fmt.Errorf("%s: %w", op, c.Err())
	case <-ctx.Done():
		// The reply, should it come, finds no one waiting and is dropped.
		return nil, fmt.Errorf("%s: %w", op, ctx.Err())
	}
}

// CallJSON marshals req, calls op and unmarshals the reply into resp
// (which may be nil).
func (c *Conn) CallJSON(ctx context.Context, op string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("%s: encode request: %w", op, err)
	}
	out, err := c.Call(ctx, op, body)
	if err != nil {
		return err
	}
	if resp == nil {
		return nil
	}
	if err := json.Unmarshal(out, resp); err != nil {
		return fmt.Errorf("%s: decode reply: %w", op, err)
	}
	return nil
}

// Notify sends a notice.
func (c *Conn) Notify(op string, body []byte) error {
	if err := c.Err(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return c.write(frame{typ: frameNotice, op: op, body: body})
}

// write sends one frame. A frame that cannot be encoded (too large) is
// refused and the connection lives on; one that could not be written in
// full leaves the stream unreadable for the host, so the connection is
// closed, and the reader reports the loss with its reason (the JVM's exit
// status, when it died).
func (c *Conn) write(f frame) error {
	buf, err := appendFrame(nil, f)
	if err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if _, err := c.nc.Write(buf); err != nil {
		c.nc.Close()
		return fmt.Errorf("%w: write %q: %w", ErrHostLost, f.op, err)
	}
	return nil
}

// fail records the loss once and wakes every waiting call.
func (c *Conn) fail(reason error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lost != nil {
		return
	}
	c.lost = fmt.Errorf("%w: %w", ErrHostLost, reason)
	close(c.done)
	c.cancel()
}

func (c *Conn) readLoop() {
	for {
		f, err := readFrame(c.nc)
		if err != nil {
			if c.Err() == nil && c.lostReason != nil {
				err = c.lostReason(err)
			}
			c.fail(err)
			c.nc.Close()
			return
		}
		switch f.typ {
		case frameReply, frameError:
			c.mu.Lock()
			ch := c.pending[f.id]
			c.mu.Unlock()
			if ch != nil {
				ch <- f // buffered, and each id is answered once
			}
		case frameRequest:
			go c.serve(f)
		case frameNotice:
			if c.dispatch != nil {
				c.dispatch.Notice(f.op, f.body)
			}
		}
	}
}

// serve answers one host request.
func (c *Conn) serve(f frame) {
	var body []byte
	err := fmt.Errorf("the agent serves no %q", f.op)
	if c.dispatch != nil {
		body, err = c.dispatch.Request(c.ctx, f.op, f.body)
	}
	reply := frame{typ: frameReply, id: f.id, body: body}
	if err != nil {
		he, ok := errors.AsType[*HostError](err)
		if !ok {
			he = &HostError{Message: err.Error()}
		}
		reply.typ = frameError
		reply.body, _ = json.Marshal(he)
	}
	if err := c.write(reply); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		c.log.Debug("reply to the connector host not sent", "op", f.op, "err", err)
	}
}
