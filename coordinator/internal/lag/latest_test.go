package lag

import (
	"testing"
	"time"

	"github.com/sluice-io/sluice/coordinator/internal/metrics"
)

// TestLatest: a scrape's reading keeps each sink's total and when it was
// read, one sink's reading replaces its own, and a deleted connector's is
// forgotten.
func TestLatest(t *testing.T) {
	var l Latest
	if _, ok := l.Last("a"); ok {
		t.Fatal("a reading before any read")
	}
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	l.Record([]metrics.SinkLag{
		{Connector: "a", Partitions: []metrics.PartitionLag{{Topic: "t", Partition: 0, Lag: 3}, {Topic: "t", Partition: 1, Lag: 4}}},
		{Connector: "b"},
	}, t0)
	if r, ok := l.Last("a"); !ok || r.Total != 7 || !r.At.Equal(t0) {
		t.Fatalf("a: %+v %v", r, ok)
	}
	if r, ok := l.Last("b"); !ok || r.Total != 0 {
		t.Fatalf("b: %+v %v", r, ok)
	}
	l.RecordOne("a", 1, t0.Add(time.Second))
	if r, _ := l.Last("a"); r.Total != 1 || !r.At.Equal(t0.Add(time.Second)) {
		t.Fatalf("a after one read: %+v", r)
	}
	l.Forget(func(name string) bool { return name == "a" })
	if _, ok := l.Last("b"); ok {
		t.Fatal("a deleted connector's reading kept")
	}
	if _, ok := l.Last("a"); !ok {
		t.Fatal("a kept connector's reading forgotten")
	}
}
