package offsets

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

var ctx = context.Background()

// wantCode fails t unless err is a REST error of code whose message is msg
// (or contains it, with contains).
func wantCode(t *testing.T, err error, code api.Code, msg string) {
	t.Helper()
	var e *api.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want a REST error %d %q", err, err, code, msg)
	}
	if e.Code != code || !strings.Contains(e.Message, msg) {
		t.Fatalf("error %d %q, want %d containing %q", e.Code, e.Message, code, msg)
	}
}

func TestGetOffsets(t *testing.T) {
	w := newWorld(t, stopped("src", srcClass), stopped("snk", sinkClass), stopped("odd", "no.Such"))
	w.kafka.setSource("src", api.ConnectorOffset{Partition: part("a"), Offset: off(3)}, api.ConnectorOffset{Partition: part("b")})
	w.kafka.groups["connect-snk"] = map[string]map[int32]int64{"t": {0: 5, 1: -1}}

	got, err := w.svc.GetOffsets(ctx, "src")
	if err != nil || len(got.Offsets) != 1 || got.Offsets[0].Partition["file"] != "a" {
		t.Fatalf("source offsets %+v, %v: want only the live partition a", got, err)
	}
	got, err = w.svc.GetOffsets(ctx, "snk")
	if err != nil || len(got.Offsets) != 1 || got.Offsets[0].Offset["kafka_offset"] != int64(5) {
		t.Fatalf("sink offsets %+v, %v: want partition 0 at 5, and none for the uncommitted partition", got, err)
	}
	_, err = w.svc.GetOffsets(ctx, "gone")
	wantCode(t, err, api.CodeNotFound, "Connector gone not found")
	_, err = w.svc.GetOffsets(ctx, "odd")
	wantCode(t, err, api.CodeInternal, "Failed to find any class that implements Connector and which name matches no.Such")

	w.kafka.err = errors.New("broker down")
	_, err = w.svc.GetOffsets(ctx, "snk")
	wantCode(t, err, api.CodeInternal, "Failed to retrieve consumer group offsets for sink connector snk")
	_, err = w.svc.GetOffsets(ctx, "src")
	wantCode(t, err, api.CodeInternal, "Failed to retrieve offsets for source connector src")
}

// TestChangesNeedAStoppedConnector: every change (and its preview) of a
// connector that is not STOPPED, or has tasks, is refused before anything
// is read or sent.
func TestChangesNeedAStoppedConnector(t *testing.T) {
	running := stopped("run", srcClass)
	running.TargetState = records.TargetStarted
	withTasks := stopped("tasks", srcClass)
	withTasks.Tasks = []map[string]string{{}}
	w := newWorld(t, running, withTasks)
	ops := map[string]func(name string) error{
		"PATCH":   func(n string) error { _, err := w.svc.AlterOffsets(ctx, n, nil); return err },
		"DELETE":  func(n string) error { _, err := w.svc.ResetOffsets(ctx, n); return err },
		"preview": func(n string) error { _, err := w.svc.PreviewOffsets(ctx, n, api.OffsetsPreviewRequest{}); return err },
		"reset-to": func(n string) error {
			_, err := w.svc.ResetOffsetsTo(ctx, n, api.OffsetsResetRequest{To: "earliest"})
			return err
		},
	}
	for _, do := range ops {
		for _, name := range []string{"run", "tasks"} {
			wantCode(t, do(name), api.CodeBadRequest, "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/"+name+"/stop' endpoint")
		}
		wantCode(t, do("nobody"), api.CodeNotFound, "Connector nobody not found")
	}
	if w.kafka.reads != 0 || w.rpc.changes()+len(w.rpc.replaces) != 0 || len(w.hist.entries) != 0 {
		t.Fatalf("a refused change read %d times, sent %d requests, wrote %d entries", w.kafka.reads, w.rpc.changes()+len(w.rpc.replaces), len(w.hist.entries))
	}
}

// TestAlterValidation: a request that is not valid is refused before the
// tasks are stopped, the history written or an agent asked.
func TestAlterValidation(t *testing.T) {
	w := newWorld(t, stopped("src", srcClass), stopped("snk", sinkClass))
	cases := []struct {
		name    string
		offsets []api.ConnectorOffset
		code    api.Code
		msg     string
	}{
		{"src", []api.ConnectorOffset{{Partition: nil, Offset: off(1)}}, api.CodeBadRequest, "The partition for a source connector offset cannot be null"},
		{"src", []api.ConnectorOffset{{Partition: part("a"), Offset: map[string]any{"pos": map[string]any{}}}}, api.CodeBadRequest, "Offsets may only contain primitive types as values, but field pos contains MAP"},
		{"snk", []api.ConnectorOffset{{Partition: map[string]any{"kafka_topic": "sluice-configs", "kafka_partition": 0}, Offset: map[string]any{"kafka_offset": 1}}},
			api.CodeBadRequest, "Invalid kafka_topic sluice-configs in the offsets of connector snk: the"},
		{"snk", []api.ConnectorOffset{{Partition: map[string]any{"kafka_partition": 0}}}, api.CodeBadRequest, ""},
	}
	for _, c := range cases {
		_, err := w.svc.AlterOffsets(ctx, c.name, c.offsets)
		wantCode(t, err, c.code, c.msg)
		_, err = w.svc.PreviewOffsets(ctx, c.name, api.OffsetsPreviewRequest{Offsets: c.offsets})
		wantCode(t, err, c.code, c.msg)
	}
	if len(w.agents.revoked) != 0 || len(w.hist.entries) != 0 || w.rpc.changes() != 0 {
		t.Fatalf("an invalid request stopped tasks on %d agents, wrote %d entries, sent %d requests", len(w.agents.revoked), len(w.hist.entries), w.rpc.changes())
	}
}

// TestAlterSource follows a PATCH of a source connector through every step:
// tasks stopped on every agent, the pending entry, the hook, the agent's
// fenced write of the canonical key (the partition's other key encodings
// tombstoned), the entry marked applied.
func TestAlterSource(t *testing.T) {
	w := newWorld(t, stopped("src", srcClass))
	w.conns.bound["src"] = 3 // a task 2 of an earlier tasks.max may still run
	w.agents.held = []api.TaskID{{Connector: "src", Task: 4}}
	w.kafka.setSource("src", api.ConnectorOffset{Partition: part("a"), Offset: off(3)})
	w.kafka.source["src"][0].RawKeys = append(w.kafka.source["src"][0].RawKeys, `["src", {"file": "a"}]`)

	msg, err := w.svc.AlterOffsets(ctx, "src", []api.ConnectorOffset{{Partition: part("a"), Offset: off(9)}, {Partition: part("b"), Offset: off(1)}})
	if err != nil {
		t.Fatal(err)
	}
	if msg.Message != msgAlterFrameworkText() {
		t.Errorf("answer %q, want the framework's", msg.Message)
	}
	for _, a := range []string{"a1", "a2"} {
		if got := w.agents.revoked[a]; len(got) != 4 || got[3].Task != 4 {
			t.Errorf("agent %s was asked to stop %v, want tasks 0-2 and the held task 4", a, got)
		}
	}
	if len(w.rpc.offsets) != 1 {
		t.Fatalf("%d requests sent, want 1", len(w.rpc.offsets))
	}
	req := w.rpc.offsets[0]
	if req.Term != 7 || req.Op != wire.OffsetsOpAlter || req.Topic != "sluice-offsets" || !req.CallerWaits || len(req.FenceIDs) != 3 ||
		req.TxnID != records.TransactionalID("sluice", "src", 0) {
		t.Errorf("request %+v", req)
	}
	if len(req.Writes) != 3 || req.Writes[0].Value != nil || req.Writes[0].Key != `["src", {"file": "a"}]` {
		t.Errorf("writes %+v: want the old key encoding tombstoned, then a and b", req.Writes)
	}
	if len(w.plugins.hookCalls) != 1 || len(w.plugins.hookCalls[0]) != 2 {
		t.Errorf("hook calls %v", w.plugins.hookCalls)
	}
	e := w.hist.entries[0]
	if e.Operation != api.HistoryAlter || e.Principal != "alice" || e.State != api.HistoryApplied || len(e.Changes) != 2 ||
		!sameOffset(e.Changes[0].From, off(3)) || e.Changes[1].From != nil {
		t.Errorf("history entry %+v", e)
	}
}

func msgAlterFrameworkText() string { return MsgAlterFramework }

func TestAlterAnswersDefiniteWhenTheHookAcknowledges(t *testing.T) {
	w := newWorld(t, stopped("src", srcClass))
	w.plugins.hook.definite = true
	msg, err := w.svc.AlterOffsets(ctx, "src", []api.ConnectorOffset{{Partition: part("a"), Offset: off(1)}})
	if err != nil || msg.Message != MsgAlterDefinite {
		t.Fatalf("answer %q, %v", msg.Message, err)
	}
}

// TestHookRefusal: a hook that refuses is a 400 with its message, after the
// entry was written as pending: the entry is marked failed and no agent
// writes anything.
func TestHookRefusal(t *testing.T) {
	w := newWorld(t, stopped("src", srcClass))
	w.plugins.hook.err = errors.New("the source cannot go back")
	_, err := w.svc.AlterOffsets(ctx, "src", []api.ConnectorOffset{{Partition: part("a"), Offset: off(1)}})
	wantCode(t, err, api.CodeBadRequest, "the source cannot go back")
	if w.rpc.changes() != 0 || w.hist.entries[0].State != api.HistoryFailed {
		t.Fatalf("sent %d, entry %+v", w.rpc.changes(), w.hist.entries[0])
	}
}

// TestJavaHook: a Java connector's hook runs on an agent whose host has
// its plugin; with none, the change is refused.
func TestJavaHook(t *testing.T) {
	w := newWorld(t, stopped("j", javaClass))
	_, err := w.svc.AlterOffsets(ctx, "j", []api.ConnectorOffset{{Partition: part("a"), Offset: off(1)}})
	wantCode(t, err, api.CodeBadRequest, "No live agent has the plugin test.JavaSource@1.0: nobody can ask connector test.JavaSource about the offsets change")

	w.hosts.agents = []string{"a1"}
	w.hosts.reply = wire.PluginConnectorReply{Definite: true}
	msg, err := w.svc.AlterOffsets(ctx, "j", []api.ConnectorOffset{{Partition: part("a"), Offset: off(1)}})
	if err != nil || msg.Message != MsgAlterDefinite || w.hosts.got[0].Op != wire.PluginOpAlterOffsets || w.hosts.got[0].Version != "1.0" {
		t.Fatalf("answer %q, %v, host requests %+v", msg.Message, err, w.hosts.got)
	}
	w.hosts.err = api.Errorf(api.CodeBadRequest, "refused by Java")
	_, err = w.svc.AlterOffsets(ctx, "j", []api.ConnectorOffset{{Partition: part("a"), Offset: off(1)}})
	wantCode(t, err, api.CodeBadRequest, "refused by Java")
}

// TestResetSource: a source's reset is a replace the agent works out from
// the offsets topic itself, and its changes remove every position.
func TestResetSource(t *testing.T) {
	w := newWorld(t, stopped("src", srcClass))
	w.kafka.setSource("src", api.ConnectorOffset{Partition: part("a"), Offset: off(3)}, api.ConnectorOffset{Partition: part("b"), Offset: off(4)})
	msg, err := w.svc.ResetOffsets(ctx, "src")
	if err != nil || msg.Message != msgResetFramework {
		t.Fatalf("answer %q, %v", msg.Message, err)
	}
	if len(w.rpc.replaces) != 1 || len(w.rpc.replaces[0].Writes) != 0 || w.rpc.changes() != 0 {
		t.Fatalf("replaces %+v, offsets %+v: want one replace with no writes", w.rpc.replaces, w.rpc.offsets)
	}
	e := w.hist.entries[0]
	if e.Operation != api.HistoryReset || len(e.Changes) != 2 || e.Changes[0].To != nil || e.Changes[1].To != nil {
		t.Fatalf("entry %+v", e)
	}
}

// TestPreviewWritesNothing: a preview answers the changes, and neither
// stops tasks, calls the hook, writes the history nor asks an agent.
func TestPreviewWritesNothing(t *testing.T) {
	w := newWorld(t, stopped("src", srcClass), stopped("snk", sinkClass))
	w.kafka.setSource("src", api.ConnectorOffset{Partition: part("a"), Offset: off(3)})
	w.kafka.groups["connect-snk"] = map[string]map[int32]int64{"t": {0: 5, 1: 6}}

	got, err := w.svc.PreviewOffsets(ctx, "src", api.OffsetsPreviewRequest{Offsets: []api.ConnectorOffset{{Partition: part("a"), Offset: off(1)}}})
	if err != nil || !got.DryRun || len(got.Changes) != 1 || !sameOffset(got.Changes[0].From, off(3)) || got.HistoryID != "" {
		t.Fatalf("preview %+v, %v", got, err)
	}
	got, err = w.svc.PreviewOffsets(ctx, "snk", api.OffsetsPreviewRequest{Reset: true})
	if err != nil || len(got.Changes) != 2 || got.Changes[0].Partition["kafka_partition"] != int32(0) || got.Changes[1].To != nil {
		t.Fatalf("sink reset preview %+v, %v", got, err)
	}
	w.kafka.groups["connect-snk"] = nil
	got, err = w.svc.PreviewOffsets(ctx, "snk", api.OffsetsPreviewRequest{Reset: true})
	if err != nil || got.Changes == nil || len(got.Changes) != 0 {
		t.Fatalf("preview of nothing %+v, %v: want an empty list", got, err)
	}
	if len(w.agents.revoked)+w.rpc.changes()+len(w.rpc.replaces)+len(w.hist.entries)+len(w.plugins.hookCalls) != 0 {
		t.Fatal("a preview acted")
	}
}

// TestFaults: a history that cannot be written refuses the change; an
// agent's failure marks the entry by what the positions show.
func TestFaults(t *testing.T) {
	w := newWorld(t, stopped("src", srcClass))
	w.faults[faults.OffsetsHistoryBegin] = errors.New("history topic down")
	_, err := w.svc.AlterOffsets(ctx, "src", []api.ConnectorOffset{{Partition: part("a"), Offset: off(1)}})
	wantCode(t, err, api.CodeInternal, "Failed to record the offsets change of connector src in the offsets history (history topic down); nothing was changed")
	if w.rpc.changes() != 0 || len(w.plugins.hookCalls) != 0 {
		t.Fatal("a change whose entry was not written went on")
	}

	delete(w.faults, faults.OffsetsHistoryBegin)
	w.faults[faults.OffsetsApply] = api.Errorf(api.CodeInternal, "agent failed")
	_, err = w.svc.AlterOffsets(ctx, "src", []api.ConnectorOffset{{Partition: part("a"), Offset: off(1)}})
	wantCode(t, err, api.CodeInternal, "agent failed")
	if e := w.hist.entries[0]; e.State != api.HistoryFailed {
		t.Fatalf("entry of a change not made: %+v, want failed", e)
	}
}

// TestAgentsTried: an unreachable agent passes the change to the next; one
// that answers an error ends it; none left is a 503.
func TestAgentsTried(t *testing.T) {
	w := newWorld(t, stopped("src", srcClass))
	w.rpc.err["a1"] = api.Errorf(api.CodeUnavailable, "gone")
	if _, err := w.svc.AlterOffsets(ctx, "src", []api.ConnectorOffset{{Partition: part("a"), Offset: off(1)}}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(w.rpc.agents, ",") != "a1,a2" {
		t.Fatalf("agents tried %v", w.rpc.agents)
	}
	w.rpc.err["a2"] = api.Errorf(api.CodeUnavailable, "gone")
	_, err := w.svc.AlterOffsets(ctx, "src", []api.ConnectorOffset{{Partition: part("a"), Offset: off(1)}})
	wantCode(t, err, api.CodeUnavailable, "No agent is available to alter offsets for connector src")
	w.rpc.agents = nil
	w.rpc.err["a1"] = api.Errorf(api.CodeBadRequest, "bad")
	_, err = w.svc.AlterOffsets(ctx, "src", []api.ConnectorOffset{{Partition: part("a"), Offset: off(1)}})
	wantCode(t, err, api.CodeBadRequest, "bad")
	if len(w.rpc.agents) != 1 {
		t.Fatalf("an agent's refusal was tried elsewhere: %v", w.rpc.agents)
	}
}

// TestAwaitTasksStopped: an agent gone counts as confirmed (its tasks are
// forgotten); one that fails or stops fewer tasks does not.
func TestAwaitTasksStopped(t *testing.T) {
	c := stopped("src", srcClass)
	for _, tc := range []struct {
		name  string
		setup func(*fakeAgents)
		want  bool
	}{
		{"all confirm", func(*fakeAgents) {}, true},
		{"gone", func(a *fakeAgents) { a.revokeErr["a1"] = api.Errorf(api.CodeUnavailable, "gone") }, true},
		{"fails", func(a *fakeAgents) { a.revokeErr["a1"] = errors.New("timeout") }, false},
		{"short", func(a *fakeAgents) { a.short["a2"] = true }, false},
	} {
		w := newWorld(t, c)
		tc.setup(w.agents)
		if got := w.svc.Calls().AwaitTasksStopped(ctx, "src", c); got != tc.want {
			t.Errorf("%s: confirmed %v, want %v", tc.name, got, tc.want)
		}
		if tc.name == "gone" && strings.Join(w.agents.forgotten, ",") != "a1" {
			t.Errorf("gone: forgotten %v", w.agents.forgotten)
		}
	}
}

// TestResetTo: a source takes only "earliest", which is a reset.
func TestResetTo(t *testing.T) {
	w := newWorld(t, stopped("src", srcClass))
	_, err := w.svc.ResetOffsetsTo(ctx, "src", api.OffsetsResetRequest{To: "latest"})
	wantCode(t, err, api.CodeBadRequest, "Connector src is a source connector: its offsets are positions in the system it reads")
	got, err := w.svc.ResetOffsetsTo(ctx, "src", api.OffsetsResetRequest{To: "earliest", DryRun: true})
	if err != nil || !got.DryRun {
		t.Fatalf("%+v, %v", got, err)
	}
	if _, err := w.svc.ResetOffsetsTo(ctx, "src", api.OffsetsResetRequest{To: "earliest"}); err != nil {
		t.Fatal(err)
	}
	if e := w.hist.entries[0]; e.Operation != api.HistoryResetTo || len(w.rpc.replaces) != 1 {
		t.Fatalf("entry %+v, replaces %d", e, len(w.rpc.replaces))
	}
}

// TestResetThen: the delete runs under the reset's lock, and not after a
// failed reset.
func TestResetThen(t *testing.T) {
	running := stopped("run", srcClass)
	running.TargetState = records.TargetStarted
	w := newWorld(t, stopped("src", srcClass), running)
	deleted := []string{}
	del := func(name string) func(context.Context) error {
		return func(context.Context) error {
			if _, ok := w.locks.TryLock(name); ok {
				t.Errorf("%s was deleted without its lock held", name)
			}
			deleted = append(deleted, name)
			return nil
		}
	}
	if err := w.svc.ResetThen(ctx, "src", del("src")); err != nil {
		t.Fatal(err)
	}
	wantCode(t, w.svc.ResetThen(ctx, "run", del("run")), api.CodeBadRequest, "STOPPED")
	if strings.Join(deleted, ",") != "src" {
		t.Fatalf("deleted %v", deleted)
	}
}

// TestTopics: which configs have an offsets topic of their own, its mark
// (timed by the clock), and its forgetting.
func TestTopics(t *testing.T) {
	own := stopped("src", srcClass, "offsets.storage.topic", " own-offsets ")
	w := newWorld(t, own, stopped("snk", sinkClass, "offsets.storage.topic", "x"), stopped("w", srcClass, "offsets.storage.topic", "sluice-offsets"))
	tp := w.svc.Topics()
	for name, want := range map[string]string{"src": "own-offsets", "snk": "", "w": ""} {
		c, _ := w.conns.Get(name)
		if got := tp.Own(c.Config); got != want {
			t.Errorf("%s: own topic %q, want %q", name, got, want)
		}
	}
	tp.mark(ctx, "src", "own-offsets")
	if m := w.marks.marks["own-offsets"]; m.Since != w.clock.Now() || m.Cluster != "cluster-1" || m.Connector != "src" || m.Purpose != "connector src's offsets topic" {
		t.Fatalf("mark %+v", m)
	}
	tp.Forget(ctx, "own-offsets")
	if !w.marks.Marked("own-offsets") {
		t.Fatal("a topic another connector names was forgotten")
	}
	delete(w.conns.conns, "src")
	tp.Forget(ctx, "own-offsets")
	if w.marks.Marked("own-offsets") {
		t.Fatal("the topic of no connector stayed marked")
	}
}
