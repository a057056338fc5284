package sluicetest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RawAnswer is what the coordinator did with a request sent byte for byte.
type RawAnswer struct {
	// Response is the answer; its Status is 0 when the coordinator closed
	// the connection without answering.
	Response
	// Closed reports whether the coordinator closed the connection: without
	// an answer, or after one that said "Connection: close".
	Closed bool
	// After is how long the answer, or the close, took from the moment the
	// request was sent.
	After time.Duration
}

// RawRequest builds a request as written on the wire: the request line,
// a Host header, the given headers ("Name: value"), a Content-Length when
// body is not empty, and the body. The target is sent as is, so that paths
// an HTTP client would refuse or rewrite can be tested.
func RawRequest(method, target string, headers []string, body string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: sluice\r\n", method, target)
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	if body != "" {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n" + body)
	return b.String()
}

// Raw sends request on a new TCP connection to the coordinator's REST
// address, exactly as given, and reads one answer. It waits up to wait for
// the answer and for the connection to close; a coordinator that neither
// answers nor closes within wait fails t (the test or subtest running).
func (c *Cluster) Raw(t testing.TB, request string, wait time.Duration) RawAnswer {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(c.URL, "http://"), 5*time.Second)
	if err != nil {
		t.Fatalf("dial the coordinator: %v", err)
	}
	defer conn.Close()
	start := time.Now()
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatalf("send the request: %v", err)
	}
	_ = conn.SetReadDeadline(start.Add(wait))
	br := bufio.NewReader(conn)
	var ans RawAnswer
	resp, err := http.ReadResponse(br, nil)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		t.Fatalf("no answer and no close within %v", wait)
	case closedErr(err):
		ans.After, ans.Closed = time.Since(start), true
		return ans
	case err != nil:
		t.Fatalf("read the answer: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read the answer's body: %v", err)
	}
	ans.After = time.Since(start)
	ans.Response = Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
	// An answer that announces the close is followed by it; then nothing
	// but the close may come.
	if resp.Close {
		if _, err := br.ReadByte(); !closedErr(err) {
			t.Fatalf("answer %s announced a close that did not follow within %v (%v)", ans.Response, wait, err)
		}
		ans.Closed = true
	}
	return ans
}

// closedErr reports whether a read error means the peer closed the
// connection (a reset too: a server that closes with unread input sends one).
func closedErr(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}
