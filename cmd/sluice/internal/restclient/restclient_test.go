package restclient

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestNormalizeURL(t *testing.T) {
	for _, tt := range []struct {
		in   string
		tls  bool
		want string
	}{
		{"127.0.0.1:8083", false, "http://127.0.0.1:8083"},
		{"localhost:8083/", false, "http://localhost:8083"},
		{"sluice.example.com:8083", true, "https://sluice.example.com:8083"},
		{"http://h:1", true, "http://h:1"},
		{" https://h:1/base/ ", false, "https://h:1/base"},
	} {
		if got, err := NormalizeURL(tt.in, tt.tls); err != nil || got != tt.want {
			t.Errorf("NormalizeURL(%q, %v) = %q, %v; want %q", tt.in, tt.tls, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "ftp://h:1", "http://", "h:1?x=1", "http://h:1/%zz"} {
		if got, err := NormalizeURL(bad, false); err == nil {
			t.Errorf("NormalizeURL(%q) = %q, want an error", bad, got)
		}
	}
}

// A port nobody listens on is a ConnectError whose message says so and
// how to start Sluice.
func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := &Client{Base: "http://" + addr, HTTP: &http.Client{Timeout: 5 * time.Second}}
	_, _, err = c.Do(context.Background(), http.MethodGet, "/connectors", nil)
	var ce *ConnectError
	if !errors.As(err, &ce) {
		t.Fatalf("error %T %v, want a *ConnectError", err, err)
	}
	want := "cannot reach Sluice at http://" + addr + ": connection refused — is it running? (sluice dev / make run)"
	if err.Error() != want {
		t.Fatalf("message %q, want %q", err, want)
	}
	if !strings.Contains((&ConnectError{URL: "http://x", Err: &net.DNSError{Err: "no such host", Name: "x"}}).Error(), "no such host") {
		t.Fatal("DNS failure not named")
	}
}
