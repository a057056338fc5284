package faults

import (
	"testing"

	"github.com/sluice-io/sluice/connect/file"
)

// TestParseSink reads back the lines the file sink writes for the
// workload's values (HoistField's line plus InsertField's agent, a map),
// and counts a line it cannot read as unreadable.
func TestParseSink(t *testing.T) {
	var data []byte
	for _, v := range []map[string]any{
		{"line": "line 0000005", "agent": "agent-1"},
		{"line": "line 0000012", "agent": "agent-2"},
	} {
		data = append(data, file.Line(nil, v)+"\n"...)
	}
	data = append(data, "garbled\npartial"...)
	got := parseSink(data)
	want := []sinkLine{{N: 5, Agent: "agent-1"}, {N: 12, Agent: "agent-2"}, {}}
	if len(got) != len(want) {
		t.Fatalf("parsed %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
