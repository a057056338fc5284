package kafkautil

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTxnWriterConcurrentWrites: concurrent writers on one TxnWriter (the
// coordinator's config store writes for several connectors at once) each
// commit their own transaction instead of failing to begin one while
// another is open.
func TestTxnWriterConcurrentWrites(t *testing.T) {
	w, ctx := newTestWriter(t, "txn-test")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- w.Write(ctx, &kgo.Record{Topic: "t", Value: []byte(fmt.Sprint(i))}, &kgo.Record{Topic: "t", Value: []byte("x")})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent write: %v", err)
		}
	}
}

// TestTxnWriterFenced: once another producer took the transactional id, a
// write fails as fenced and the writer never writes again.
func TestTxnWriterFenced(t *testing.T) {
	opts, ctx := newTestCluster(t)
	w, err := NewTxnWriter("txn-fenced", opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Write(ctx, &kgo.Record{Topic: "t", Value: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := Fence(ctx, cl, "txn-fenced"); err != nil {
		t.Fatal(err)
	}
	err = w.Write(ctx, &kgo.Record{Topic: "t", Value: []byte("b")})
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("write after fencing: %v, want ErrFenced", err)
	}
	if err := w.Write(ctx, &kgo.Record{Topic: "t", Value: []byte("c")}); err != ErrFenced {
		t.Fatalf("write on a fenced writer: %v, want ErrFenced", err)
	}
}

// TestTxnWriterInitFences: a writer's Init fences every older holder of
// its id before it returns — one that only took its epoch and one in the
// middle of a transaction, whose records never become visible — and that
// is all a task's start relies on to fence its previous owner.
func TestTxnWriterInitFences(t *testing.T) {
	opts, ctx := newTestCluster(t)
	writer := func() *TxnWriter {
		w, err := NewTxnWriter("txn-init", opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Close)
		if err := w.Init(ctx); err != nil {
			t.Fatal(err)
		}
		return w
	}

	idle := writer()
	open := writer()
	if err := open.Client().BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := open.Client().ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("zombie")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	successor := writer()

	if err := open.Client().EndTransaction(ctx, kgo.TryCommit); !IsFenced(err) {
		t.Errorf("commit of the open transaction after the successor's Init: %v, want fenced", err)
	}
	if err := idle.Write(ctx, &kgo.Record{Topic: "t", Value: []byte("idle")}); !errors.Is(err, ErrFenced) {
		t.Errorf("write of the idle writer after the successor's Init: %v, want ErrFenced", err)
	}
	if err := successor.Write(ctx, &kgo.Record{Topic: "t", Value: []byte("successor")}); err != nil {
		t.Fatalf("successor's write: %v", err)
	}

	rd, err := kgo.NewClient(append(opts, kgo.ConsumeTopics("t"), kgo.FetchIsolationLevel(kgo.ReadCommitted()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var seen []string
	for len(seen) == 0 {
		fs := rd.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("no committed record: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) { seen = append(seen, string(r.Value)) })
	}
	if len(seen) != 1 || seen[0] != "successor" {
		t.Errorf("read_committed sees %q, want only the successor's record", seen)
	}
}

// TestTxnWriterGroupCommit: writes that arrive while a transaction is being
// written wait for it and then go out together in the next one, each
// caller's records in order and all of them committed.
func TestTxnWriterGroupCommit(t *testing.T) {
	w, ctx := newTestWriter(t, "txn-group")
	var txns int
	started, release := make(chan struct{}), make(chan struct{})
	w.BeforeCommit = func(context.Context) error {
		txns++
		if txns == 1 {
			close(started)
			<-release
		}
		return nil
	}
	first := &kgo.Record{Topic: "t", Value: []byte("first")}
	errs := make(chan error, 6)
	go func() { errs <- w.Write(ctx, first) }()
	<-started
	const waiting = 5
	recs := make([][]*kgo.Record, waiting)
	for i := range waiting {
		recs[i] = []*kgo.Record{{Topic: "t", Value: []byte(fmt.Sprint(i, "a"))}, {Topic: "t", Value: []byte(fmt.Sprint(i, "b"))}}
		go func() { errs <- w.Write(ctx, recs[i]...) }()
	}
	for {
		w.qmu.Lock()
		n := len(w.queue)
		w.qmu.Unlock()
		if n == waiting {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	for range waiting + 1 {
		if err := <-errs; err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	if txns != 2 {
		t.Fatalf("%d transactions, want 2: the first alone, then the %d that waited together", txns, waiting)
	}
	for i, rs := range recs {
		if rs[0].Offset <= first.Offset || rs[1].Offset <= rs[0].Offset {
			t.Errorf("write %d: offsets %d, %d after the first's %d: want after it and in order", i, rs[0].Offset, rs[1].Offset, first.Offset)
		}
	}
}

// TestTxnWriterAwaitVisibleFollowed: with AwaitVisible, a write returns
// only once a reader of each followed topic has read past its last record
// there, and once the last stable offset of an unfollowed topic has passed
// its records.
func TestTxnWriterAwaitVisibleFollowed(t *testing.T) {
	w, ctx := newTestWriter(t, "txn-followed", "u")
	w.AwaitVisible = true
	type seen struct {
		partition int32
		offset    int64
	}
	asked, release := make(chan seen, 4), make(chan struct{})
	w.Followed = func(topic string) func(context.Context, int32, int64) error {
		if topic != "t" {
			return nil
		}
		return func(ctx context.Context, p int32, off int64) error {
			asked <- seen{p, off}
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	recs := []*kgo.Record{{Topic: "t", Value: []byte("a")}, {Topic: "t", Value: []byte("b")}, {Topic: "u", Value: []byte("c")}}
	done := make(chan error, 1)
	go func() { done <- w.Write(ctx, recs...) }()
	select {
	case got := <-asked:
		if got != (seen{recs[1].Partition, recs[1].Offset}) {
			t.Fatalf("the reader of t was asked for %+v, want the last record of t at %d/%d", got, recs[1].Partition, recs[1].Offset)
		}
	case err := <-done:
		t.Fatalf("write returned (%v) before the reader of t had seen its records", err)
	case <-ctx.Done():
		t.Fatal("the reader of t was never asked")
	}
	select {
	case err := <-done:
		t.Fatalf("write returned (%v) while the reader of t had not yet read past its records", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("write: %v", err)
	}
	lso, err := w.admin.ListCommittedOffsets(ctx, "u")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := lso.Lookup("u", recs[2].Partition); !ok || o.Offset <= recs[2].Offset {
		t.Fatalf("u's last stable offset %+v when the write returned: want past %d", o, recs[2].Offset)
	}
}

// newTestCluster starts a one-broker kfake cluster with topic "t" (and the
// topics more names), closed when the test ends, and returns the options
// of a client of it and a context bounding the test.
func newTestCluster(t *testing.T, more ...string) ([]kgo.Opt, context.Context) {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, append([]string{"t"}, more...)...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return []kgo.Opt{kgo.SeedBrokers(kc.ListenAddrs()...)}, ctx
}

// newTestWriter starts a cluster as newTestCluster does and a writer with
// transactional id txnID on it, closed when the test ends.
func newTestWriter(t *testing.T, txnID string, more ...string) (*TxnWriter, context.Context) {
	t.Helper()
	opts, ctx := newTestCluster(t, more...)
	w, err := NewTxnWriter(txnID, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w, ctx
}

// TestFenceManyIDs: fencing many ids at once fences every one of them,
// wherever it is in the list.
func TestFenceManyIDs(t *testing.T) {
	opts, ctx := newTestCluster(t)
	var ids []string
	for i := range 100 {
		ids = append(ids, fmt.Sprintf("txn-many-%d", i))
	}
	var writers []*TxnWriter
	for _, id := range []string{ids[0], ids[57], ids[99]} {
		w, err := NewTxnWriter(id, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if err := w.Write(ctx, &kgo.Record{Topic: "t", Value: []byte("a")}); err != nil {
			t.Fatal(err)
		}
		writers = append(writers, w)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := Fence(ctx, cl, ids...); err != nil {
		t.Fatal(err)
	}
	for i, w := range writers {
		if err := w.Write(ctx, &kgo.Record{Topic: "t", Value: []byte("b")}); !errors.Is(err, ErrFenced) {
			t.Errorf("writer %d after fencing: %v, want ErrFenced", i, err)
		}
	}
}
