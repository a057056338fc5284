package rollout

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// TestRolloutBatchSizes checks how batch specs split the matched
// connectors: numbers, shares rounded up, "rest", and a last batch for
// what the specs leave.
func TestRolloutBatchSizes(t *testing.T) {
	for _, tt := range []struct {
		specs string
		n     int
		want  []int
	}{
		{`[1, 10, "rest"]`, 60, []int{1, 10, 49}},
		{`[1, 10]`, 60, []int{1, 10, 49}},
		{`["25%"]`, 10, []int{3, 7}},
		{`["25%", "25%", "rest"]`, 4, []int{1, 1, 2}},
		{`["100%"]`, 7, []int{7}},
		{`[]`, 5, []int{5}},
		{`[10, 10]`, 3, []int{3}},
		{`["rest", 5]`, 3, []int{3}},
		{`["0.5%", "rest"]`, 3, []int{1, 2}},
	} {
		var specs []json.RawMessage
		if err := json.Unmarshal([]byte(tt.specs), &specs); err != nil {
			t.Fatal(err)
		}
		got, err := BatchSizes(specs, tt.n)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s of %d: got %v, %v; want %v", tt.specs, tt.n, got, err, tt.want)
		}
	}
	for _, bad := range []string{`0`, `-1`, `1.5`, `"ten"`, `"0%"`, `"101%"`, `"%"`, `true`, `"all"`} {
		_, err := BatchSizes([]json.RawMessage{json.RawMessage(bad)}, 10)
		want := "Invalid batch " + bad + ": give a number of connectors (1 or more), a share such as \"25%\", or \"rest\""
		if e, ok := err.(*api.Error); !ok || e.Code != api.CodeBadRequest || e.Message != want {
			t.Errorf("batch %s: got %v, want 400 %q", bad, err, want)
		}
	}
}

// TestCheckSpec checks the defaults and the 400s of a rollout's
// health and on_failure.
func TestCheckSpec(t *testing.T) {
	v := "x"
	req := store.RolloutSpec{Patch: map[string]*string{"k": &v}}
	if err := CheckSpec(&req); err != nil || req.Health.RunningFor != "30s" || req.OnFailure != "pause" {
		t.Fatalf("defaults: %+v, %v", req, err)
	}
	for _, tt := range []struct {
		req  store.RolloutSpec
		want string
	}{
		{store.RolloutSpec{}, "The patch is empty"},
		{store.RolloutSpec{Patch: req.Patch, Health: store.RolloutHealth{RunningFor: "soon"}}, "Invalid health.running_for 'soon'"},
		{store.RolloutSpec{Patch: req.Patch, Health: store.RolloutHealth{RunningFor: "-1s"}}, "Invalid health.running_for '-1s'"},
		{store.RolloutSpec{Patch: req.Patch, Health: store.RolloutHealth{MaxFailedTasks: -1}}, "Invalid health.max_failed_tasks -1: must be 0 or more"},
		{store.RolloutSpec{Patch: req.Patch, OnFailure: "retry"}, "Invalid on_failure 'retry': must be pause or rollback"},
	} {
		err := CheckSpec(&tt.req)
		if e, ok := err.(*api.Error); !ok || e.Code != api.CodeBadRequest || !strings.HasPrefix(e.Message, tt.want) {
			t.Errorf("%+v: got %v, want 400 %q", tt.req, err, tt.want)
		}
	}
	if got := VerifyBound(time.Second); got != 2*time.Minute {
		t.Errorf("bound of 1s = %s", got)
	}
	if got := VerifyBound(time.Minute); got != 5*time.Minute {
		t.Errorf("bound of 1m = %s", got)
	}
}

// TestMergePatch checks that a rollout merges as PATCH …/config does.
func TestMergePatch(t *testing.T) {
	v := "2"
	got := MergePatch("c", map[string]string{"a": "1", "b": "1"}, map[string]*string{"a": &v, "b": nil})
	if len(got) != 2 || got["a"] != "2" || got["name"] != "c" {
		t.Fatalf("merged %v", got)
	}
}
