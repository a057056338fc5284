package agentrpc

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"
)

// TestBatches: items keep their order, every run but an oversized item's
// own fits the budget, and an item larger than the budget is alone.
func TestBatches(t *testing.T) {
	task := func(n int, pad int) wire.TaskAssignment {
		return wire.TaskAssignment{ID: api.TaskID{Connector: "c", Task: n}, TaskConfig: map[string]string{"p": strings.Repeat("x", pad)}}
	}
	size := func(a wire.TaskAssignment) int64 { b, _ := json.Marshal(a); return int64(len(b)) + 1 }
	small, big := task(0, 10), task(1, 5000)
	budget := 4 * size(small)
	for _, tc := range []struct {
		name  string
		items []wire.TaskAssignment
		want  [][]int // task numbers per run
	}{
		{"empty", nil, [][]int{nil}},
		{"all fit", []wire.TaskAssignment{task(0, 10), task(1, 10), task(2, 10)}, [][]int{{0, 1, 2}}},
		{"split in order", []wire.TaskAssignment{task(0, 10), task(1, 10), task(2, 10), task(3, 10), task(4, 10)}, [][]int{{0, 1, 2, 3}, {4}}},
		{"oversized alone", []wire.TaskAssignment{small, big, task(2, 10)}, [][]int{{0}, {1}, {2}}},
		{"oversized first", []wire.TaskAssignment{big, task(2, 10)}, [][]int{{1}, {2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got [][]int
			for _, run := range batches(tc.items, budget) {
				var ids []int
				var n int64
				for _, a := range run {
					ids = append(ids, a.ID.Task)
					n += size(a)
				}
				if len(run) > 1 && n > budget {
					t.Errorf("run %v takes %d bytes, budget %d", ids, n, budget)
				}
				got = append(got, ids)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("runs %v, want %v", got, tc.want)
			}
		})
	}
	// No known limit: one run.
	if runs := batches([]wire.TaskAssignment{small, big}, 0); len(runs) != 1 || len(runs[0]) != 2 {
		t.Errorf("without a budget: %d runs", len(runs))
	}
}
