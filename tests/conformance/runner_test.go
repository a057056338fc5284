package conformance

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/textproto"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestSendShapes: a step's request goes out as the step says: a raw target
// as written, a body without a Content-Type, padded headers.
func TestSendShapes(t *testing.T) {
	reqs := recordRequests(t)
	sys := System{URL: "http://" + reqs.addr, ConnPrefix: "p-"}
	tests := []struct {
		name string
		step Step
		want seen
	}{
		{"raw target", Step{Method: "GET", Path: "/connectors/${c}lo%c", RawTarget: true}, seen{line: "GET /connectors/p-lo%c HTTP/1.1"}},
		{"target as parsed", Step{Method: "GET", Path: "//connectors/${c}a"}, seen{line: "GET //connectors/p-a HTTP/1.1"}},
		{"body as JSON", Step{Method: "POST", Path: "/connectors", Body: []byte(`{}`)}, seen{line: "POST /connectors HTTP/1.1", ct: "application/json"}},
		{"body without a Content-Type", Step{Method: "POST", Path: "/connectors", Body: []byte(`{}`), NoContentType: true}, seen{line: "POST /connectors HTTP/1.1"}},
		{"padded header", Step{Method: "GET", Path: "/", Headers: map[string]string{"X-Padding": "<@PAD@>"}, Pad: 3}, seen{line: "GET / HTTP/1.1", pad: "<xxx>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if rec := sys.send(context.Background(), tt.step); rec.Err != "" || rec.Status != 200 {
				t.Fatalf("record %+v", rec)
			}
			if got := <-reqs.seen; got != tt.want {
				t.Fatalf("sent %+v, want %+v", got, tt.want)
			}
		})
	}
}

// seen is what recordRequests saw of one request.
type seen struct{ line, ct, pad string }

type recorded struct {
	addr string
	seen chan seen
}

// recordRequests serves HTTP/1.1 by hand, so that it sees request lines
// net/http would refuse, and answers every request 200.
func recordRequests(t *testing.T) recorded {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	r := recorded{addr: ln.Addr().String(), seen: make(chan seen, 1)}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				tp := textproto.NewReader(bufio.NewReader(conn))
				for {
					line, err := tp.ReadLine()
					if err != nil {
						return
					}
					h, err := tp.ReadMIMEHeader()
					if err != nil {
						return
					}
					n, _ := strconv.Atoi(h.Get("Content-Length"))
					if _, err := io.CopyN(io.Discard, tp.R, int64(n)); err != nil {
						return
					}
					r.seen <- seen{line: line, ct: h.Get("Content-Type"), pad: h.Get("X-Padding")}
					if _, err := io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"); err != nil {
						return
					}
				}
			}()
		}
	}()
	return r
}

// TestTransient: a rebalance answer and a connection lost while writing
// are sent again; other errors and answers are recorded as they are.
func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		rec  Record
		want bool
	}{
		{Record{Status: 500, Body: []byte(`{"message":"` + msgRebalanceExpected + `"}`)}, true},
		{Record{Err: `Get "http://x/connectors": write tcp 127.0.0.1:1->127.0.0.1:2: write: broken pipe`}, true},
		{Record{Err: "read: connection reset by peer"}, true},
		{Record{Err: "dial tcp: connection refused"}, false},
		{Record{Status: 431, Body: []byte(`{"message":"too large"}`)}, false},
	} {
		if got := transient(tc.rec); got != tc.want {
			t.Errorf("transient(%+v) = %v, want %v", tc.rec, got, tc.want)
		}
	}
}

// TestReadFile: a file step answers the file's complete lines in order,
// keyed so that comparing does not sort them, and 404 until it exists.
func TestReadFile(t *testing.T) {
	sys := System{Dir: t.TempDir()}
	st := Step{ID: "out", File: "${dir}/sink.out"}
	if rec := sys.send(context.Background(), st); rec.Status != 404 {
		t.Fatalf("missing file: %+v", rec)
	}
	if err := os.WriteFile(filepath.Join(sys.Dir, "sink.out"), []byte("b\na\n\npartial"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := sys.send(context.Background(), st)
	if rec.Status != 200 || string(rec.Body) != `{"lines":{"000":"b","001":"a","002":""}}` {
		t.Fatalf("file answer: %d %s", rec.Status, rec.Body)
	}
	poll := Match{Status: 200, Fields: map[string]any{"lines.#": 3}}
	if !poll.matches(rec, sys) {
		t.Errorf("a poll for 3 lines does not match %s", rec.Body)
	}
}
