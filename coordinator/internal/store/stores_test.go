package store

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/kafkalog"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/records"
)

// TestConfigStoreApply runs Apply against an in-process broker: without the
// leader writer it writes nothing; with it, each call's commands land in
// order in one transaction and are applied before Apply returns.
func TestConfigStoreApply(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "configs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	opts := kafkautil.ClientOpts(kc.ListenAddrs()[0], "store-test", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	s, err := NewConfigStore("configs", nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, PutConnectorConfig{Name: "c"}); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("apply without the leader writer: %v, want ErrNotLeader", err)
	}
	w, err := NewWriter(ctx, "store-test-leader", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	s.SetWriter(w)

	config := map[string]string{"connector.class": "X"}
	tasks := []map[string]string{{"t": "0"}, {"t": "1"}}
	if err := s.Apply(ctx,
		CreateConnector{Name: "c", Config: config, TargetState: records.TargetPaused},
		PutTaskConfigs{Name: "c", Tasks: tasks},
	); err != nil {
		t.Fatal(err)
	}
	// Read-your-writes: applied when Apply returns.
	if c, ok := s.State.Get("c"); !ok || c.TargetState != records.TargetPaused || !reflect.DeepEqual(c.Tasks, tasks) {
		t.Fatalf("after create: %+v %v", c, ok)
	}
	if err := s.Apply(ctx, PutConnectorConfig{Name: "c"}, SetTargetState{Name: "c", State: "RUNNING"}); err == nil || errors.Is(err, ErrNotLeader) {
		t.Fatalf("apply of an invalid command: %v, want a validation error", err)
	}
	if err := s.Apply(ctx, StopConnector{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.State.Get("c"); c.TargetState != records.TargetStopped || len(c.Tasks) != 0 {
		t.Fatalf("after stop: %+v", c)
	}

	got := readTopic(t, ctx, "configs", opts)
	want := []rec{
		{"target-state-c", val(`{"state":"PAUSED","state.v2":"PAUSED"}`)},
		{"connector-c", val(`{"properties":{"connector.class":"X"}}`)},
		{"task-c-0", val(`{"properties":{"t":"0"}}`)},
		{"task-c-1", val(`{"properties":{"t":"1"}}`)},
		{"commit-c", val(`{"tasks":2}`)},
		// The invalid batch wrote nothing, not even its valid first command.
		{"commit-c", val(`{"tasks":0}`)},
		{"target-state-c", val(`{"state":"PAUSED","state.v2":"STOPPED"}`)},
	}
	recs := make([]records.Record, len(got))
	for i, r := range got {
		recs[i] = records.Record{Key: string(r.Key), Value: r.Value}
	}
	if g := gotRecords(recs); !reflect.DeepEqual(g, want) {
		t.Fatalf("topic:\n got %v\nwant %v", g, want)
	}
	// One transaction per Apply: a call's records sit at consecutive
	// offsets, and only a commit marker separates two calls.
	sameTxn := []bool{false, true, true, true, true, false, true}
	for i := 1; i < len(got); i++ {
		want := int64(2) // the previous transaction's commit marker in between
		if sameTxn[i] {
			want = 1
		}
		if gap := got[i].Offset - got[i-1].Offset; gap != want {
			t.Fatalf("record %d (%s) at offset %d, %d after the previous: want %d", i, got[i].Key, got[i].Offset, gap, want)
		}
	}
}

// readTopic returns the committed data records of topic, in order.
func readTopic(t *testing.T, ctx context.Context, topic string, opts []kgo.Opt) []*kgo.Record {
	t.Helper()
	var mu sync.Mutex
	var out []*kgo.Record
	l, err := kafkalog.New(topic, func(r *kgo.Record) {
		mu.Lock()
		out = append(out, r)
		mu.Unlock()
	}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	defer l.Close()
	if err := l.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return out
}
