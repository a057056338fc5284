package offsetstore

import (
	"reflect"
	"testing"

	"github.com/sluice-io/sluice/shared/wire"
)

func TestReplace(t *testing.T) {
	val := func(s string) *string { return &s }
	entries := []Entry{
		{Partition: map[string]any{"f": "a"}, Offset: map[string]any{"p": 1}, RawKeys: []string{`["c",{"f":"a"}]`}, Live: true},
		// Two encodings of one partition (Kafka Connect's hash order and Sluice's sorted one).
		{Partition: map[string]any{"f": "b", "g": "x"}, Offset: map[string]any{"p": 2}, RawKeys: []string{`["c",{"f":"b","g":"x"}]`, `["c",{"g":"x","f":"b"}]`}, Live: true},
		// Already removed: nothing to tombstone.
		{Partition: map[string]any{"f": "gone"}, RawKeys: []string{`["c",{"f":"gone"}]`}},
	}
	for _, tc := range []struct {
		name   string
		writes []wire.OffsetWrite
		want   []wire.OffsetWrite
	}{
		{"reset", nil, []wire.OffsetWrite{{Key: `["c",{"f":"a"}]`}, {Key: `["c",{"f":"b","g":"x"}]`}, {Key: `["c",{"g":"x","f":"b"}]`}}},
		{"replace keeps what it writes", []wire.OffsetWrite{{Key: `["c",{"f":"b","g":"x"}]`, Value: val(`{"p":9}`)}, {Key: `["c",{"f":"new"}]`, Value: val(`{"p":0}`)}},
			[]wire.OffsetWrite{{Key: `["c",{"f":"a"}]`}, {Key: `["c",{"g":"x","f":"b"}]`}, {Key: `["c",{"f":"b","g":"x"}]`, Value: val(`{"p":9}`)}, {Key: `["c",{"f":"new"}]`, Value: val(`{"p":0}`)}}},
		{"nothing stored", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := entries
			if tc.name == "nothing stored" {
				in = nil
			}
			if got := Replace(in, tc.writes); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
