package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/allowedpaths"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/shared/offsetstore"
	"github.com/sluice-io/sluice/shared/wire"
	"github.com/sluice-io/sluice/sluicetest/wait"
)

// Tests of the seams the connector host's tasks use (HostTasks and
// connect's optional task interfaces), with Go doubles of such tasks and
// an in-process Kafka (kfake).

// hostTasks is a HostTasks whose connectors are the config's "kind".
type hostTasks struct {
	source *hostSource
	sink   *hostSink
	// failed, when set, receives the traces of failed tasks (else a
	// failure fails the test).
	failed chan string
}

func (h hostTasks) TaskKind(conn map[string]string) (connect.Kind, bool) {
	k := connect.Kind(conn["kind"])
	return k, k != ""
}
func (h hostTasks) NewSourceTask(api.TaskID, map[string]string) connect.SourceTask { return h.source }
func (h hostTasks) NewSinkTask(api.TaskID, map[string]string) connect.SinkTask     { return h.sink }
func (h hostTasks) Restartable(err error) bool                                     { return errors.Is(err, errHostGone) }

// errHostGone is what a double's lost host fails its tasks with.
var errHostGone = errors.New("host gone")

// hostSource polls two serialized records once and records the hooks'
// calls.
type hostSource struct {
	mu        sync.Mutex
	topic     string // where its records go (default "out")
	lost      error  // what Err answers
	polled    bool
	offset    map[string]any // what its OffsetReader said at start
	committed []string       // RecordMetadata, as topic-partition@offset=ref
	commits   int
}

func (s *hostSource) Start(ctx context.Context, tc connect.SourceTaskContext, _ map[string]string) error {
	o, err := tc.Offsets.Offset(ctx, map[string]any{"file": "in"})
	s.mu.Lock()
	s.offset = o
	s.mu.Unlock()
	return err
}

func (s *hostSource) Poll(context.Context) ([]connect.SourceRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.polled {
		time.Sleep(20 * time.Millisecond)
		return nil, nil
	}
	s.polled = true
	var out []connect.SourceRecord
	for i := range 2 {
		out = append(out, connect.SourceRecord{Topic: cmp.Or(s.topic, "out"), Serialized: true, RawKey: []byte("k"), RawValue: fmt.Appendf(nil, `{"n":%d}`, i),
			Headers: []connect.Header{{Key: "h", Value: []byte("x")}}, Ref: uint64(100 + i),
			// Key and Value would fail any converter: they must be ignored.
			Key: make(chan int), Value: make(chan int),
			SourcePartition: map[string]any{"file": "in"}, SourceOffset: map[string]any{"pos": float64(i)}})
	}
	return out, nil
}

func (s *hostSource) CommitRecords(_ context.Context, recs []connect.RecordMetadata) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range recs {
		// The partition is the partitioner's: the same for both, keyed alike.
		s.committed = append(s.committed, fmt.Sprintf("%s@%d=%d", r.Topic, r.Offset, r.Record.Ref))
		if r.Partition != recs[0].Partition {
			return fmt.Errorf("records of one key in partitions %d and %d", recs[0].Partition, r.Partition)
		}
	}
	return nil
}

func (s *hostSource) Commit(context.Context) error {
	s.mu.Lock()
	s.commits++
	s.mu.Unlock()
	return nil
}

func (s *hostSource) Stop() error { return nil }

func (s *hostSource) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost
}

func (s *hostSource) state() ([]string, int, map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.committed), s.commits, s.offset
}

func newHostWorker(t *testing.T, h hostTasks, topics ...string) (*Worker, *kgo.Client) {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, append([]string{"offsets"}, topics...)...), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	opts := []kgo.Opt{kgo.SeedBrokers(kc.ListenAddrs()...)}
	store, err := offsetstore.New("offsets", opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := store.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	reg, err := offsetstore.NewRegistry(store, time.Minute, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	var failed []string
	var mu sync.Mutex
	w := NewWorker(Config{AgentID: "a", GroupID: "g", OffsetsTopic: "offsets", FlushInterval: 50 * time.Millisecond,
		KeyConverter: "org.apache.kafka.connect.storage.StringConverter", ValueConverter: "org.apache.kafka.connect.storage.StringConverter",
		KafkaOpts: opts, Registry: plugins.Builtin(), Offsets: reg, Host: h,
		Report: func(r wire.StatusReport) {
			if r.State == api.StateFailed && h.failed != nil {
				h.failed <- r.Trace
			} else if r.State == api.StateFailed {
				mu.Lock()
				failed = append(failed, r.Trace)
				mu.Unlock()
			}
		}})
	t.Cleanup(func() {
		w.StopAll(context.Background())
		mu.Lock()
		defer mu.Unlock()
		if len(failed) > 0 {
			t.Errorf("tasks failed: %v", failed)
		}
	})
	return w, cl
}

// eventually is the kit's Eventually with 15 s and what in its message.
func eventually(t *testing.T, what string, ok func() (bool, string)) {
	t.Helper()
	wait.Eventually(t, 15*time.Second, func() (bool, string) {
		done, state := ok()
		return done, what + ": " + state
	})
}

// TestHostSourceTask: serialized records are written as they are, the
// task is told each acknowledged record and each offsets commit, and its
// committed offsets are what its OffsetReader reads next time.
func TestHostSourceTask(t *testing.T) {
	src := &hostSource{}
	w, cl := newHostWorker(t, hostTasks{source: src})
	id := api.TaskID{Connector: "java-src"}
	conn := map[string]string{"connector.class": "io.example.JavaSource", "kind": "source",
		// A converter the agent does not have: a host task needs none of its.
		"value.converter": "io.confluent.connect.avro.AvroConverter"}
	w.Assign(context.Background(), 1, []wire.TaskAssignment{{ID: id, Generation: 1, ConnectorConfig: conn, TaskConfig: map[string]string{}}})
	eventually(t, "records committed", func() (bool, string) {
		recs, commits, _ := src.state()
		return len(recs) == 2 && commits > 0, fmt.Sprintf("records %v, commits %d", recs, commits)
	})
	recs, _, offset := src.state()
	if want := []string{"out@0=100", "out@1=101"}; !slices.Equal(recs, want) {
		t.Errorf("acknowledged %v, want %v", recs, want)
	}
	if offset != nil {
		t.Errorf("first start read offset %v", offset)
	}
	cl.AddConsumeTopics("out")
	var got []string
	eventually(t, "records in Kafka", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			got = append(got, fmt.Sprintf("%s=%s %s=%s", r.Key, r.Value, r.Headers[0].Key, r.Headers[0].Value))
		})
		return len(got) == 2, strings.Join(got, ",")
	})
	if got[1] != `k={"n":1} h=x` {
		t.Errorf("record %q", got[1])
	}
	// A new instance reads the offset the first committed.
	w.Revoke(context.Background(), 1, 1, []api.TaskID{id})
	again := &hostSource{polled: true}
	w.cfg.Host = hostTasks{source: again}
	w.Assign(context.Background(), 1, []wire.TaskAssignment{{ID: id, Generation: 2, ConnectorConfig: conn, TaskConfig: map[string]string{}}})
	eventually(t, "restarted task read its offset", func() (bool, string) {
		_, _, o := again.state()
		return o != nil && fmt.Sprint(o["pos"]) == "1", fmt.Sprint(o)
	})
}

// hostSink takes raw records, asks for a rewind the first time it sees
// "rewind" and a commit at "commit", and lets PreCommit commit all but the
// last record of a partition.
type hostSink struct {
	mu       sync.Mutex
	control  connect.SinkControl
	put      []string
	rewound  bool
	opened   []connect.TopicPartition
	closed   []connect.TopicPartition
	asked    []map[connect.TopicPartition]int64
	converts bool // Put was called: it must not be
}

func (s *hostSink) Start(_ context.Context, tc connect.SinkTaskContext, _ map[string]string) error {
	s.control = tc.Control
	return nil
}
func (s *hostSink) Put(context.Context, []connect.SinkRecord) error { s.converts = true; return nil }
func (s *hostSink) Flush(context.Context) error                     { s.converts = true; return nil }
func (s *hostSink) Stop() error                                     { return nil }

func (s *hostSink) PutRaw(_ context.Context, recs []connect.RawSinkRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range recs {
		s.put = append(s.put, fmt.Sprintf("%d:%s:%d", r.Offset, r.Value, r.TimestampType))
		if string(r.Value) == "rewind" && !s.rewound {
			s.rewound = true
			s.control.Rewind(map[connect.TopicPartition]int64{{Topic: r.Topic, Partition: r.Partition}: 0})
		}
		if string(r.Value) == "commit" {
			s.control.RequestCommit()
		}
	}
	return nil
}

func (s *hostSink) Open(_ context.Context, ps []connect.TopicPartition) error {
	s.mu.Lock()
	s.opened = append(s.opened, ps...)
	s.mu.Unlock()
	return nil
}

func (s *hostSink) Close(_ context.Context, ps []connect.TopicPartition) error {
	s.mu.Lock()
	s.closed = append(s.closed, ps...)
	s.mu.Unlock()
	return nil
}

func (s *hostSink) PreCommit(_ context.Context, offsets map[connect.TopicPartition]int64) (map[connect.TopicPartition]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, offsets)
	out := map[connect.TopicPartition]int64{}
	for tp, o := range offsets {
		out[tp] = o - 1
	}
	return out, nil
}

// TestHostSinkTask: raw records reach PutRaw, a rewind re-delivers, the
// partitions are opened and closed, and what is committed is what
// PreCommit answered.
func TestHostSinkTask(t *testing.T) {
	sink := &hostSink{}
	w, cl := newHostWorker(t, hostTasks{sink: sink}, "in")
	ctx := context.Background()
	for _, v := range []string{"a", "rewind", "b", "commit"} {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "in", Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	id := api.TaskID{Connector: "java-sink"}
	conn := map[string]string{"connector.class": "io.example.JavaSink", "kind": "sink", "topics": "in"}
	w.Assign(ctx, 1, []wire.TaskAssignment{{ID: id, Generation: 1, ConnectorConfig: conn, TaskConfig: map[string]string{}}})
	adm := kadm.NewClient(cl)
	eventually(t, "offset committed", func() (bool, string) {
		os, err := adm.FetchOffsets(ctx, "connect-java-sink")
		if err != nil {
			return false, err.Error()
		}
		o, ok := os.Lookup("in", 0)
		sink.mu.Lock()
		defer sink.mu.Unlock()
		// The first position is committed at once, before the rewind's
		// re-delivery: wait for the re-delivery and a commit after it.
		tp := connect.TopicPartition{Topic: "in", Partition: 0}
		after := len(sink.put) >= 8 && len(sink.asked) > 0 && sink.asked[len(sink.asked)-1][tp] == 4
		return ok && o.At == 3 && after, fmt.Sprintf("committed %+v, put %v, pre-commit asked %v", o, sink.put, sink.asked)
	})
	w.Revoke(ctx, 1, 1, []api.TaskID{id})
	sink.mu.Lock()
	defer sink.mu.Unlock()
	want := "0:a:1,1:rewind:1,2:b:1,3:commit:1,0:a:1,1:rewind:1,2:b:1,3:commit:1"
	if got := strings.Join(sink.put, ","); !strings.HasPrefix(got, want) {
		t.Errorf("put %s, want %s", got, want)
	}
	tp := connect.TopicPartition{Topic: "in", Partition: 0}
	if !slices.Equal(sink.opened, []connect.TopicPartition{tp}) || !slices.Equal(sink.closed, []connect.TopicPartition{tp}) {
		t.Errorf("opened %v, closed %v", sink.opened, sink.closed)
	}
	if len(sink.asked) == 0 || sink.asked[len(sink.asked)-1][tp] != 4 {
		t.Errorf("pre-commit asked %v, want the next offset 4 last", sink.asked)
	}
	if sink.converts {
		t.Errorf("Put or Flush called on a raw sink task")
	}
}

// TestHostTaskLost: a host task whose process is gone fails at its next
// step with the reason, though it calls nothing that would fail.
func TestHostTaskLost(t *testing.T) {
	src := &hostSource{polled: true} // polls nothing: only Err can fail it
	h := hostTasks{source: src, failed: make(chan string, 1)}
	w, _ := newHostWorker(t, h)
	w.Assign(context.Background(), 1, []wire.TaskAssignment{{ID: api.TaskID{Connector: "lost"}, Generation: 1,
		ConnectorConfig: map[string]string{"connector.class": "x", "kind": "source"}, TaskConfig: map[string]string{}}})
	wait.Hold(t, 100*time.Millisecond, "the task running before its host is lost")
	src.mu.Lock()
	src.lost = fmt.Errorf("connector host lost: connector host exited (exit status 137): OOM")
	src.mu.Unlock()
	select {
	case trace := <-h.failed:
		if !strings.Contains(trace, "exit status 137") {
			t.Errorf("trace %q", trace)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the task did not fail")
	}
}

// TestHostFileStreamKeepsTheFileRule: Kafka's FileStream connector run in
// the host opens the files the built-in would, so --file-allowed-paths
// refuses its task as it refuses the built-in's.
func TestHostFileStreamKeepsTheFileRule(t *testing.T) {
	allowed, err := allowedpaths.New([]string{t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	failed := make(chan string, 1)
	w := NewWorker(Config{Registry: plugins.Builtin(), AllowedPaths: allowed, Host: hostTasks{source: &hostSource{}},
		Report: func(r wire.StatusReport) {
			if r.State == api.StateFailed {
				failed <- r.Trace
			}
		}})
	defer w.StopAll(context.Background())
	w.Assign(context.Background(), 1, []wire.TaskAssignment{{ID: api.TaskID{Connector: "fs"}, Generation: 1,
		ConnectorConfig: map[string]string{"connector.class": "FileStreamSource", "connector.plugin.version": "4.4.0", "kind": "source"},
		TaskConfig:      map[string]string{"file": "/etc/passwd"}}})
	select {
	case trace := <-failed:
		if !strings.Contains(trace, "this agent refuses the task: file") {
			t.Errorf("trace %q", trace)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the task was not refused")
	}
}
