package offsetstore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/kafkautil"
)

func TestMerge(t *testing.T) {
	worker := []Entry{
		{Partition: map[string]any{"f": "w"}, Offset: map[string]any{"p": 1}, RawKeys: []string{"kw"}, Live: true},
		{Partition: map[string]any{"f": "both"}, Offset: map[string]any{"p": 2}, RawKeys: []string{"kb1"}, Live: true},
		{Partition: map[string]any{"f": "gone"}, RawKeys: []string{"kg"}},
	}
	connector := []Entry{
		{Partition: map[string]any{"f": "both"}, Offset: map[string]any{"p": 3}, RawKeys: []string{"kb2", "kb1"}, Live: true},
		{Partition: map[string]any{"f": "own"}, Offset: map[string]any{"p": 4}, RawKeys: []string{"ko"}, Live: true},
	}
	want := []Entry{
		{Partition: map[string]any{"f": "both"}, Offset: map[string]any{"p": 3}, RawKeys: []string{"kb1", "kb2"}, Live: true},
		{Partition: map[string]any{"f": "gone"}, RawKeys: []string{"kg"}},
		{Partition: map[string]any{"f": "own"}, Offset: map[string]any{"p": 4}, RawKeys: []string{"ko"}, Live: true},
		// Only the worker's topic has it: listed, live, but no offset.
		{Partition: map[string]any{"f": "w"}, RawKeys: []string{"kw"}, Live: true},
	}
	if got := Merge(worker, connector); !reflect.DeepEqual(got, want) {
		t.Errorf("Merge:\n got %+v\nwant %+v", got, want)
	}
	// A reset of the merged view tombstones the worker-only partition too.
	if got := Replace(want, nil); len(got) != 4 {
		t.Errorf("Replace of the merged view: %+v, want a tombstone for kb1, kb2, ko and kw", got)
	}
}

func newCluster(t *testing.T) ([]kgo.Opt, *kadm.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	opts := kafkautil.ClientOpts(c.ListenAddrs()[0], "test", nil)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return opts, kadm.NewClient(cl)
}

func produce(t *testing.T, opts []kgo.Opt, topic string, kv ...string) {
	t.Helper()
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := 0; i+1 < len(kv); i += 2 {
		r := &kgo.Record{Topic: topic, Key: []byte(kv[i]), Value: []byte(kv[i+1])}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRegistryFollowsConnectorTopics: a view of a connector's own topic
// creates it (compacted, as many partitions as the worker's), reads both
// topics, lets the connector's win, and is shared while held; the worker's
// topic alone needs nothing of the registry.
func TestRegistryFollowsConnectorTopics(t *testing.T) {
	opts, adm := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := kafkautil.EnsureTopics(ctx, adm, kafkautil.TopicSpec{Name: "offsets", Partitions: 3, Compacted: true}); err != nil {
		t.Fatal(err)
	}
	produce(t, opts, "offsets", `["c",{"f":"a"}]`, `{"p":1}`, `["c",{"f":"w"}]`, `{"p":5}`)
	worker, err := New("offsets", opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer worker.Close()
	if err := worker.Start(ctx); err != nil {
		t.Fatal(err)
	}
	reg, err := NewRegistry(worker, time.Hour, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if _, _, err := reg.View(ctx, "own"); !errors.As(err, new(*kafkautil.VanishedTopicError)) {
		t.Fatalf("view of a missing topic without a guard: %v, want a VanishedTopicError", err)
	}
	if ok, _ := kafkautil.TopicExists(ctx, reg.client, "own"); ok {
		t.Fatal("a registry without a guard created the connector's topic")
	}
	reg.SetCreateGuard(func(context.Context, string) error { return nil })

	plain, release, err := reg.View(ctx, "offsets")
	if err != nil || plain.Connector != nil {
		t.Fatalf("view of the worker's topic: %+v, %v", plain, err)
	}
	release()
	if got := fmt.Sprint(plain.Offset("c", map[string]any{"f": "a"})); got != "map[p:1]" {
		t.Errorf("worker view offset %v", got)
	}

	v, release, err := reg.View(ctx, "own")
	if err != nil {
		t.Fatal(err)
	}
	td, err := adm.ListTopics(ctx, "own")
	if err != nil || len(td["own"].Partitions) != 3 {
		t.Fatalf("own topic: %+v, %v; want 3 partitions", td, err)
	}
	produce(t, opts, "own", `["c",{"f":"a"}]`, `{"p":9}`)
	if err := v.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(v.Offset("c", map[string]any{"f": "a"})); got != "map[p:9]" {
		t.Errorf("own view: offset of a %v, want the connector topic's", got)
	}
	if got := v.Offset("c", map[string]any{"f": "w"}); got != nil {
		t.Errorf("own view: offset of w %v, want none (Kafka Connect does not fall back)", got)
	}
	v2, release2, err := reg.View(ctx, "own")
	if err != nil || v2.Connector != v.Connector {
		t.Fatalf("a second view of own is not shared: %v", err)
	}
	release()
	release2()
}

// TestEnsureTopic: a refused name is Kafka Connect's "Unable to create
// topic(s)" error, with the broker's reason; an existing topic is fine.
func TestEnsureTopic(t *testing.T) {
	_, adm := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := kafkautil.EnsureTopics(ctx, adm, kafkautil.TopicSpec{Name: "a.b", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if err := EnsureTopic(ctx, adm, "a.b", "missing"); err != nil {
		t.Fatalf("existing topic: %v", err)
	}
	err := EnsureTopic(ctx, adm, "a_b", "a.b")
	var ce *CreateTopicError
	if prefix := "Unable to create topic(s) 'a_b': "; !errors.As(err, &ce) || ce.Topic != "a_b" ||
		!strings.HasPrefix(err.Error(), prefix) || len(err.Error()) == len(prefix) {
		t.Fatalf("colliding name: %v, want Unable to create topic(s) 'a_b': <reason>", err)
	}
}
