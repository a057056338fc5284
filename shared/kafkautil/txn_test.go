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
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	w, err := NewTxnWriter("txn-test", kgo.SeedBrokers(kc.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
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
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	opts := []kgo.Opt{kgo.SeedBrokers(kc.ListenAddrs()...)}
	w, err := NewTxnWriter("txn-fenced", opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
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
