package wire

import (
	"fmt"
	"testing"
)

// TestWriteRecords: with a connector topic, Kafka Connect's order — the
// worker topic's tombstones, every write to the connector's topic, the
// worker topic's offsets; without one (or the worker's), each write once.
func TestWriteRecords(t *testing.T) {
	v := func(s string) *string { return &s }
	writes := []OffsetWrite{{Key: "a", Value: v("1")}, {Key: "b"}, {Key: "c", Value: v("3")}}
	render := func(ws []TopicWrite) string {
		out := ""
		for _, w := range ws {
			val := "∅"
			if w.Value != nil {
				val = *w.Value
			}
			out += fmt.Sprintf("%s:%s=%s ", w.Topic, w.Key, val)
		}
		return out
	}
	if got, want := render(WriteRecords(writes, "w", "own")), "w:b=∅ own:a=1 own:b=∅ own:c=3 w:a=1 w:c=3 "; got != want {
		t.Errorf("with a connector topic: %s, want %s", got, want)
	}
	// A write confined to one topic goes there alone.
	confined := []OffsetWrite{{Key: "a", Value: v("1"), Topic: "w"}, {Key: "b", Topic: "own"}, {Key: "c", Value: v("3")}}
	if got, want := render(WriteRecords(confined, "w", "own")), "own:b=∅ own:c=3 w:a=1 w:c=3 "; got != want {
		t.Errorf("confined writes: %s, want %s", got, want)
	}
	for _, own := range []string{"", "w"} {
		if got, want := render(WriteRecords(writes, "w", own)), "w:a=1 w:b=∅ w:c=3 "; got != want {
			t.Errorf("connector topic %q: %s, want %s", own, got, want)
		}
	}
}
