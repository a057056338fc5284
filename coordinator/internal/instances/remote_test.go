package instances

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

const javaClass = "com.example.RemoteSource"

// fakeAgents is a cluster of agents whose hosts have javaClass: each call
// is recorded, a down agent answers as NATS does when nobody listens.
type fakeAgents struct {
	mu    sync.Mutex
	live  []string
	down  map[string]bool
	calls []string // "<agent> <op> <name>"
	// tasks is how many task configs task_configs returns.
	tasks int
	// hang are the agents that take a call and never answer it (they
	// died holding it): the call waits until its context ends.
	hang map[string]bool
}

func (f *fakeAgents) Locate(props map[string]string) (RemotePlugin, []string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := RemotePlugin{Plugin: Plugin{Class: javaClass, Kind: connect.KindSource, Remote: true}}
	if len(f.live) == 0 {
		return p, nil, api.Errorf(api.CodeUnavailable, "No live agent has the plugin %s", javaClass)
	}
	return p, slices.Clone(f.live), nil
}

func (f *fakeAgents) Call(ctx context.Context, agent string, req wire.PluginConnectorRequest) (wire.PluginConnectorReply, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, agent+" "+req.Op+" "+req.Name)
	if f.hang[agent] {
		f.mu.Unlock()
		<-ctx.Done()
		f.mu.Lock()
		return wire.PluginConnectorReply{}, ctx.Err()
	}
	if f.down[agent] {
		return wire.PluginConnectorReply{}, api.Errorf(api.CodeUnavailable, "no responders")
	}
	var reply wire.PluginConnectorReply
	if req.Op == wire.PluginOpTaskConfigs {
		for i := range min(f.tasks, req.MaxTasks) {
			reply.TaskConfigs = append(reply.TaskConfigs, map[string]string{"n": strconv.Itoa(i), "agent": agent, "task.class": "com.example.RemoteTask"})
		}
	}
	return reply, nil
}

// started is the agents start was sent to, in order.
func (f *fakeAgents) started() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		var agent, op, name string
		_, _ = fmt.Sscan(c, &agent, &op, &name) // a short call leaves the rest empty
		if op == wire.PluginOpStart {
			out = append(out, agent)
		}
	}
	return out
}

func (f *fakeAgents) set(live []string, down ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.live, f.down = live, map[string]bool{}
	for _, d := range down {
		f.down[d] = true
	}
}

// remoteHarness is a Manager whose Java connectors run on fakeAgents, the
// built-in fake plugin locally.
func remoteHarness(t *testing.T, agents *fakeAgents) (*harness, *RemoteHost) {
	var remote *RemoteHost
	h := newHarness(t, func(c *Config) {
		remote = NewRemoteHost(agents, nil)
		c.Host = NewDispatchHost(c.Host, remote, func(props map[string]string) bool { return props["connector.class"] == javaClass })
	})
	return h, remote
}

func javaConn(name string) Connector {
	return Connector{Name: name, TargetState: records.TargetStarted,
		Config: map[string]string{"connector.class": javaClass, "name": name, "tasks.max": "3"}}
}

// TestRemoteHostLifecycle: a Java connector starts on an agent, its task
// configs come from there (task.class as the host named it), a reconfigure
// event asks again, a built-in next to it stays local, and Stop goes to the
// agent that ran it.
func TestRemoteHostLifecycle(t *testing.T) {
	agents := &fakeAgents{tasks: 2}
	agents.set([]string{"b", "a"})
	h, remote := remoteHarness(t, agents)
	h.Sync([]Connector{javaConn("j"), conn("local", records.TargetStarted)})
	h.settle(t)
	ts, ok := h.TaskConfigs("j")
	if !ok || len(ts.Configs) != 2 || ts.Configs[0]["agent"] != "a" || ts.Configs[0]["task.class"] != "com.example.RemoteTask" {
		t.Fatalf("task configs %+v, %v: want 2 from agent a (the first by id)", ts, ok)
	}
	if c := h.plugin.counts(); c.starts != 1 {
		t.Fatalf("local plugin started %d times, want once (the built-in only)", c.starts)
	}
	agents.mu.Lock()
	agents.tasks = 3
	agents.mu.Unlock()
	remote.Event(wire.PluginConnectorEvent{AgentID: "b", Name: "j", Kind: wire.PluginEventReconfigure})
	h.settle(t)
	if ts, _ := h.TaskConfigs("j"); len(ts.Configs) != 2 {
		t.Fatal("an event from an agent that does not run the connector was heeded")
	}
	remote.Event(wire.PluginConnectorEvent{AgentID: "a", Name: "j", Kind: wire.PluginEventReconfigure})
	eventually(t, func() bool { ts, _ := h.TaskConfigs("j"); return len(ts.Configs) == 3 })
	h.Sync([]Connector{conn("local", records.TargetStarted)})
	h.settle(t)
	agents.mu.Lock()
	last := agents.calls[len(agents.calls)-1]
	agents.mu.Unlock()
	if last != "a stop j" {
		t.Fatalf("last call %q, want the stop on agent a", last)
	}
}

// TestRemoteHostLostMidCall: an agent that dies holding a task configs
// call never answers it; once the agent is known gone the call ends and
// the connector starts on another agent, without waiting out the call's
// timeout.
func TestRemoteHostLostMidCall(t *testing.T) {
	agents := &fakeAgents{tasks: 1}
	agents.set([]string{"a", "b"})
	h, remote := remoteHarness(t, agents)
	h.Sync([]Connector{javaConn("j")})
	h.settle(t)
	agents.mu.Lock()
	agents.hang = map[string]bool{"a": true}
	agents.mu.Unlock()
	remote.Event(wire.PluginConnectorEvent{AgentID: "a", Name: "j", Kind: wire.PluginEventReconfigure})
	eventually(t, func() bool { // the call after the start's, now held
		agents.mu.Lock()
		defer agents.mu.Unlock()
		return slices.Equal(agents.calls, []string{"a start j", "a task_configs j", "a task_configs j"})
	})
	agents.set([]string{"b"})
	remote.AgentsGone([]string{"a"})
	eventually(t, func() bool { ts, _ := h.TaskConfigs("j"); return len(ts.Configs) == 1 && ts.Configs[0]["agent"] == "b" })
}

// TestRemoteHostLost: an agent gone, or its host dead, starts the connector
// again, on another agent; an unreachable agent fails the call, the
// Manager retries after its backoff and the next start goes elsewhere; no
// agent at all fails the connector with the reason.
func TestRemoteHostLost(t *testing.T) {
	agents := &fakeAgents{tasks: 1}
	agents.set([]string{"a", "b"})
	h, remote := remoteHarness(t, agents)
	h.Sync([]Connector{javaConn("j")})
	h.settle(t)

	agents.set([]string{"b"})
	remote.AgentsGone([]string{"a"})
	eventually(t, func() bool { ts, _ := h.TaskConfigs("j"); return ts.Configs[0]["agent"] == "b" })

	remote.Event(wire.PluginConnectorEvent{AgentID: "b", Name: "j", Kind: wire.PluginEventHostLost})
	h.settle(t)
	if got := agents.started(); !slices.Equal(got, []string{"a", "b", "b"}) {
		t.Fatalf("starts on %v, want a, b, then b again after its host was lost", got)
	}

	// b stops answering: task configs fail, the instance counts as lost,
	// and the start after the backoff goes to a.
	agents.set([]string{"a", "b"}, "b")
	remote.Event(wire.PluginConnectorEvent{AgentID: "b", Name: "j", Kind: wire.PluginEventReconfigure})
	h.settle(t)
	for range 3 {
		h.clock.fire()
		h.settle(t)
	}
	eventually(t, func() bool { ts, _ := h.TaskConfigs("j"); return ts.Configs[0]["agent"] == "a" })

	agents.set(nil)
	remote.AgentsGone([]string{"a"})
	h.settle(t)
	st := h.status.of("j")
	if last := st[len(st)-1]; last.State != api.StateFailed || last.Trace != "No live agent has the plugin "+javaClass {
		t.Fatalf("status %+v, want FAILED saying no live agent has the plugin", last)
	}
	// An agent comes back: the connector waiting for one is named once,
	// and a restart starts it without waiting out its backoff.
	if got := remote.Waiting(); !slices.Equal(got, []string{"j"}) {
		t.Fatalf("waiting %v, want j", got)
	}
	if got := remote.Waiting(); len(got) != 0 {
		t.Fatalf("waiting again %v, want none", got)
	}
	agents.set([]string{"c"})
	h.Restart("j")
	eventually(t, func() bool { ts, _ := h.TaskConfigs("j"); return ts.Configs[0]["agent"] == "c" })
}
