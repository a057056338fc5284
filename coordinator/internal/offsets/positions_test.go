package offsets

import (
	"encoding/json"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/offsetval"
	"github.com/sluice-io/sluice/shared/offsetstore"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

func TestChangesOverPositions(t *testing.T) {
	p := Positions{
		records.PartitionID(part("a")): {Partition: part("a"), Offset: off(1)},
		records.PartitionID(part("b")): {Partition: part("b"), Offset: off(2)},
	}
	alter := changesFrom(p, wire.OffsetsOpAlter, []api.ConnectorOffset{{Partition: part("b"), Offset: off(5)}, {Partition: part("c"), Offset: off(6)}})
	if len(alter) != 2 || !sameOffset(alter[0].From, off(2)) || !sameOffset(alter[0].To, off(5)) || alter[1].From != nil {
		t.Fatalf("alter changes %+v", alter)
	}
	reset := changesFrom(p, wire.OffsetsOpReset, nil)
	if len(reset) != 2 || reset[0].Partition["file"] != "a" || reset[0].To != nil || reset[1].Partition["file"] != "b" {
		t.Fatalf("reset changes %+v: want both partitions removed, in id order", reset)
	}
	replaced := p.ReplacedBy([]api.ConnectorOffset{{Partition: part("b"), Offset: off(9)}})
	if len(replaced) != 2 || replaced[0].Partition["file"] != "b" || replaced[1].Partition["file"] != "a" || replaced[1].To != nil {
		t.Fatalf("replaced %+v: want b changed, then a removed", replaced)
	}
	if s := p.Sorted(); len(s) != 2 || s[0].Partition["file"] != "a" {
		t.Fatalf("sorted %+v", s)
	}
	if empty := changesFrom(Positions{}, wire.OffsetsOpReset, nil); empty == nil || len(empty) != 0 {
		t.Fatalf("reset of nothing %#v", empty)
	}
}

func TestSourcePositions(t *testing.T) {
	p := sourcePositions([]offsetstore.Entry{{Partition: part("a"), Offset: off(1)}, {Partition: part("b")}})
	if len(p) != 1 || !sameOffset(p[records.PartitionID(part("a"))].Offset, off(1)) {
		t.Fatalf("%+v: want only the partition with an offset", p)
	}
}

// TestSourceWrites: an altered partition is written under its canonical
// key, its other encodings tombstoned; a reset writes nothing (the agent
// works out its tombstones), and the hook hears of the live partitions
// only.
func TestSourceWrites(t *testing.T) {
	canon, _ := records.EncodeOffsetKey("src", part("a"))
	stored := []offsetstore.Entry{
		{Partition: part("a"), Offset: off(1), RawKeys: []string{string(canon), "old-a"}, Live: true},
		{Partition: part("b"), RawKeys: []string{"key-b"}},
	}
	writes, hook, err := sourceWrites("src", stored, []api.ConnectorOffset{{Partition: part("a"), Offset: off(3)}, {Partition: part("c")}}, wire.OffsetsOpAlter)
	if err != nil {
		t.Fatal(err)
	}
	if len(writes) != 3 || writes[0].Key != "old-a" || writes[0].Value != nil || writes[1].Key != string(canon) || writes[1].Value == nil || writes[2].Value != nil {
		t.Fatalf("writes %+v", writes)
	}
	if len(hook) != 2 {
		t.Fatalf("hook %+v", hook)
	}
	writes, hook, err = sourceWrites("src", stored, nil, wire.OffsetsOpReset)
	if err != nil || len(writes) != 0 || len(hook) != 1 || hook[0].Partition["file"] != "a" {
		t.Fatalf("reset writes %+v, hook %+v, %v", writes, hook, err)
	}
}

func TestSinkEntries(t *testing.T) {
	at := int64(4)
	got := SinkEntries([]offsetval.SinkOffset{{Topic: "t", Partition: 1}, {Topic: "s", Partition: 2, Offset: &at}, {Topic: "t", Partition: 0, Offset: &at}})
	if len(got) != 3 || got[0].Partition["kafka_topic"] != "s" || got[1].Partition["kafka_partition"] != int32(0) || got[2].Offset != nil ||
		got[0].Offset["kafka_offset"] != int64(4) {
		t.Fatalf("%+v: want sorted by topic then partition, a null offset kept null", got)
	}
}

func TestNumbered(t *testing.T) {
	got, err := Numbered([]api.ConnectorOffset{{Partition: part("a"), Offset: map[string]any{"kafka_offset": int64(7)}}})
	if err != nil || got[0].Offset["kafka_offset"] != json.Number("7") {
		t.Fatalf("%+v, %v: want the number as a REST request has it", got, err)
	}
}

func TestSameOffset(t *testing.T) {
	for _, tc := range []struct {
		a, b map[string]any
		want bool
	}{
		{off(1), map[string]any{"pos": json.Number("1")}, true},
		{off(1), map[string]any{"pos": 1.0}, true},
		{off(1), off(2), false},
		{nil, nil, true},
		{nil, off(1), false},
		{off(1), nil, false},
	} {
		if got := sameOffset(tc.a, tc.b); got != tc.want {
			t.Errorf("sameOffset(%v, %v) = %v", tc.a, tc.b, got)
		}
	}
}

// TestMovedSince: the partitions that make an undo a 409.
func TestMovedSince(t *testing.T) {
	e := api.OffsetsHistoryEntry{Changes: []api.OffsetChange{{Partition: part("a"), To: off(2)}, {Partition: part("b"), To: off(3)}}}
	current := Positions{records.PartitionID(part("a")): {Offset: off(2)}, records.PartitionID(part("b")): {Offset: off(3)}}
	if got := movedSince(e, nil, current); len(got) != 0 {
		t.Fatalf("unchanged: %v", got)
	}
	later := []api.OffsetsHistoryEntry{{Changes: []api.OffsetChange{{Partition: part("b")}, {Partition: part("z")}}}}
	current[records.PartitionID(part("a"))] = api.ConnectorOffset{Offset: off(9)}
	got := movedSince(e, later, current)
	if len(got) != 2 || got[0] != records.PartitionID(part("a")) || got[1] != records.PartitionID(part("b")) {
		t.Fatalf("moved %v: want a (moved by its tasks) and b (by a later entry), not z", got)
	}
}

func TestCommittedOf(t *testing.T) {
	p := Positions{"x": {Partition: map[string]any{"kafka_topic": "t", "kafka_partition": int32(2)}, Offset: map[string]any{"kafka_offset": int64(8)}}}
	if got := committedOf(p); got["t"][2] != 8 {
		t.Fatalf("%v", got)
	}
}
