package session

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A server that accepts and never answers: a write is given up after the
// request bound, a read after the connect timeout, each a *ConnectError
// that says which, and the command's context is ended with it.
func TestWatchdogBounds(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held <- c // kept open, never answered
		}
	}()
	t.Cleanup(func() {
		l.Close()
		close(held)
		for c := range held {
			c.Close()
		}
	})
	base := "http://" + l.Addr().String()
	var aborted error
	w := &watchdog{next: http.DefaultTransport, base: base, connect: 150 * time.Millisecond, request: 300 * time.Millisecond,
		abort: func(err error) { aborted = err }}
	client := &http.Client{Transport: w}

	for _, c := range []struct {
		method, want string
	}{
		{http.MethodPut, "cannot reach Sluice at " + base + ": no answer to PUT /connectors/x/pause within 300ms — is the server up? --timeout gives the command longer"},
		{http.MethodGet, "cannot reach Sluice at " + base + ": no answer to GET /connectors/x/pause within 150ms (--connect-timeout) — is it the URL of Sluice's REST API, and is the server up?"},
	} {
		aborted = nil
		req, err := http.NewRequest(c.method, base+"/connectors/x/pause", strings.NewReader(""))
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.Do(req)
		var ce *ConnectError
		if !errors.As(err, &ce) || ce.Error() != c.want {
			t.Errorf("%s: %v; want %q", c.method, err, c.want)
		}
		if !errors.As(aborted, &ce) {
			t.Errorf("%s: the command's context was not ended (%v)", c.method, aborted)
		}
	}
}
