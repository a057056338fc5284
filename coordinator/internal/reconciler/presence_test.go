package reconciler

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluice-io/sluice/shared/embedded/natstest"
	"github.com/sluice-io/sluice/shared/wire"
)

// presenceAgent is one agent's NATS connection serving its presence
// endpoint as answer says, and how many probes reached it.
type presenceAgent struct {
	nc     *nats.Conn
	probes atomic.Int64
}

// serveAgent connects agent id to url and answers its presence probes while
// answer returns true; a probe it does not answer is held, as by an agent
// that is paused, or that dies with the probe in hand.
func serveAgent(t *testing.T, url, group, id string, answer func(n int64) bool) *presenceAgent {
	t.Helper()
	nc := natstest.Connect(t, url)
	a := &presenceAgent{nc: nc}
	if _, err := nc.Subscribe(wire.AgentSubject(wire.SubjectAgentPresence, group, id), func(m *nats.Msg) {
		if answer(a.probes.Add(1)) {
			_ = m.Respond(nil)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return a
}

// presenceReconciler is a reconciler on an embedded NATS server whose
// registry holds the agents ids, serving presence, and a function that says
// whether it still knows an agent. It returns the server's URL for the
// agents.
func presenceReconciler(t *testing.T, group string, ids ...string) (*Reconciler, string, func(id string) bool) {
	t.Helper()
	url := natstest.Start(t)
	nc := natstest.Connect(t, url)
	h := New(Config{GroupID: group, NC: nc, AgentLease: time.Hour, Listener: &fakeListener{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	for _, id := range ids {
		h.table.agents.Observe(&wire.RegisterRequest{AgentID: id}, true, time.Now())
	}
	return h, url, h.table.Known
}

// runProbes runs h's presence probes (every, timeout) until the test ends.
func runProbes(t *testing.T, h *Reconciler, every, timeout time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.presence().probeAgents(ctx, every, timeout)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// waitUntil polls cond every 10 ms and fails the test with msg after 30 s.
func waitUntil(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
	}
}

// TestPresenceProbeHeldByADyingAgent: an agent that dies holding a probe
// never answers it; the probes sent after it find the agent absent, and it
// is taken for lost long before the held one times out (here after a
// minute). The others stay.
func TestPresenceProbeHeldByADyingAgent(t *testing.T) {
	const group = "g"
	h, url, known := presenceReconciler(t, group, "dying", "live")
	held := make(chan struct{})
	dying := serveAgent(t, url, group, "dying", func(n int64) bool {
		if n == 3 {
			close(held)
			return false
		}
		return true
	})
	serveAgent(t, url, group, "live", func(int64) bool { return true })
	runProbes(t, h, 20*time.Millisecond, time.Minute)

	waitUntil(t, func() bool {
		select {
		case <-held:
			return true
		default:
			return false
		}
	}, "the dying agent got no third probe")
	dying.nc.Close() // it dies holding the probe
	waitUntil(t, func() bool { return !known("dying") },
		"an agent that died holding a probe is still known after 30 s: its probes waited for the held one's timeout (1 min)")
	if !known("live") {
		t.Error("an agent that answers its probes was taken for lost")
	}
}

// TestPresencePausedAgentIsLeftToItsLease: a paused agent keeps its
// connection and holds every probe it gets: they time out, none finds it
// absent, and it is never taken for lost by its probes (its lease
// decides), however many time out.
func TestPresencePausedAgentIsLeftToItsLease(t *testing.T) {
	const group = "g"
	h, url, known := presenceReconciler(t, group, "paused", "live")
	paused := serveAgent(t, url, group, "paused", func(int64) bool { return false })
	serveAgent(t, url, group, "live", func(int64) bool { return true })
	runProbes(t, h, 20*time.Millisecond, 50*time.Millisecond)

	waitUntil(t, func() bool { return paused.probes.Load() >= 10 }, "the paused agent got fewer than 10 probes in 30 s")
	if !known("paused") {
		t.Error("a paused agent (its probes time out) was taken for lost by its probes")
	}
	if !known("live") {
		t.Error("an agent that answers its probes was taken for lost")
	}
}

// TestPresenceAbsentButBeating: an agent whose NATS connection closed but
// whose liveness beats still reach the leader is cut off from NATS alone:
// it keeps its tasks. Once its beats stop too, it is lost within
// livenessGrace. A leader that reads no beat at all judges by NATS alone.
func TestPresenceAbsentButBeating(t *testing.T) {
	h := New(Config{LivenessTopic: "beats", AgentLease: time.Hour, Listener: &fakeListener{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	h.table.agents.Observe(&wire.RegisterRequest{AgentID: "a"}, true, time.Now())
	firstMiss := time.Now()
	beat := func() {
		h.table.Touch([]string{"a"}, time.Now())
		h.lastBeat.Store(time.Now().UnixNano())
	}
	for range 5 {
		beat()
		if got := h.presence().agentAbsent("a", firstMiss); got != absentWait {
			t.Fatalf("an agent whose beats arrive: %v, want to wait", got)
		}
		time.Sleep(LivenessEvery)
	}
	// Its beats stop; another agent's keep the path fresh.
	deadline := time.Now().Add(livenessGrace + time.Second)
	for {
		h.lastBeat.Store(time.Now().UnixNano())
		got := h.presence().agentAbsent("a", firstMiss)
		if got == absentLost {
			break
		}
		if got != absentWait || time.Now().After(deadline) {
			t.Fatalf("an agent neither on NATS nor beating: %v", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if h.table.Known("a") {
		t.Fatal("a lost agent is still known")
	}
}
