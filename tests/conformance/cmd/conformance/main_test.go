package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRoot: the report's GET / line is the system's answer, as JSON with
// Kafka Connect's keys in its order, or the error that kept it.
func TestRoot(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, `{"kafka_cluster_id":"k1","commit":"abc","version":"4.4.0","extra":true}`)
	}))
	defer srv.Close()
	if got, want := root(srv.URL), `{"version":"4.4.0","commit":"abc","kafka_cluster_id":"k1"}`; got != want {
		t.Fatalf("root = %s, want %s", got, want)
	}
	srv.Close()
	if got := root(srv.URL); !strings.HasPrefix(got, "error: ") || !strings.Contains(got, srv.URL) {
		t.Fatalf("root of a stopped server = %q, want an error naming it", got)
	}
}
