package topicscan

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/coordinator/internal/topicscan/scantest"
	"github.com/sluice-io/sluice/shared/kafkautil"
)

// A read sees the records written before it began, at most the newest max
// of a partition, and ends even when a span's last offset is a
// transaction's commit marker; records written after the listing are not
// read.
func TestSpansRead(t *testing.T) {
	opts := kafkautil.ClientOpts(scantest.Broker(t), "topicscan-test", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(append(slices.Clone(opts), kgo.DefaultProduceTopic("t"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if err := kafkautil.EnsureTopics(ctx, adm, kafkautil.TopicSpec{Name: "t", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "plain-%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	txn, err := kafkautil.NewTxnWriter("topicscan-txn", append(slices.Clone(opts), kgo.DefaultProduceTopic("t"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	if err := txn.Write(ctx, &kgo.Record{Value: []byte("in-txn")}); err != nil {
		t.Fatal(err)
	}

	read := func(max int64) ([]string, bool) {
		spans, cut, err := Spans(ctx, adm, "t", time.Time{}, max)
		if err != nil {
			t.Fatal(err)
		}
		// Written after the listing: not part of this read.
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("later")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		var got []string
		if err := Read(ctx, opts, "t", spans, func(r *kgo.Record) { got = append(got, string(r.Value)) }); err != nil {
			t.Fatal(err)
		}
		return got, cut
	}
	// 5 plain records, the transaction's record and its commit marker.
	got, cut := read(0)
	if want := []string{"plain-0", "plain-1", "plain-2", "plain-3", "plain-4", "in-txn"}; !slices.Equal(got, want) || cut {
		t.Fatalf("read %v (cut %v), want %v", got, cut, want)
	}
	// The newest 3 offsets now: the transaction's record, its marker and
	// the first read's "later"; this read's own "later" comes after the
	// listing.
	got, cut = read(3)
	if want := []string{"in-txn", "later"}; !slices.Equal(got, want) || !cut {
		t.Fatalf("read %v (cut %v) of the newest 3 offsets, want %v and cut", got, cut, want)
	}
}
