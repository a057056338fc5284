package javahost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a Dispatcher that keeps the notices it got and answers
// requests with their op.
type recorder struct {
	mu      sync.Mutex
	notices []string
	got     chan string
}

func (r *recorder) Request(_ context.Context, op string, body []byte) ([]byte, error) {
	if op == "fail" {
		return nil, errors.New("no such thing")
	}
	return fmt.Appendf(nil, `{"op":%q,"body":%s}`, op, body), nil
}

func (r *recorder) Notice(op string, body []byte) {
	r.mu.Lock()
	r.notices = append(r.notices, op+" "+string(body))
	r.mu.Unlock()
	r.got <- op
}

func pipe(t *testing.T, a, b Dispatcher) (*Conn, *Conn) {
	t.Helper()
	x, y := net.Pipe()
	ca, cb := newConn(x, a, nil, nil), newConn(y, b, nil, nil)
	t.Cleanup(func() { ca.Close(); cb.Close() })
	return ca, cb
}

func TestConnCallsBothWays(t *testing.T) {
	ra, rb := &recorder{got: make(chan string, 4)}, &recorder{got: make(chan string, 4)}
	a, b := pipe(t, ra, rb)
	ctx := context.Background()
	// Many calls at once from both sides: each reply finds its caller.
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 20 {
		for _, c := range []*Conn{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				op := fmt.Sprintf("op.%d", i)
				out, err := c.Call(ctx, op, fmt.Appendf(nil, "%d", i))
				if err == nil && string(out) != fmt.Sprintf(`{"op":%q,"body":%d}`, op, i) {
					err = fmt.Errorf("%s answered %s", op, out)
				}
				errs <- err
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if err := a.Notify("task.pause", []byte(`{"id":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if op := <-rb.got; op != "task.pause" {
		t.Errorf("notice %s", op)
	}
	// A handler's error is an error reply: a *HostError on the caller's side.
	_, err := a.Call(ctx, "fail", nil)
	if he, ok := errors.AsType[*HostError](err); !ok || he.Message != "no such thing" {
		t.Errorf("failed request: %v", err)
	}
}

func TestConnHostErrorCarriesTrace(t *testing.T) {
	host := &fakeHost{ready: make(chan struct{})}
	a, b := pipe(t, nil, host)
	host.c = b
	close(host.ready)
	err := a.CallJSON(context.Background(), "task.start", map[string]any{"id": "c-0", "connector_config": map[string]string{"fake": fakeFail}}, nil)
	he, ok := errors.AsType[*HostError](err)
	if !ok || he.Message != "boom" || !strings.Contains(he.Trace, "ConnectException: boom") {
		t.Fatalf("error reply: %#v", err)
	}
}

func TestConnLost(t *testing.T) {
	x, y := net.Pipe()
	reason := errors.New("connector host exited (exit status 137): OutOfMemoryError")
	a := newConn(x, nil, nil, func(error) error { return reason })
	// The other side reads the request, never answers, then goes away.
	got := make(chan struct{})
	go func() {
		if _, err := readFrame(y); err == nil {
			close(got)
		}
	}()
	errc := make(chan error, 1)
	go func() {
		_, err := a.Call(context.Background(), "task.poll", nil)
		errc <- err
	}()
	<-got
	y.Close()
	for _, err := range []error{<-errc, func() error { _, err := a.Call(context.Background(), "task.poll", nil); return err }()} {
		if !errors.Is(err, ErrHostLost) || !errors.Is(err, reason) {
			t.Errorf("call on a lost connection: %v, want ErrHostLost and the reason", err)
		}
	}
	if err := a.Notify("x", nil); !errors.Is(err, ErrHostLost) {
		t.Errorf("notice on a lost connection: %v", err)
	}
	select {
	case <-a.Done():
	case <-time.After(time.Second):
		t.Error("Done not closed")
	}
}

func TestConnCallContext(t *testing.T) {
	x, y := net.Pipe()
	a := newConn(x, nil, nil, nil)
	defer a.Close()
	go func() {
		for {
			if _, err := readFrame(y); err != nil {
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := a.Call(ctx, "task.poll", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("unanswered call: %v", err)
	}
	if a.Err() != nil {
		t.Errorf("a call that timed out broke the connection: %v", a.Err())
	}
}

// TestRouter: host requests and notices reach the task they name.
func TestRouter(t *testing.T) {
	r := newRouter()
	ep := &recordingTask{}
	r.addTask("c-0", ep)
	var conn []string
	r.setConnectorHandler(func(op string, body []byte) { conn = append(conn, op) })
	r.Notice("task.pause", []byte(`{"id":"c-0"}`))
	r.Notice("task.pause", []byte(`{"id":"other"}`))
	r.Notice("connector.reconfigure", []byte(`{"name":"c"}`))
	out, err := r.Request(context.Background(), "offsets.read", []byte(`{"id":"c-0","partitions":[]}`))
	if err != nil || string(out) != "read" {
		t.Errorf("offsets.read: %s, %v", out, err)
	}
	if out, err := r.Request(context.Background(), "task.report", []byte(`{"id":"c-0"}`)); err != nil || string(out) != "reported" {
		t.Errorf("task.report: %s, %v", out, err)
	}
	if _, err := r.Request(context.Background(), "offsets.read", []byte(`{"id":"gone"}`)); err == nil {
		t.Errorf("offsets.read of an unknown task answered")
	}
	if len(ep.notices) != 1 || len(conn) != 1 {
		t.Errorf("task notices %v, connector notices %v", ep.notices, conn)
	}
	r.removeTask("c-0", ep)
	if _, err := r.Request(context.Background(), "offsets.read", []byte(`{"id":"c-0"}`)); err == nil {
		t.Errorf("a removed task still answers")
	}
}

type recordingTask struct{ notices []string }

func (r *recordingTask) readOffsets(context.Context, []byte) ([]byte, error) {
	return []byte("read"), nil
}
func (r *recordingTask) report(context.Context, []byte) ([]byte, error) {
	return []byte("reported"), nil
}
func (r *recordingTask) notice(op string, body []byte) {
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	r.notices = append(r.notices, op)
}

// TestConnNoticeBeforeReply: a notice the host sends before a reply is
// taken before the call returns (a rewind sent during task.open applies
// before the first fetch).
func TestConnNoticeBeforeReply(t *testing.T) {
	x, y := net.Pipe()
	rec := &recorder{got: make(chan string, 1)}
	a := newConn(x, rec, nil, nil)
	defer a.Close()
	go func() {
		f, err := readFrame(y)
		if err != nil {
			return
		}
		_ = writeFrame(y, frame{typ: frameNotice, op: "task.rewind", body: []byte(`{"id":"c-0"}`)})
		_ = writeFrame(y, frame{typ: frameReply, id: f.id, body: []byte("{}")})
	}()
	if _, err := a.Call(context.Background(), "task.open", nil); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.notices) != 1 {
		t.Errorf("notices when the reply came: %v", rec.notices)
	}
}

// TestConnOversizedRequestKeepsTheConnection: a request over 64 MiB is
// refused, and the connection goes on.
func TestConnOversizedRequestKeepsTheConnection(t *testing.T) {
	a, _ := pipe(t, nil, &recorder{got: make(chan string, 1)})
	if _, err := a.Call(context.Background(), "task.put", make([]byte, maxFrameBytes)); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("oversized call: %v", err)
	}
	if out, err := a.Call(context.Background(), "x", []byte("1")); err != nil || string(out) != `{"op":"x","body":1}` {
		t.Errorf("call after it: %s, %v", out, err)
	}
}
