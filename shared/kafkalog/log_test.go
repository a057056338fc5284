package kafkalog_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/kafkalog"
	"github.com/sluice-io/sluice/shared/kafkautil"
)

func TestReadToEndPastTransactionsAndFencing(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	base := kafkautil.ClientOpts(c.ListenAddrs()[0], "test", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	admCl, _ := kgo.NewClient(base...)
	defer admCl.Close()
	if err := kafkautil.EnsureTopics(ctx, kadm.NewClient(admCl), kafkautil.TopicSpec{Name: "log", Partitions: 3, Compacted: true}); err != nil {
		t.Fatal(err)
	}

	w, err := kafkautil.NewTxnWriter("writer-1", base...)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	recs := []*kgo.Record{{Topic: "log", Key: []byte("a"), Value: []byte("1")}, {Topic: "log", Key: []byte("b"), Value: []byte("2")}}
	if err := w.Write(ctx, recs...); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	seen := map[string]string{}
	l, err := kafkalog.New("log", func(r *kgo.Record) {
		mu.Lock()
		seen[string(r.Key)] = string(r.Value)
		mu.Unlock()
	}, base...)
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	defer l.Close()
	if err := l.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if seen["a"] != "1" || seen["b"] != "2" {
		t.Fatalf("after ReadToEnd: %v", seen)
	}
	mu.Unlock()

	// A second writer with the same id fences the first: its writes fail and
	// never become visible.
	if err := kafkautil.Fence(ctx, admCl, "writer-1"); err != nil {
		t.Fatal(err)
	}
	err = w.Write(ctx, &kgo.Record{Topic: "log", Key: []byte("a"), Value: []byte("zombie")})
	if !errors.Is(err, kafkautil.ErrFenced) {
		t.Fatalf("zombie write: got %v, want ErrFenced", err)
	}
	w2, err := kafkautil.NewTxnWriter("writer-1", base...)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	r := &kgo.Record{Topic: "log", Key: []byte("c"), Value: []byte("3")}
	if err := w2.Write(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := l.WaitPast(ctx, r.Partition, r.Offset); err != nil {
		t.Fatal(err)
	}
	if err := l.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen["a"] != "1" || seen["c"] != "3" {
		t.Fatalf("after fencing: %v", seen)
	}
}
