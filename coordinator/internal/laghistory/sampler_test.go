package laghistory

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/lag"
)

// types are the connectors a test's sampler knows, by name.
type types map[string]string

func (ts types) of(name string) (string, bool) {
	t, ok := ts[name]
	return t, ok
}

func newSampler(ts types) *Sampler {
	s := New(Config{Connectors: ts.of, Logger: slog.New(slog.DiscardHandler)})
	s.since = time.Unix(1000, 0) // as Run sets it
	return s
}

func sinkLag(name string, lags ...int64) lag.SinkLag {
	out := lag.SinkLag{Connector: name}
	for p, l := range lags {
		out.Partitions = append(out.Partitions, api.PartitionLag{Topic: "t", Partition: int32(p), Lag: l})
	}
	return out
}

// TestRingBounded: a partition keeps its newest Samples samples, oldest
// first, however many rounds ran.
func TestRingBounded(t *testing.T) {
	s := newSampler(types{"s": api.TypeSink})
	rounds := Samples*2 + 7
	for i := range rounds {
		s.Record(time.UnixMilli(int64(i)), []lag.SinkLag{sinkLag("s", int64(i))})
	}
	h, err := s.History(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	got := h.Partitions[0].Samples
	if len(got) != Samples {
		t.Fatalf("%d samples kept, want %d", len(got), Samples)
	}
	first, last := int64(rounds-Samples), int64(rounds-1)
	if got[0] != [2]int64{first, first} || got[len(got)-1] != [2]int64{last, last} {
		t.Fatalf("samples from %v to %v, want from %d to %d", got[0], got[len(got)-1], first, last)
	}
	for i := 1; i < len(got); i++ {
		if got[i][0] != got[i-1][0]+1 {
			t.Fatalf("samples out of order at %d: %v then %v", i, got[i-1], got[i])
		}
	}
	if h.IntervalMillis != 15000 || time.Duration(Samples)*DefaultInterval != time.Hour {
		t.Fatalf("interval %d ms, %d samples", h.IntervalMillis, Samples)
	}
}

// TestEviction: a partition its connector no longer lists, and a
// connector deleted or no longer a sink, leave; a sink the round missed
// (its group could not be read) keeps its series.
func TestEviction(t *testing.T) {
	ts := types{"a": api.TypeSink, "b": api.TypeSink, "c": api.TypeSink}
	s := newSampler(ts)
	s.Record(time.Unix(1, 0), []lag.SinkLag{sinkLag("a", 1, 2), sinkLag("b", 3), sinkLag("c", 4)})
	delete(ts, "b")
	ts["c"] = api.TypeSource
	s.Record(time.Unix(2, 0), []lag.SinkLag{sinkLag("a", 5)})
	if s.count != 1 || len(s.series) != 1 {
		t.Fatalf("%d partitions of %d connectors kept, want a's partition 0 alone", s.count, len(s.series))
	}
	s.Record(time.Unix(3, 0), nil)
	h, _ := s.History(context.Background(), "a")
	if len(h.Partitions) != 1 || len(h.Partitions[0].Samples) != 2 {
		t.Fatalf("a sink the round missed lost its series: %+v", h)
	}
}

// TestMaxPartitions: partitions beyond MaxPartitions are not sampled, and
// are once others leave.
func TestMaxPartitions(t *testing.T) {
	ts := types{}
	var round []lag.SinkLag
	for i := range MaxPartitions / 100 {
		name := fmt.Sprintf("s%03d", i)
		ts[name] = api.TypeSink
		round = append(round, sinkLag(name, make([]int64, 100)...))
	}
	ts["late"] = api.TypeSink
	s := newSampler(ts)
	s.Record(time.Unix(1, 0), append(round, sinkLag("late", 1)))
	if s.count != MaxPartitions {
		t.Fatalf("%d partitions kept, want %d", s.count, MaxPartitions)
	}
	h, _ := s.History(context.Background(), "late")
	if len(h.Partitions) != 0 || h.Note == "" {
		t.Fatalf("a partition beyond the bound: %+v", h)
	}
	delete(ts, "s000")
	s.Record(time.Unix(2, 0), append(round[1:], sinkLag("late", 1)))
	if h, _ := s.History(context.Background(), "late"); len(h.Partitions) != 1 {
		t.Fatalf("a partition freed by an eviction is not sampled: %+v", h)
	}
}

// TestHistoryAnswers: a 404 for a connector that does not exist, empty
// series with a note for a source, and for a coordinator not sampling.
func TestHistoryAnswers(t *testing.T) {
	s := newSampler(types{"src": api.TypeSource, "sink": api.TypeSink})
	if _, err := s.History(context.Background(), "nope"); !api.IsCode(err, api.CodeNotFound) {
		t.Fatalf("unknown connector: %v", err)
	}
	if h, err := s.History(context.Background(), "src"); err != nil || h.Note != "a source connector has no consumer lag" || h.Partitions == nil {
		t.Fatalf("source: %+v %v", h, err)
	}
	s.reset()
	if h, _ := s.History(context.Background(), "sink"); h.Note == "" || !h.Since.IsZero() {
		t.Fatalf("not sampling: %+v", h)
	}
}
