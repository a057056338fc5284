package javahost

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/plugins"
)

type mapOffsets map[string]map[string]any

func (m mapOffsets) Offset(_ context.Context, p map[string]any) (map[string]any, error) {
	return m[p["file"].(string)], nil
}

var worker = map[string]string{"key.converter": "org.apache.kafka.connect.storage.StringConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter"}

func TestSourceTaskThroughHost(t *testing.T) {
	s := newFakeSupervisor(t, "host")
	f := NewTasks(s, nil, nil, worker)
	ctx := context.Background()
	st := f.NewSourceTask(api.TaskID{Connector: "jdbc", Task: 3}, map[string]string{"connector.class": "io.example.JdbcSourceConnector"})
	tc := connect.SourceTaskContext{Offsets: mapOffsets{"in": {"pos": float64(7)}}}
	if err := st.Start(ctx, tc, map[string]string{"task": "3"}); err != nil {
		t.Fatal(err)
	}
	recs, err := st.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || !recs[0].Serialized || string(recs[1].RawValue) != "v2" || recs[1].Ref != 2 || recs[1].SourceOffset["pos"] != float64(2) {
		t.Fatalf("polled %+v", recs)
	}
	rc := st.(connect.RecordCommitter)
	if err := rc.CommitRecords(ctx, []connect.RecordMetadata{{Record: &recs[1], Topic: "out", Partition: 0, Offset: 10}, {Record: &recs[0]}}); err != nil {
		t.Fatal(err)
	}
	if err := st.(connect.OffsetCommitter).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Stop(); err != nil {
		t.Fatal(err)
	}
	got := hostState(t, s)
	want := fakeState{Started: []string{"jdbc-3"}, Stopped: []string{"jdbc-3"}, Committed: []uint32{2, 1}, Commits: 1, Worker: worker,
		Offsets: map[string][]string{"jdbc-3": {`{"pos":7}`, "null"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("host state\n%+v\nwant\n%+v", got, want)
	}
}

func TestTaskStartFailureIsTheJavaTrace(t *testing.T) {
	s := newFakeSupervisor(t, "host")
	st := NewTasks(s, nil, nil, worker).NewSourceTask(api.TaskID{Connector: "c"}, map[string]string{"fake": fakeFail})
	err := st.Start(context.Background(), connect.SourceTaskContext{}, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "org.apache.kafka.connect.errors.ConnectException: boom\n\tat ") {
		t.Errorf("failed start: %v", err)
	}
}

// TestTaskStartGivenUpIsStopped: a start the agent gave up (its context
// ended: the task is being stopped, or replaced) is followed by a stop in
// the host, which may have started it; so is one the task's plugin failed.
func TestTaskStartGivenUpIsStopped(t *testing.T) {
	s := newFakeSupervisor(t, "host")
	f := NewTasks(s, nil, nil, worker)
	if _, err := s.Conn(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.NewSourceTask(api.TaskID{Connector: "gone"}, map[string]string{}).Start(ctx, connect.SourceTaskContext{Offsets: mapOffsets{}}, nil); err == nil {
		t.Fatal("a start with its context ended succeeded")
	}
	failed := f.NewSourceTask(api.TaskID{Connector: "failed"}, map[string]string{"fake": fakeFail})
	if err := failed.Start(context.Background(), connect.SourceTaskContext{}, nil); err == nil {
		t.Fatal("a failing start succeeded")
	}
	if got := hostState(t, s).Stopped; !reflect.DeepEqual(got, []string{"gone-0", "failed-0"}) {
		t.Errorf("stopped in the host: %v, want [gone-0 failed-0]", got)
	}
}

// TestTaskOfLostHostFails: a task's calls fail once its JVM died, with the
// exit status, even after the host was restarted for someone else.
func TestTaskOfLostHostFails(t *testing.T) {
	s := newFakeSupervisor(t, "host")
	f := NewTasks(s, nil, nil, worker)
	ctx := context.Background()
	st := f.NewSourceTask(api.TaskID{Connector: "a"}, map[string]string{})
	if err := st.Start(ctx, connect.SourceTaskContext{Offsets: mapOffsets{}}, nil); err != nil {
		t.Fatal(err)
	}
	crash := f.NewSourceTask(api.TaskID{Connector: "b"}, map[string]string{"fake": fakeCrash})
	if err := crash.Start(ctx, connect.SourceTaskContext{}, nil); !errors.Is(err, ErrHostLost) {
		t.Fatalf("start that crashed the host: %v", err)
	}
	if _, err := s.Conn(ctx); err != nil { // restarted
		t.Fatal(err)
	}
	_, err := st.Poll(ctx)
	if !errors.Is(err, ErrHostLost) || !strings.Contains(err.Error(), "exit status 137") {
		t.Errorf("poll of a task whose host died: %v", err)
	}
	if err := st.Stop(); err != nil {
		t.Errorf("stop of a task whose host died: %v", err)
	}
}

// control records the SinkTaskContext actions.
type control struct {
	mu      sync.Mutex
	actions []string
	got     chan struct{}
}

func (c *control) add(a string) {
	c.mu.Lock()
	c.actions = append(c.actions, a)
	c.mu.Unlock()
	c.got <- struct{}{}
}
func (c *control) Rewind(m map[connect.TopicPartition]int64) {
	for tp, o := range m {
		c.add("rewind " + tp.Topic + "@" + string(rune('0'+o)))
	}
}
func (c *control) Pause(ps ...connect.TopicPartition)  { c.add("pause " + ps[0].Topic) }
func (c *control) Resume(ps ...connect.TopicPartition) { c.add("resume " + ps[0].Topic) }
func (c *control) RequestCommit()                      { c.add("commit") }

func TestSinkTaskThroughHost(t *testing.T) {
	s := newFakeSupervisor(t, "host")
	ctx := context.Background()
	st := NewTasks(s, nil, nil, worker).NewSinkTask(api.TaskID{Connector: "s3", Task: 0}, map[string]string{"connector.class": "io.example.S3SinkConnector"})
	ctl := &control{got: make(chan struct{}, 8)}
	if err := st.Start(ctx, connect.SinkTaskContext{Control: ctl}, nil); err != nil {
		t.Fatal(err)
	}
	tp := []connect.TopicPartition{{Topic: "in", Partition: 1}}
	ph := st.(connect.PartitionHandler)
	if err := ph.Open(ctx, tp); err != nil {
		t.Fatal(err)
	}
	recs := []connect.RawSinkRecord{{Topic: "in", Partition: 1, Offset: 4, Value: []byte("a")}}
	for _, v := range []string{"rewind", "pause", "resume", "commit"} {
		recs = append(recs, connect.RawSinkRecord{Topic: "in", Partition: 1, Offset: int64(len(recs) + 4), Value: []byte(v)})
	}
	if err := st.(connect.RawSinkTask).PutRaw(ctx, recs); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		select {
		case <-ctl.got:
		case <-time.After(5 * time.Second):
			t.Fatalf("actions %v", ctl.actions)
		}
	}
	ctl.mu.Lock()
	acts := strings.Join(ctl.actions, ",")
	ctl.mu.Unlock()
	for _, want := range []string{"rewind in@0", "pause in", "resume in", "commit"} {
		if !strings.Contains(acts, want) {
			t.Errorf("actions %s, want %s", acts, want)
		}
	}
	out, err := st.(connect.PreCommitter).PreCommit(ctx, map[connect.TopicPartition]int64{tp[0]: 9})
	if err != nil || out[tp[0]] != 8 || len(out) != 1 {
		t.Errorf("pre-commit: %v, %v", out, err)
	}
	if err := ph.Close(ctx, tp); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, nil); !errors.Is(err, errRawOnly) {
		t.Errorf("Put: %v", err)
	}
	if err := st.Stop(); err != nil {
		t.Fatal(err)
	}
	got := hostState(t, s)
	if len(got.Put) != 5 || got.Put[0] != "in-1@4=a" || !reflect.DeepEqual(got.Opened, []string{"in-1"}) || !reflect.DeepEqual(got.Closed, []string{"in-1"}) {
		t.Errorf("host state %+v", got)
	}
}

// deadLetters is a connect.DeadLetterQueue that keeps what it is given.
type deadLetters struct {
	mu      sync.Mutex
	letters []connect.DeadLetter
	err     error
}

func (d *deadLetters) Write(_ context.Context, ls []connect.DeadLetter) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return d.err
	}
	d.letters = append(d.letters, ls...)
	return nil
}

// TestSinkTaskDeadLetters: the records task.put's reply names go to the
// DLQ as they were put, and a task.report's record as the host sent it,
// before PutRaw returns; a DLQ that cannot be written fails the put.
func TestSinkTaskDeadLetters(t *testing.T) {
	s := newFakeSupervisor(t, "host")
	ctx := context.Background()
	dead := &deadLetters{}
	st := NewTasks(s, nil, nil, worker).NewSinkTask(api.TaskID{Connector: "s3", Task: 0}, map[string]string{"connector.class": "io.example.S3SinkConnector"})
	if err := st.Start(ctx, connect.SinkTaskContext{DeadLetters: dead}, nil); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Stop() }()
	ts := time.UnixMilli(1_700_000_000_000)
	recs := []connect.RawSinkRecord{
		{Topic: "in", Partition: 1, Offset: 4, Value: []byte("a")},
		{Topic: "in", Partition: 1, Offset: 5, Key: []byte("k"), Value: []byte("bad"), Timestamp: ts, TimestampType: 1,
			Headers: []connect.Header{{Key: "h", Value: []byte("v")}}},
		{Topic: "in", Partition: 1, Offset: 6, Value: []byte("report")},
	}
	raw := st.(connect.RawSinkTask)
	if err := raw.PutRaw(ctx, recs); err != nil {
		t.Fatal(err)
	}
	dead.mu.Lock()
	got := dead.letters
	dead.mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("dead letters %+v, want the reported one and the bad one", got)
	}
	rep, bad := got[0], got[1]
	if rep.Stage != "TASK_PUT" || string(rep.Record.Value) != "reported" || rep.Record.Offset != 6 || rep.Message != nil ||
		rep.Record.Timestamp.UnixMilli() != 7 || len(rep.Record.Headers) != 1 || rep.Record.Headers[0].Value != nil {
		t.Errorf("reported letter %+v", rep)
	}
	if !reflect.DeepEqual(bad.Record, recs[1]) || bad.Stage != "VALUE_CONVERTER" || bad.Class != "JsonConverter" ||
		bad.Exception != "DataException" || bad.Message == nil || *bad.Message != "not JSON" || bad.Trace != "DataException: not JSON" {
		t.Errorf("bad letter %+v, want the record as put", bad)
	}

	dead.mu.Lock()
	dead.err = errors.New("broker gone")
	dead.mu.Unlock()
	if err := raw.PutRaw(ctx, recs[1:2]); err == nil || !strings.Contains(err.Error(), "broker gone") {
		t.Errorf("put with an unwritable DLQ: %v", err)
	}
}

func TestSinkTaskKindMismatch(t *testing.T) {
	s := newFakeSupervisor(t, "host")
	st := NewTasks(s, nil, nil, worker).NewSinkTask(api.TaskID{Connector: "x"}, map[string]string{"connector.class": "io.example.JdbcSourceConnector"})
	err := st.Start(context.Background(), connect.SinkTaskContext{}, nil)
	if err == nil || !strings.Contains(err.Error(), "is a source task, not a sink task") {
		t.Errorf("source task started as a sink: %v", err)
	}
	if st := hostState(t, s); len(st.Stopped) != 1 {
		t.Errorf("the mismatched task was not stopped: %+v", st)
	}
}

func TestPluginResolution(t *testing.T) {
	ps := []api.PluginInfo{
		{Class: "io.example.JdbcSourceConnector", Type: "source", Version: "10.7.4"},
		{Class: "org.apache.kafka.connect.file.FileStreamSourceConnector", Type: "source", Version: "4.4.0"},
		{Class: "io.example.SomeConverter", Type: "converter", Version: "1"},
	}
	f := NewTasks(nil, ps, plugins.Builtin(), nil)
	for _, tc := range []struct {
		class, version string
		java           bool
	}{
		{"io.example.JdbcSourceConnector", "", true},
		{"JdbcSourceConnector", "", true},
		{"JdbcSource", "", true},
		{"io.example.JdbcSourceConnector", "10.7.4", true},
		{"io.example.JdbcSourceConnector", "9.0", false},
		{"org.apache.kafka.connect.file.FileStreamSourceConnector", "", false},
		{"FileStreamSource", "", false},
		{"org.apache.kafka.connect.file.FileStreamSourceConnector", connect.Version, false},
		{"org.apache.kafka.connect.file.FileStreamSourceConnector", "4.4.0", true},
		{"FileStreamSource", "4.4.0", true},
		{"io.example.SomeConverter", "", false},
		{"io.sluice.connect.generator.GeneratorSourceConnector", "", false},
	} {
		kind, ok := f.TaskKind(map[string]string{"connector.class": tc.class, "connector.plugin.version": tc.version})
		if ok != tc.java || ok && kind != connect.KindSource {
			t.Errorf("%s version %q: host %v (%s), want %v", tc.class, tc.version, ok, kind, tc.java)
		}
	}
}

// TestPluginVersionOfSeveral: with two versions of a plugin on the plugin
// path, a task runs the version its connector config names (exactly, as
// the leader sends it), and a range or none means the highest meeting it.
func TestPluginVersionOfSeveral(t *testing.T) {
	const jdbc = "io.example.JdbcSourceConnector"
	ps := []api.PluginInfo{
		{Class: jdbc, Type: "source", Version: "10.7.4"},
		{Class: jdbc, Type: "source", Version: "10.10.0"},
		{Class: jdbc, Type: "source", Version: "9.0"},
	}
	f := NewTasks(nil, ps, plugins.Builtin(), nil)
	for spec, want := range map[string]string{"": "10.10.0", "latest": "10.10.0", "10.7.4": "10.7.4", "[9,10.8)": "10.7.4",
		"(,10)": "9.0", "9": "9.0", "10.7": "", "[11,)": "", "[1.0": ""} {
		p, ok := f.Plugin(map[string]string{"connector.class": jdbc, "connector.plugin.version": spec})
		if ok != (want != "") || p.Version != want {
			t.Errorf("version %q: %+v %v, want %q", spec, p, ok, want)
		}
	}
}
