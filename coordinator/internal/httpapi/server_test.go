package httpapi

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServerErrorRewrite: net/http's own plain-text answers become the JSON
// error body, naming what was wrong; every other write is left alone.
func TestServerErrorRewrite(t *testing.T) {
	const plain = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
	l := Limits{}.withDefaults()
	tests := []struct {
		name, write, head string
		want              string // the JSON body; "" for a write left alone
	}{
		{"bad URI", "HTTP/1.1 400 Bad Request" + plain + "400 Bad Request", "GET /a%zz HTTP/1.1\r\nHost: x\r\n\r\n",
			`{"error_code":400,"message":"HTTP 400 Bad Request: invalid URL escape \"%zz\""}`},
		{"detail in the status line", "HTTP/1.1 400 Bad Request: missing required Host header" + plain + "400 Bad Request: missing required Host header", "",
			`{"error_code":400,"message":"HTTP 400 Bad Request: missing required Host header"}`},
		{"detail in the body", "HTTP/1.1 501 Not Implemented" + plain + "Unsupported transfer encoding", "",
			`{"error_code":501,"message":"HTTP 501 Not Implemented: Unsupported transfer encoding"}`},
		{"headers too large", "HTTP/1.1 431 Request Header Fields Too Large" + plain + "431 Request Header Fields Too Large", "",
			`{"error_code":431,"message":"Request headers too large (limit 64 KiB)"}`},
		{"head not kept", "HTTP/1.1 400 Bad Request" + plain + "400 Bad Request", "GET /a",
			`{"error_code":400,"message":"HTTP 400 Bad Request"}`},
		{"long detail is cut", "HTTP/1.1 400 Bad Request" + plain + "400 Bad Request", strings.Repeat("x", 300) + "\r\n\r\n",
			`{"error_code":400,"message":"HTTP 400 Bad Request: malformed HTTP request \"` + strings.Repeat("x", 176) + `…"}`},
		{"expectation failed", "HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", "",
			`{"error_code":417,"message":"HTTP 417 Expectation Failed: only 100-continue is supported"}`},
		{"an answer of ours", "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n\r\n{}", "", ""},
		{"a text answer in another form", "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nx", "", ""},
		{"a body write", `{"error_code":400}`, "", ""},
		{"a success in that form", "HTTP/1.1 200 OK" + plain + "ok", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rewriteServerError([]byte(tt.write), []byte(tt.head), l)
			if tt.want == "" {
				if got != nil {
					t.Fatalf("rewrote %q into %q", tt.write, got)
				}
				return
			}
			resp, body := splitAnswer(t, string(got))
			if body != tt.want || !strings.Contains(resp, "\r\nContent-Type: application/json\r\n") || !strings.Contains(resp, "\r\nConnection: close\r\n") {
				t.Fatalf("got %q", got)
			}
		})
	}
}

// splitAnswer splits a raw answer into its head and its body, checking the
// body's Content-Length.
func splitAnswer(t *testing.T, answer string) (string, string) {
	t.Helper()
	head, body, ok := strings.Cut(answer, "\r\n\r\n")
	body = strings.TrimSuffix(body, "\n")
	if !ok || !strings.Contains(head, "\r\nContent-Length: ") {
		t.Fatalf("not an answer with a length: %q", answer)
	}
	return head, body
}

// TestBodyBoundSparesLongRequests: the body bound ends with the body: a
// request whose body arrived in time keeps its context however long the
// Service takes, and so does the next request on the same connection.
func TestBodyBoundSparesLongRequests(t *testing.T) {
	const bound = 200 * time.Millisecond
	f := newFake()
	f.hold = func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(3 * bound):
			return nil
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(NewHandler(f.services()), Limits{ReadBodyTimeout: bound})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	client := &http.Client{Timeout: 10 * time.Second}
	for i := range 2 {
		req, err := http.NewRequest("PUT", "http://"+ln.Addr().String()+"/connectors/a/config", strings.NewReader(`{"k":"v"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("request %d: got %d", i, resp.StatusCode)
		}
	}
}
