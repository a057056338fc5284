package reconciler

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// TestEndpoints is the table of the agent endpoints' answers and what each
// changes.
func TestEndpoints(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	w.r.cfg.LivenessTopic = "beats"

	// A heartbeat before registering: unknown, it must register.
	reply, err := w.ep().heartbeatEndpoint(ctx, &wire.HeartbeatRequest{AgentID: "a"})
	if err != nil || !reply.(wire.HeartbeatReply).Unknown {
		t.Fatalf("heartbeat of an unknown agent: %+v, %v", reply, err)
	}
	// Register: known, told the lease and the liveness topic.
	reply, err = w.ep().registerEndpoint(ctx, &wire.RegisterRequest{AgentID: "a"})
	rr := reply.(wire.RegisterReply)
	if err != nil || rr.Term != 1 || rr.LeaseMillis != 10000 || rr.LivenessTopic != "beats" || rr.LivenessMillis != LivenessEvery.Milliseconds() {
		t.Fatalf("register: %+v, %v", reply, err)
	}
	if !w.r.table.Known("a") || !slices.Equal(w.listener.registered, []string{"a"}) {
		t.Fatal("a registered agent is not known, or the loggers were not told")
	}
	reply, _ = w.ep().heartbeatEndpoint(ctx, &wire.HeartbeatRequest{AgentID: "a"})
	if reply.(wire.HeartbeatReply).Unknown {
		t.Fatal("a registered agent's heartbeat was unknown")
	}
	// An invalid request is refused.
	if _, err := w.ep().registerEndpoint(ctx, &wire.RegisterRequest{}); err == nil {
		t.Fatal("a registration without an agent id was taken")
	}
	// Deregister while another agent is registered: forgotten (its tasks
	// go elsewhere at once), and the host of Java connectors told.
	w.register("b")
	if _, err := w.ep().deregisterEndpoint(ctx, &wire.RegisterRequest{AgentID: "a"}); err != nil {
		t.Fatal(err)
	}
	if w.r.table.Known("a") || !slices.Equal(w.listener.goneIDs(), []string{"a"}) {
		t.Fatal("a deregistered agent is still known, or nobody was told")
	}
	// Connector events go to the host; one without a name is refused.
	if _, err := w.ep().connectorEventEndpoint(ctx, &wire.PluginConnectorEvent{Name: "c", Kind: "k"}); err != nil || len(w.listener.events) != 1 {
		t.Fatalf("connector event: %v, %d events", err, len(w.listener.events))
	}
	if _, err := w.ep().connectorEventEndpoint(ctx, &wire.PluginConnectorEvent{Kind: "k"}); !api.IsCode(err, api.CodeBadRequest) {
		t.Fatalf("a nameless connector event: %v", err)
	}
}

// TestObserve is the table of what a registration or heartbeat tells.
func TestObserve(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		first      *wire.RegisterRequest // registered before, if set
		req        wire.RegisterRequest
		register   bool
		wantKnown  bool
		wantGone   bool
		wantJoined bool
	}{
		{"heartbeat, unknown", nil, wire.RegisterRequest{AgentID: "a"}, false, false, false, false},
		{"register", nil, wire.RegisterRequest{AgentID: "a"}, true, true, false, false},
		{"register again, same process", &wire.RegisterRequest{AgentID: "a", StartedAt: start}, wire.RegisterRequest{AgentID: "a", StartedAt: start}, true, true, false, false},
		{"register again, restarted: its host's connectors are gone", &wire.RegisterRequest{AgentID: "a", StartedAt: start},
			wire.RegisterRequest{AgentID: "a", StartedAt: start.Add(time.Second)}, true, true, true, false},
		{"a host with plugins joins", nil, wire.RegisterRequest{AgentID: "a", HostPlugins: []api.PluginInfo{{Class: "J", Version: "1"}}}, true, true, false, true},
		{"a host's heartbeat, nothing new", &wire.RegisterRequest{AgentID: "a", HostPlugins: []api.PluginInfo{{Class: "J", Version: "1"}}},
			wire.RegisterRequest{AgentID: "a", HostPlugins: []api.PluginInfo{{Class: "J", Version: "1"}}}, false, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			if tc.first != nil {
				w.r.Observe(tc.first, true)
				w.listener.joined = 0
			}
			known := w.r.Observe(&tc.req, tc.register)
			if known != tc.wantKnown || (len(w.listener.goneIDs()) > 0) != tc.wantGone || (w.listener.joined > 0) != tc.wantJoined {
				t.Fatalf("known %v, gone %v, joined %d; want %v, %v, %v", known, w.listener.goneIDs(), w.listener.joined, tc.wantKnown, tc.wantGone, tc.wantJoined)
			}
		})
	}
}

// TestForgedGeneration: a task reported at a generation never issued is
// not adopted, and the counter does not move to it.
func TestForgedGeneration(t *testing.T) {
	w := newWorld(t, conn("c", 1))
	w.register("a", wire.RunningTask{ID: tid("c", 0), Generation: 1 << 40, State: api.StateRunning})
	if p := w.placedOn(tid("c", 0)); p != "" || w.r.table.Generation() != 0 {
		t.Fatalf("a forged generation was adopted: placed on %q, generation %d", p, w.r.table.Generation())
	}
	reply, _ := w.ep().statusEndpoint(context.Background(), &wire.StatusReport{AgentID: "a", ID: tid("c", 0), Generation: 1 << 40, State: api.StateRunning})
	if _, ok := reply.(wire.StatusReply); !ok {
		t.Fatalf("status reply %+v", reply)
	}
	if _, ok := w.r.status.Task("c", 0); ok {
		t.Fatal("a status report of a forged generation was written")
	}
}

// TestStatusReports: only the current owner at the current generation
// writes a task's status; it writes the topics the task uses once.
func TestStatusReports(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, conn("c", 1))
	w.register("a")
	w.pass(t)
	gen := w.rpc.assignedTo("a")[0].Generation
	report := func(agent string, gen int64, state string, topics ...string) {
		if _, err := w.ep().statusEndpoint(ctx, &wire.StatusReport{AgentID: agent, ID: tid("c", 0), Generation: gen, State: state, Topics: topics}); err != nil {
			t.Fatal(err)
		}
	}
	report("b", gen, api.StateFailed)
	if st, _ := w.r.status.Task("c", 0); st.State == api.StateFailed {
		t.Fatal("another agent's report was written")
	}
	report("a", gen, api.StateRunning, "t1")
	if st, _ := w.r.status.Task("c", 0); st.State != api.StateRunning || st.WorkerID != "a" || st.Generation != gen {
		t.Fatalf("the owner's report: %+v", st)
	}
	if err := w.r.status.Write(ctx, records.Record{Key: records.ConnectorStatusKey("flush"), Value: records.EncodeStatus(api.StateRunning, "", "x", 0)}); err != nil {
		t.Fatal(err)
	}
	if got := w.statuses.Topics("c"); !slices.Equal(got, []string{"t1"}) {
		t.Fatalf("topics %v, want t1", got)
	}
}

// TestReportRecords is the table of the records one report calls for.
func TestReportRecords(t *testing.T) {
	id := tid("c", 0)
	now := time.UnixMilli(1234)
	cur := store.InstanceStatus{State: api.StateRunning, WorkerID: "a", Generation: 3}
	long := fmt.Sprintf("%0250d", 0)
	for _, tc := range []struct {
		name   string
		state  string
		gen    int64
		has    bool
		topics []string
		known  []string
		want   []string // keys
	}{
		{"nothing new", api.StateRunning, 3, true, nil, nil, nil},
		{"first report", api.StateRunning, 3, false, nil, nil, []string{records.TaskStatusKey("c", 0)}},
		{"new state", api.StateFailed, 3, true, nil, nil, []string{records.TaskStatusKey("c", 0)}},
		{"new generation", api.StateRunning, 4, true, nil, nil, []string{records.TaskStatusKey("c", 0)}},
		{"unassigned is not written", api.StateUnassigned, 4, true, nil, nil, nil},
		{"empty state is not written", "", 4, true, nil, nil, nil},
		{"new topic", api.StateRunning, 3, true, []string{"t"}, nil, []string{records.TopicStatusKey("c", "t")}},
		{"known topic", api.StateRunning, 3, true, []string{"t"}, []string{"t"}, nil},
		{"no name, or too long for Kafka", api.StateRunning, 3, true, []string{"", long}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var keys []string
			for _, r := range reportRecords("a", id, tc.gen, tc.state, "", tc.topics, cur, tc.has, tc.known, now) {
				keys = append(keys, r.Key)
			}
			if !slices.Equal(keys, tc.want) {
				t.Fatalf("records %v, want %v", keys, tc.want)
			}
		})
	}
}

// TestHeardBeatsEdges: beats keep an agent's lease; the liveness path is
// fresh for exactly livenessFresh after the last beat.
func TestHeardBeatsEdges(t *testing.T) {
	w := newWorld(t)
	w.register("a")
	if w.r.beatsFresh(w.clock.Now()) {
		t.Fatal("fresh before any beat")
	}
	w.clock.Add(9 * time.Second)
	w.r.HeardBeats([]string{"a", "stranger"})
	at := w.clock.Now()
	if seen, _ := w.r.table.LastSeen("a"); !seen.Equal(at) {
		t.Fatalf("last seen %v, want the beat's %v", seen, at)
	}
	if w.r.table.Known("stranger") {
		t.Fatal("a beat registered an agent")
	}
	if !w.r.beatsFresh(at.Add(livenessFresh)) {
		t.Fatal("not fresh exactly livenessFresh after the beat")
	}
	if w.r.beatsFresh(at.Add(livenessFresh + time.Nanosecond)) {
		t.Fatal("fresh past livenessFresh")
	}
	w.r.HeardBeats(nil)
	if !w.r.beatsFresh(at) {
		t.Fatal("no beat moved the last beat")
	}
}

// TestAgentAbsentEdges is the table of what a run of presence misses means
// for an agent, on a fake clock.
func TestAgentAbsentEdges(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fresh    bool          // beats reach the leader
		silent   time.Duration // since the agent was last heard
		heardNew bool          // heard since the first miss
		want     absence
	}{
		{"the leader reads no beat, not heard since: lost", false, time.Second, false, absentLost},
		{"the leader reads no beat, heard since: NATS decides, alive", false, 0, true, absentAlive},
		{"beating, heard within the grace: wait", true, livenessGrace - time.Nanosecond, false, absentWait},
		{"beating, silent exactly the grace: lost", true, livenessGrace, false, absentLost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			firstMiss := w.clock.Now()
			if !tc.heardNew {
				firstMiss = firstMiss.Add(time.Nanosecond)
			}
			w.r.Observe(&wire.RegisterRequest{AgentID: "a"}, true)
			if tc.fresh {
				w.r.lastBeat.Store(w.clock.Now().Add(tc.silent).UnixNano())
			}
			w.clock.Add(tc.silent)
			if got := w.r.presence().agentAbsent("a", firstMiss); got != tc.want {
				t.Fatalf("agentAbsent = %v, want %v", got, tc.want)
			}
			if lost := !w.r.table.Known("a"); lost != (tc.want == absentLost) || (len(w.listener.goneIDs()) > 0) != lost {
				t.Fatalf("known %v, gone %v after %v", !lost, w.listener.goneIDs(), tc.want)
			}
		})
	}
}

// fakeProber answers probes as absent for the agents in absent.
type fakeProber struct{ absent map[string]bool }

func (p fakeProber) Probe(ctx context.Context, agent string, timeout time.Duration) (bool, bool) {
	if p.absent[agent] {
		return false, true
	}
	return true, false
}
func (p fakeProber) Reconnects() uint64 { return 0 }

// TestProbesFindALostAgent: with a fake prober (no NATS), an agent absent
// twice in a row while another answers is lost; the other stays.
func TestProbesFindALostAgent(t *testing.T) {
	w := newWorld(t)
	w.r.cfg.Prober = fakeProber{absent: map[string]bool{"dead": true}}
	w.r.cfg.Clock, w.r.clock = RealClock{}, RealClock{}
	for _, id := range []string{"dead", "live"} {
		w.r.Observe(&wire.RegisterRequest{AgentID: id}, true)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.r.presence().probeAgents(ctx, 5*time.Millisecond, time.Second) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(10 * time.Second); w.r.table.Known("dead"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("an absent agent is still known after 10 s")
		}
	}
	if !w.r.table.Known("live") {
		t.Fatal("an agent that answers was taken for lost")
	}
}
