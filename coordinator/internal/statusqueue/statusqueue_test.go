package statusqueue

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/sluicetest/wait"
)

// sink records what a queue writes, and can fail or hold writes.
type sink struct {
	mu      sync.Mutex
	batches [][]records.Record
	fail    int // fail this many writes first
}

func (s *sink) write(ctx context.Context, recs ...records.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail > 0 {
		s.fail--
		return errors.New("broker unavailable")
	}
	s.batches = append(s.batches, append([]records.Record(nil), recs...))
	return nil
}

func (s *sink) written() []records.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []records.Record
	for _, b := range s.batches {
		out = append(out, b...)
	}
	return out
}

func qrec(key, value string) records.Record { return records.Record{Key: key, Value: []byte(value)} }

func run(t *testing.T, q *Queue) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); q.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

func TestStatusQueueCoalescesAndKeepsOrder(t *testing.T) {
	s := &sink{}
	hold := make(chan struct{})
	q := New(s.write, Options{Faults: faults.Func(func(ctx context.Context, _ faults.Point, _ any) error {
		<-hold
		return nil
	})})
	run(t, q)
	q.Enqueue(qrec("k1", "a"), qrec("k2", "a"))
	q.Enqueue(qrec("k1", "b"), qrec("k3", "a"))
	if r, ok := q.Pending("k1"); !ok || string(r.Value) != "b" {
		t.Fatalf("pending k1 = %q %v, want the latest value", r.Value, ok)
	}
	close(hold)
	if err := q.Write(context.Background(), qrec("k4", "a")); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range s.written() {
		got = append(got, r.Key+"="+string(r.Value))
	}
	// Whatever batches the loop cut, k1 is written once, with its latest
	// value, after k2 (its first value was queued before k2, its latest after).
	want := []string{"k2=a", "k1=b", "k3=a", "k4=a"}
	if len(got) != len(want) {
		t.Fatalf("written %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("written %v, want %v", got, want)
		}
	}
	if q.Len() != 0 {
		t.Fatalf("%d keys left queued", q.Len())
	}
}

func TestStatusQueueEnqueueNeverWaitsOnAHeldWrite(t *testing.T) {
	s := &sink{}
	hold := make(chan struct{})
	q := New(s.write, Options{Faults: faults.Func(func(ctx context.Context, _ faults.Point, _ any) error {
		select {
		case <-hold:
		case <-ctx.Done():
		}
		return nil
	})})
	run(t, q)
	q.Enqueue(qrec("k", "first")) // the loop takes it and is held
	done := make(chan struct{})
	go func() {
		for i := range 1000 {
			q.Enqueue(qrec("k", "v"), qrec("other", string(rune('a'+i%26))))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Enqueue blocked behind a held write")
	}
	wctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := q.Write(wctx, qrec("w", "x")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Write during a held write = %v, want its context's deadline", err)
	}
	close(hold)
}

func TestStatusQueueRetriesAFailedWrite(t *testing.T) {
	s := &sink{fail: 2}
	q := New(s.write, Options{})
	run(t, q)
	// The first attempt fails and says so to the waiting writer; the
	// record stays queued and a later attempt writes it.
	err := q.Write(context.Background(), qrec("k", "v"))
	if err == nil {
		t.Fatal("a failed write was not reported to its waiter")
	}
	wait.Eventually(t, 5*time.Second, func() (bool, string) {
		return len(s.written()) > 0, "the failed record was never written"
	})
	if got := s.written(); len(got) != 1 || got[0].Key != "k" {
		t.Fatalf("written %v", got)
	}
}

func TestStatusQueueIsBounded(t *testing.T) {
	s := &sink{}
	q := New(s.write, Options{MaxKeys: 3})
	q.Enqueue(qrec("a", "1"), qrec("b", "1"), qrec("c", "1"), qrec("d", "1"))
	q.Enqueue(qrec("a", "2")) // a queued key may still change
	if q.Len() != 3 {
		t.Fatalf("%d keys queued, want the bound of 3", q.Len())
	}
	if r, _ := q.Pending("a"); string(r.Value) != "2" {
		t.Fatalf("queued key not updated: %q", r.Value)
	}
	if _, ok := q.Pending("d"); ok {
		t.Fatal("a key beyond the bound was queued")
	}
}

func TestStatusQueueWriteAfterStopAnswersAtOnce(t *testing.T) {
	q := New((&sink{}).write, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); q.Run(ctx) }()
	cancel()
	<-done
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	if err := q.Write(wctx, qrec("k", "v")); !errors.Is(err, store.ErrNotLeader) {
		t.Fatalf("Write on a stopped queue = %v, want ErrNotLeader at once", err)
	}
}
