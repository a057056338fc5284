package javahost

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
)

func TestScan(t *testing.T) {
	s := newFakeSupervisor(t, "host")
	got, err := s.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []api.PluginInfo{
		{Class: "io.example.JdbcSourceConnector", Type: "source", Version: "10.7.4"},
		{Class: "org.apache.kafka.connect.file.FileStreamSourceConnector", Type: "source", Version: "4.4.0"},
		{Class: "io.example.Plugin", Type: "sink", Version: "/p1," + abs("p2")}, // the fake echoes --plugin-path
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scan = %+v", got)
	}
}

func TestScanFailureQuotesStderr(t *testing.T) {
	s := newFakeSupervisor(t, "exit")
	_, err := s.Scan(context.Background())
	if err == nil || !strings.Contains(err.Error(), "exit status 1") || !strings.Contains(err.Error(), "Could not find or load main class") {
		t.Errorf("failed scan: %v", err)
	}
}

func TestCheckNamesWhatIsMissing(t *testing.T) {
	s := NewSupervisor(Config{Java: "/nonexistent/java", HostDir: t.TempDir()})
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), "/nonexistent/java") {
		t.Errorf("missing java: %v", err)
	}
	exe, _ := os.Executable()
	dir := t.TempDir()
	s = NewSupervisor(Config{Java: exe, HostDir: dir})
	err := s.Check()
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, HostJar)) || !strings.Contains(err.Error(), "make javahost") {
		t.Errorf("missing host jar: %v", err)
	}
}

func TestSocketPathFallsBackWhenTooLong(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	s := NewSupervisor(Config{WorkDir: long})
	p, err := s.socketPath()
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(s.sockDir)
	if len(p) > maxSocketPath || strings.HasPrefix(p, long) {
		t.Errorf("socket path %s (%d bytes) for a work dir of %d bytes", p, len(p), len(long))
	}
	s = NewSupervisor(Config{WorkDir: "/tmp"})
	if p, _ := s.socketPath(); filepath.Dir(p) != "/tmp" {
		t.Errorf("short work dir: socket at %s", p)
	}
}

// TestHostLostAndRestarted: a JVM that dies fails its pending call with
// its exit status and last stderr lines, tells the listeners, and the next
// use starts a new one after the backoff.
func TestHostLostAndRestarted(t *testing.T) {
	s := newFakeSupervisor(t, "host")
	ctx := context.Background()
	c, err := s.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Conn(ctx); again != c {
		t.Fatalf("a second use started another host")
	}
	lost := make(chan error, 1)
	s.OnLost(func(lc *Conn, err error) {
		if lc == c {
			lost <- err
		}
	})
	_, err = c.Call(ctx, "task.start", mustJSON(map[string]any{"id": "c-0", "connector_config": map[string]string{"fake": fakeCrash}}))
	for _, e := range []error{err, <-lost} {
		if !errors.Is(e, ErrHostLost) || !strings.Contains(e.Error(), "connector host exited (exit status 137)") || !strings.Contains(e.Error(), "OutOfMemoryError") {
			t.Errorf("loss: %v", e)
		}
	}
	start := time.Now()
	c2, err := s.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c2 == c || c2.Err() != nil {
		t.Fatalf("not restarted")
	}
	if waited := time.Since(start); waited < 500*time.Millisecond {
		t.Errorf("restarted after %v, want the 1 s backoff", waited)
	}
	if _, err := c.Call(ctx, "host.hello", nil); !errors.Is(err, ErrHostLost) {
		t.Errorf("a call on the old connection: %v", err)
	}
}

func TestBackoffDoubles(t *testing.T) {
	s := NewSupervisor(Config{})
	var got []time.Duration
	for range 7 {
		s.backoff(time.Now())
		got = append(got, time.Until(s.notBefore).Round(time.Second))
	}
	want := []time.Duration{1, 2, 4, 8, 16, 30, 30}
	for i := range want {
		if got[i] != want[i]*time.Second {
			t.Fatalf("backoffs %v, want %v seconds", got, want)
		}
	}
	s.backoff(time.Now().Add(-2 * healthyRun))
	if d := time.Until(s.notBefore).Round(time.Second); d != time.Second {
		t.Errorf("after a healthy run: %v", d)
	}
}

func TestStopEndsTheHost(t *testing.T) {
	s := newFakeSupervisor(t, "host")
	if _, err := s.Conn(context.Background()); err != nil {
		t.Fatal(err)
	}
	p := s.proc
	s.Stop()
	select {
	case <-p.exited:
	default:
		t.Fatal("host still running after Stop")
	}
	if _, err := s.Conn(context.Background()); err == nil {
		t.Error("a stopped supervisor started a host")
	}
}

func abs(p string) string {
	a, _ := filepath.Abs(p)
	return a
}
