package integration

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestHTTPTrailingSlash: every path answers with a trailing slash as it
// does without one, as Kafka Connect 4.4 does; clients check whether a
// connector exists with GET /connectors/<name>/.
func TestHTTPTrailingSlash(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	gen := generatorCfg(c.Name("slash"))
	created := c.Must(http.StatusCreated, "POST", "/connectors/", map[string]any{"name": "s", "config": gen, "initial_state": "STOPPED"})
	if loc := created.Header.Get("Location"); loc != c.URL+"/connectors/s" {
		t.Fatalf("Location %q", loc)
	}

	// The connector's status is written a moment after the create: wait
	// for it, so that both requests below see the same state.
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		r := c.Do("GET", "/connectors/s/status", nil)
		return r.Status == http.StatusOK, r.String()
	})

	// Reads: the same answer with and without the slash.
	for _, path := range []string{
		"/health", "/connectors", "/connectors/s", "/connectors/s/config", "/connectors/s/status",
		"/connectors/s/tasks", "/connectors/s/tasks/0/status", "/connectors/s/topics", "/connectors/s/offsets",
		"/connector-plugins", "/connector-plugins/FileStreamSource/config", "/connectors/nope", "/connectors/a%2Fb",
	} {
		t.Run("GET "+path, func(t *testing.T) {
			want := c.Do("GET", path, nil)
			got := c.Do("GET", path+"/", nil)
			if got.Status != want.Status || !bytes.Equal(got.Body, want.Body) {
				t.Fatalf("with the slash %s,\nwithout %s", got, want)
			}
		})
	}
	t.Run("GET with a query", func(t *testing.T) {
		want := c.Do("GET", "/connectors?expand=status", nil)
		got := c.Do("GET", "/connectors/?expand=status", nil)
		if got.Status != 200 || !bytes.Equal(got.Body, want.Body) {
			t.Fatalf("with the slash %s,\nwithout %s", got, want)
		}
	})

	// Writes, in an order that leaves each one valid.
	writes := []struct {
		method, path string
		body         any
		status       int
		msg          string // for an error
	}{
		{"PUT", "/connectors/s/config/", gen, 200, ""},
		{"PATCH", "/connectors/s/config/", map[string]any{"rate": "10"}, 200, ""},
		{"PUT", "/connectors/s/pause/", nil, 202, ""},
		{"PUT", "/connectors/s/stop/", nil, 204, ""},
		{"PATCH", "/connectors/s/offsets/", map[string]any{"offsets": []any{map[string]any{"partition": map[string]any{"p": 1}, "offset": map[string]any{"o": 1}}}}, 200, ""},
		{"DELETE", "/connectors/s/offsets/", nil, 200, ""},
		{"PUT", "/connectors/s/topics/reset/", nil, 202, ""},
		{"POST", "/connectors/s/restart/", nil, 204, ""},
		{"POST", "/connectors/s/tasks/0/restart/", nil, 404, "Unknown task: s-0"},
		{"PUT", "/connector-plugins/FileStreamSource/config/validate/", map[string]any{"connector.class": classFileSource, "topic": "t", "file": "f"}, 200, ""},
		{"DELETE", "/connectors/", nil, 405, "HTTP 405 Method Not Allowed"},
		{"DELETE", "/connectors/s/", nil, 204, ""},
		{"GET", "/connectors/s/", nil, 404, "Connector s not found"},
	}
	for _, tt := range writes {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := c.Do(tt.method, tt.path, tt.body)
			if tt.msg != "" {
				wantError(t, r, tt.status, tt.msg)
				return
			}
			if r.Status != tt.status {
				t.Fatalf("got %s, want %d", r, tt.status)
			}
		})
	}
}

// TestHTTPUnusualPaths: paths Kafka Connect 4.4's web server refuses before
// routing get its status, and a JSON error body instead of its HTML page;
// dot segments are names, as in Kafka Connect, not path steps.
func TestHTTPUnusualPaths(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	tests := []struct {
		target string
		status int
		msg    string
	}{
		{"//connectors", 400, "Ambiguous URI empty segment"},
		{"//", 400, "Ambiguous URI empty segment"},
		{"/connectors//", 400, "Ambiguous URI empty segment"},
		{"/connectors/a//status", 400, "Ambiguous URI empty segment"},
		{"/connectors/%2e%2e", 400, "Ambiguous URI path segment"},
		{"/connectors/a/%2E/", 400, "Ambiguous URI path segment"},
		{"/connectors/lo%c", 400, `HTTP 400 Bad Request: invalid URL escape "%c"`},
		{"/connectors/lo%", 400, `HTTP 400 Bad Request: invalid URL escape "%"`},
		{"/..", 400, `HTTP 400 Bad Request: ".." above the root in the path`},
		{"/connectors/../..", 400, `HTTP 400 Bad Request: ".." above the root in the path`},
		{"/connectors/.", 404, "Connector . not found"},
		{"/connectors/../", 404, "Connector .. not found"},
		{"/connectors/a/../a", 404, "HTTP 404 Not Found"},
		{"/./connectors", 404, "HTTP 404 Not Found"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			ans := c.Raw(t, sluicetest.RawRequest("GET", tt.target, nil, ""), 10*time.Second)
			wantError(t, ans.Response, tt.status, tt.msg)
			if ct := ans.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

// TestHTTPMalformedRequests: what Go's HTTP server refuses itself, before
// any handler, is answered with the JSON error body too.
func TestHTTPMalformedRequests(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	big := "X-Big: " + strings.Repeat("x", 100<<10)
	tests := []struct {
		name, request string
		status        int
		msg           string
	}{
		{"headers over 64 KiB", sluicetest.RawRequest("GET", "/connectors", []string{big}, ""), 431, "Request headers too large (limit 64 KiB)"},
		{"garbage request line", "garbage\r\n\r\n", 400, `HTTP 400 Bad Request: malformed HTTP request "garbage"`},
		{"no Host header", "GET /connectors HTTP/1.1\r\n\r\n", 400, "HTTP 400 Bad Request: missing required Host header"},
		{"malformed header", "GET /connectors HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n", 400, `HTTP 400 Bad Request: malformed MIME header: missing colon: "no colon"`},
		{"HTTP/2 request line", "GET /connectors HTTP/2.0\r\nHost: x\r\n\r\n", 505, "HTTP 505 HTTP Version Not Supported: unsupported protocol version"},
		{"unknown transfer encoding", "POST /connectors HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "HTTP 501 Not Implemented: Unsupported transfer encoding"},
		{"unknown expectation", sluicetest.RawRequest("PUT", "/connectors/a/stop", []string{"Expect: magic"}, ""), 417, "HTTP 417 Expectation Failed: only 100-continue is supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ans := c.Raw(t, tt.request, 10*time.Second)
			wantError(t, ans.Response, tt.status, tt.msg)
			if ct := ans.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
	t.Run("headers under 64 KiB", func(t *testing.T) {
		ans := c.Raw(t, sluicetest.RawRequest("GET", "/connectors", []string{"X-Big: " + strings.Repeat("x", 60<<10)}, ""), 10*time.Second)
		wantJSON(t, ans.Response, 200, `[]`)
	})
}

// TestHTTPContentType: the media type checks of Kafka Connect 4.4. A body
// without a Content-Type is refused where a body is read (Jersey finds no
// reader for it); an empty one is not; a media type other than JSON is
// refused on every path but / and /health, whatever the method.
func TestHTTPContentType(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	create := `{"name":"ct","config":{"connector.class":"` + classGenerator + `","topic":"` + c.Name("ct") + `"}}`
	tests := []struct {
		name, method, path string
		headers            []string
		body               string
		status             int
		msg                string // "" for a success
	}{
		{"create without Content-Type", "POST", "/connectors", nil, create, 415, "HTTP 415 Unsupported Media Type"},
		{"blank body without Content-Type", "POST", "/connectors", nil, " ", 415, "HTTP 415 Unsupported Media Type"},
		{"PUT config without Content-Type", "PUT", "/connectors/ct/config", nil, `{}`, 415, "HTTP 415 Unsupported Media Type"},
		{"PATCH config without Content-Type", "PATCH", "/connectors/ct/config", nil, `{}`, 415, "HTTP 415 Unsupported Media Type"},
		{"PATCH offsets without Content-Type", "PATCH", "/connectors/ct/offsets", nil, `{}`, 415, "HTTP 415 Unsupported Media Type"},
		{"validate without Content-Type", "PUT", "/connector-plugins/FileStreamSource/config/validate", nil, `{}`, 415, "HTTP 415 Unsupported Media Type"},
		{"chunked body without Content-Type", "POST", "/connectors", []string{"Transfer-Encoding: chunked"}, "2\r\n{}\r\n0\r\n\r\n", 415, "HTTP 415 Unsupported Media Type"},
		{"empty body without Content-Type", "POST", "/connectors", nil, "", 400, "Invalid JSON in request body: unexpected end of JSON input"},
		{"empty chunked body without Content-Type", "POST", "/connectors", []string{"Transfer-Encoding: chunked"}, "0\r\n\r\n", 400, "Invalid JSON in request body: unexpected end of JSON input"},
		{"body on a route that reads none", "PUT", "/connectors/ct/stop", nil, `{}`, 404, "Unknown connector ct"},
		{"text on GET", "GET", "/connectors", []string{"Content-Type: text/plain"}, "", 415, "HTTP 415 Unsupported Media Type"},
		{"text on DELETE", "DELETE", "/connectors/ct", []string{"Content-Type: text/plain"}, "", 415, "HTTP 415 Unsupported Media Type"},
		{"JSON suffix type", "PUT", "/connectors/ct/stop", []string{"Content-Type: application/problem+json"}, "", 415, "HTTP 415 Unsupported Media Type"},
		{"malformed media type", "PUT", "/connectors/ct/stop", []string{"Content-Type: garbage"}, "", 400, `Invalid Content-Type header "garbage"`},
		{"malformed parameter", "PUT", "/connectors/ct/config", []string{"Content-Type: application/json; =x"}, `{}`, 400, `Invalid Content-Type header "application/json; =x"`},
		{"wildcard subtype", "PUT", "/connectors/ct/stop", []string{"Content-Type: application/*"}, "", 404, "Unknown connector ct"},
		{"wildcard", "PUT", "/connectors/ct/stop", []string{"Content-Type: */*"}, "", 404, "Unknown connector ct"},
		{"text on the root", "GET", "/", []string{"Content-Type: text/plain"}, "", 200, ""},
		{"text on health", "GET", "/health", []string{"Content-Type: text/plain"}, "", 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := sluicetest.RawRequest(tt.method, tt.path, tt.headers, tt.body)
			if len(tt.headers) > 0 && strings.HasPrefix(tt.headers[0], "Transfer-Encoding") {
				req = sluicetest.RawRequest(tt.method, tt.path, tt.headers, "") + tt.body
			}
			ans := c.Raw(t, req, 30*time.Second)
			if tt.msg == "" {
				if ans.Status != tt.status {
					t.Fatalf("got %s, want %d", ans.Response, tt.status)
				}
				return
			}
			wantError(t, ans.Response, tt.status, tt.msg)
		})
	}
	if got := listNames(c); len(got) != 0 {
		t.Fatalf("connectors created: %v", got)
	}
}

// TestHTTPSlowRequests: a client that is slow to send its request cannot
// hold the REST server: a body that stops arriving is answered 408 and the
// connection closed once the body bound passes; headers that never end get
// the connection closed once the header bound passes.
func TestHTTPSlowRequests(t *testing.T) {
	t.Parallel()
	const headerBound, bodyBound = 300 * time.Millisecond, 500 * time.Millisecond
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, ReadHeaderTimeout: headerBound, ReadBodyTimeout: bodyBound})

	t.Run("short body", func(t *testing.T) {
		req := "POST /connectors HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
		ans := c.Raw(t, req, 10*time.Second)
		wantError(t, ans.Response, 408, "Request body not received in time (limit 500ms)")
		if !ans.Closed {
			t.Errorf("connection left open after the answer")
		}
		if ans.After < bodyBound || ans.After > bodyBound+3*time.Second {
			t.Errorf("answered after %v, want about %v", ans.After, bodyBound)
		}
	})
	t.Run("headers never end", func(t *testing.T) {
		ans := c.Raw(t, "GET /connectors HTTP/1.1\r\nHost: x\r\n", 10*time.Second)
		if !ans.Closed || ans.After > headerBound+3*time.Second {
			t.Fatalf("closed %v after %v (answer %s), want closed after about %v", ans.Closed, ans.After, ans.Response, headerBound)
		}
	})
}
