package offsets

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/offsetstore"
	"github.com/sluice-io/sluice/shared/wire"
)

const (
	testTopic = "offs"
	testTxnID = "sluice-src-0"
)

// execCluster is an executor on a kfake cluster whose offsets topic is
// testTopic, followed by the executor's offsets store.
func execCluster(t *testing.T) (*Executor, []kgo.Opt, context.Context) {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, testTopic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	opts := kafkautil.ClientOpts(kc.ListenAddrs()[0], "test", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	worker, err := offsetstore.New(testTopic, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Start(ctx); err != nil {
		t.Fatal(err)
	}
	stores, err := offsetstore.NewRegistry(worker, time.Minute, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stores.Close)
	e, err := NewExecutor(slog.New(slog.NewTextHandler(io.Discard, nil)), stores, nil, "test-offsets", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e, opts, ctx
}

// alter is a one-task source connector's alter of key to value.
func alter(key, value string) wire.SourceOffsetsRequest {
	return wire.SourceOffsetsRequest{Connector: "src", Op: wire.OffsetsOpAlter, Topic: testTopic,
		TxnID: testTxnID, FenceIDs: []string{testTxnID}, Writes: []wire.OffsetWrite{{Key: key, Value: &value}}}
}

// committed is every committed value of key in the topic, in order.
func committed(t *testing.T, ctx context.Context, opts []kgo.Opt, key string) []string {
	t.Helper()
	cl, err := kgo.NewClient(append(opts, kgo.ConsumeTopics(testTopic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// Everything committed is fetched by the time a fetch comes back empty
	// for half a second: nothing writes to the topic any more.
	var got []string
	for {
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		fs := cl.PollFetches(pctx)
		cancel()
		if fs.Empty() || pctx.Err() != nil && fs.NumRecords() == 0 {
			break
		}
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Key) == key {
				got = append(got, string(r.Value))
			}
		})
	}
	return got
}

// TestKeptWriterReused: the second change of a connector writes through
// the writer the first one made.
func TestKeptWriterReused(t *testing.T) {
	e, opts, ctx := execCluster(t)
	if _, err := e.ApplySource(ctx, alter("k", "1")); err != nil {
		t.Fatal(err)
	}
	first := e.writers.byID[testTxnID].w
	if _, err := e.ApplySource(ctx, alter("k", "2")); err != nil {
		t.Fatal(err)
	}
	if got := e.writers.byID[testTxnID].w; got != first || first == nil {
		t.Fatalf("second change's writer %p, want the first's %p kept", got, first)
	}
	if got := committed(t, ctx, opts, "k"); len(got) != 2 || got[1] != "2" {
		t.Fatalf("committed values %q, want [1 2]", got)
	}
}

// TestKeptWriterFencesWhoeverTookTheID: between two changes a task took
// the transactional id, committed a position, and was left holding an open
// transaction (a zombie mid-commit). The second change is still made — the
// kept writer is fenced, a new one fences the zombie — and the zombie's
// commit fails: its position is never visible.
func TestKeptWriterFencesWhoeverTookTheID(t *testing.T) {
	e, opts, ctx := execCluster(t)
	if _, err := e.ApplySource(ctx, alter("k", "1")); err != nil {
		t.Fatal(err)
	}
	task, err := kgo.NewClient(append(opts, kgo.TransactionalID(testTxnID), kgo.ProducerLinger(0))...)
	if err != nil {
		t.Fatal(err)
	}
	defer task.Close()
	for _, v := range []string{"task", "zombie"} {
		if err := task.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := task.ProduceSync(ctx, &kgo.Record{Topic: testTopic, Key: []byte("k"), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if v == "zombie" {
			break // held mid-commit
		}
		if err := task.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.ApplySource(ctx, alter("k", "2")); err != nil {
		t.Fatalf("change after the id was taken: %v", err)
	}
	if err := task.EndTransaction(ctx, kgo.TryCommit); err == nil {
		t.Fatal("the zombie's commit succeeded after the change: it was not fenced")
	}
	got := committed(t, ctx, opts, "k")
	want := []string{"1", "task", "2"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("committed values %q, want %q", got, want)
	}
}

// TestKeptWriterReplaceAfterTheIDWasTaken: a reset (replace) whose kept
// writer was fenced reads the offsets again after fencing, so it
// tombstones the key the task added meanwhile too.
func TestKeptWriterReplaceAfterTheIDWasTaken(t *testing.T) {
	e, opts, ctx := execCluster(t)
	if _, err := e.ApplySource(ctx, alter(`["src",{"f":"a"}]`, `{"position":1}`)); err != nil {
		t.Fatal(err)
	}
	task, err := kafkautil.NewTxnWriter(testTxnID, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer task.Close()
	if err := task.Write(ctx, &kgo.Record{Topic: testTopic, Key: []byte(`["src",{"f":"b"}]`), Value: []byte(`{"position":2}`)}); err != nil {
		t.Fatal(err)
	}
	if err := e.stores.Worker().ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	req := wire.OffsetsReplaceRequest{Connector: "src", TxnID: testTxnID, FenceIDs: []string{testTxnID}, Topic: testTopic}
	if _, err := e.Replace(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := e.stores.Worker().ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.stores.Worker().Entries("src"); len(got) != 2 || countLive(got) != 0 {
		t.Fatalf("after the reset the connector still has offsets: %+v", got)
	}
	if got := committed(t, ctx, opts, `["src",{"f":"b"}]`); len(got) != 2 || got[1] != "" {
		t.Fatalf("values of the task's key %q, want its position then a tombstone", got)
	}
}

func countLive(es []offsetstore.Entry) int {
	n := 0
	for _, e := range es {
		if e.Live {
			n++
		}
	}
	return n
}
