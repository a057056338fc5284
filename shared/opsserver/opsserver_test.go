package opsserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sluice-io/sluice/shared/opsserver"
)

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

func TestServer(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_test_total", Help: "test"})
	reg.MustRegister(c)
	c.Add(3)
	var notReady atomic.Pointer[error]
	srv, err := opsserver.Start("127.0.0.1:0", reg, func(context.Context) error {
		if p := notReady.Load(); p != nil {
			return *p
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Error(err)
		}
	}()
	base := "http://" + srv.Addr()

	code, body := get(t, base+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics is not the text format: %v", err)
	}
	if v := mfs["sluice_test_total"].GetMetric()[0].GetCounter().GetValue(); v != 3 {
		t.Fatalf("sluice_test_total = %v", v)
	}

	status := func(path string) (int, opsserver.Status) {
		code, body := get(t, base+path)
		var s opsserver.Status
		if err := json.Unmarshal(body, &s); err != nil {
			t.Fatalf("%s: %v in %q", path, err, body)
		}
		return code, s
	}
	if code, s := status("/healthz"); code != http.StatusOK || s.Status != "ok" {
		t.Fatalf("/healthz: %d %+v", code, s)
	}
	if code, s := status("/readyz"); code != http.StatusOK || s.Status != "ready" {
		t.Fatalf("/readyz when ready: %d %+v", code, s)
	}
	why := errors.Join(errors.New("not registered"), errors.New("kafka: unreachable"))
	notReady.Store(&why)
	code, s := status("/readyz")
	if code != http.StatusServiceUnavailable || s.Status != "not ready" || !slices.Equal(s.Reasons, []string{"not registered", "kafka: unreachable"}) {
		t.Fatalf("/readyz when not ready: %d %+v", code, s)
	}
	if code, _ := status("/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz when not ready: %d", code)
	}
	if code, _ := get(t, base+"/connectors"); code != http.StatusNotFound {
		t.Fatalf("/connectors: %d, want 404 (the listener serves nothing else)", code)
	}
}

func TestStartBadAddress(t *testing.T) {
	if _, err := opsserver.Start("127.0.0.1:not-a-port", prometheus.NewRegistry(), nil); err == nil {
		t.Fatal("a bad address was accepted")
	}
}

// startServer starts a server on loopback with opts and closes it when the
// test ends; it returns the server's base URL.
func startServer(t *testing.T, opts ...opsserver.Option) string {
	t.Helper()
	srv, err := opsserver.Start("127.0.0.1:0", prometheus.NewRegistry(), nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
	})
	return "http://" + srv.Addr()
}

// TestProfiling: with WithProfiling the listener serves Go's profiles — a
// heap profile in pprof's format (gzip), the goroutine dump — but never
// the command line, which may hold a credential given as a flag; without
// it, none of /debug/pprof/.
func TestProfiling(t *testing.T) {
	base := startServer(t, opsserver.WithProfiling())
	code, body := get(t, base+"/debug/pprof/heap")
	if code != http.StatusOK || !bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
		t.Fatalf("GET /debug/pprof/heap = %d, %d bytes starting %x; want 200 and a gzipped profile", code, len(body), body[:min(len(body), 4)])
	}
	if code, body := get(t, base+"/debug/pprof/goroutine?debug=1"); code != http.StatusOK || !bytes.Contains(body, []byte("goroutine profile:")) {
		t.Fatalf("GET /debug/pprof/goroutine?debug=1 = %d %.100s", code, body)
	}
	if code, body := get(t, base+"/debug/pprof/cmdline"); code != http.StatusNotFound || bytes.Contains(body, []byte("opsserver")) {
		t.Fatalf("GET /debug/pprof/cmdline = %d %q, want 404 without the command line", code, body)
	}
	if code, _ := get(t, base+"/metrics"); code != http.StatusOK {
		t.Fatalf("GET /metrics beside the profiles = %d", code)
	}

	plain := startServer(t)
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/profile?seconds=1"} {
		if code, _ := get(t, plain+path); code != http.StatusNotFound {
			t.Errorf("GET %s without profiling = %d, want 404", path, code)
		}
	}
}
