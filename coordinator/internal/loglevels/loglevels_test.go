package loglevels

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/logging"
	"github.com/sluice-io/sluice/shared/wire"
)

// fakeLevels is a settable list of cluster-wide levels.
type fakeLevels struct {
	levels  []store.LoggerLevel
	version int64
}

func (f *fakeLevels) All() ([]store.LoggerLevel, int64) { return f.levels, f.version }
func (f *fakeLevels) Changed() <-chan struct{}          { return make(chan struct{}) }

// fakeAgents records what each agent was sent; agents in down fail.
type fakeAgents struct {
	mu   sync.Mutex
	live []string
	down map[string]bool
	sent map[string]int
}

func (f *fakeAgents) Registered() []string { return f.live }
func (f *fakeAgents) Loggers(_ context.Context, agent string, req wire.LoggersRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down[agent] {
		return errors.New("unreachable")
	}
	f.sent[agent]++
	return nil
}

func newService(levels *fakeLevels, agents *fakeAgents) *Service {
	return New(Config{Loggers: logging.FromLogger(slog.New(slog.DiscardHandler)), Levels: levels, Agents: agents,
		Logger: slog.New(slog.DiscardHandler)})
}

// TestPushSendsEachVersionOnce: an agent gets the list once per version;
// one that failed is sent it again at the next push; one that registered
// again (it may have restarted) gets it again; with no cluster-wide level
// nothing is sent.
func TestPushSendsEachVersionOnce(t *testing.T) {
	levels := &fakeLevels{}
	agents := &fakeAgents{live: []string{"a", "b"}, down: map[string]bool{"b": true}, sent: map[string]int{}}
	s := newService(levels, agents)
	acked := map[string]int64{}
	ctx := context.Background()
	s.push(ctx, 1, acked)
	if len(agents.sent) != 0 {
		t.Fatalf("sent %v with no level set", agents.sent)
	}
	levels.levels, levels.version = []store.LoggerLevel{{Namespace: "org.apache.kafka", Level: "DEBUG"}}, 1
	s.push(ctx, 1, acked)
	s.push(ctx, 1, acked)
	if agents.sent["a"] != 1 || agents.sent["b"] != 0 {
		t.Fatalf("after two pushes of version 1: %v", agents.sent)
	}
	agents.down["b"] = false
	s.push(ctx, 1, acked)
	if agents.sent["b"] != 1 || agents.sent["a"] != 1 {
		t.Fatalf("the failed agent was not sent again: %v", agents.sent)
	}
	s.Registered("a")
	for _, a := range s.takeRegistered() {
		delete(acked, a)
	}
	s.push(ctx, 1, acked)
	if agents.sent["a"] != 2 || agents.sent["b"] != 1 {
		t.Fatalf("a registered again and was not sent the list: %v", agents.sent)
	}
	levels.version = 2
	s.push(ctx, 1, acked)
	if agents.sent["a"] != 3 || agents.sent["b"] != 2 {
		t.Fatalf("a new version was not sent to all: %v", agents.sent)
	}
	agents.live = []string{"b"}
	s.push(ctx, 1, acked)
	if _, ok := acked["a"]; ok {
		t.Fatal("an agent gone is still counted as acknowledged")
	}
}

// TestLoggerAnswers: an unknown logger is Kafka Connect's 404; a worker
// level is set here and the changed names returned; a failed cluster
// write is answered as the write path's error.
func TestLoggerAnswers(t *testing.T) {
	loggers := logging.FromLogger(slog.New(slog.DiscardHandler))
	s := New(Config{Loggers: loggers, Levels: &fakeLevels{}, Agents: &fakeAgents{},
		Apply: func(context.Context, ...store.Command) error { return errors.New("broker down") },
		WriteFailed: func(err error, what string, args ...any) error {
			return api.Errorf(api.CodeInternal, "%s: %v", what, err)
		}, Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	if _, err := s.LoggerLevel(ctx, "no.such"); err == nil || api.AsError(err).Message != "Logger no.such not found." {
		t.Fatalf("unknown logger: %v", err)
	}
	changed, err := s.SetWorkerLoggerLevel(ctx, "root", "DEBUG")
	if err != nil || len(changed) == 0 {
		t.Fatalf("set root: %v %v", changed, err)
	}
	all, _ := s.LoggerLevels(ctx)
	if all["root"].Level != "DEBUG" || all["root"].LastModified == nil {
		t.Fatalf("root after set: %+v", all["root"])
	}
	if err := s.SetClusterLoggerLevel(ctx, "root", "INFO"); err == nil || api.AsError(err).Message != "Error writing logger level to Kafka: broker down" {
		t.Fatalf("failed cluster write: %v", err)
	}
	s.ApplyClusterLevel("root", "NOT-A-LEVEL") // skipped, as Kafka Connect skips it
	if all, _ := s.LoggerLevels(ctx); all["root"].Level != "DEBUG" {
		t.Fatalf("an unknown cluster level changed root to %s", all["root"].Level)
	}
}
