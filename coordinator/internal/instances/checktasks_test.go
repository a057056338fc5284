package instances

import (
	"errors"
	"reflect"
	"strconv"
	"testing"

	"github.com/sluice-io/sluice/shared/records"
)

// TestCheckTasksRefusalFailsWithoutRetry: task configs that CheckTasks
// refuses are not published; the connector is stopped and FAILED with the
// refusal as its trace, and nothing is computed again — no retry timer, no
// TaskConfigs on later syncs — until its config changes.
func TestCheckTasksRefusalFailsWithoutRetry(t *testing.T) {
	tooMany := errors.New("the task configs cannot be stored")
	h := newHarness(t, func(c *Config) {
		c.CheckTasks = func(name string, tasks []map[string]string) error {
			if len(tasks) > 2 {
				return tooMany
			}
			return nil
		}
	})
	wide := conn("a", records.TargetStarted, "tasks.max", "3")
	h.Sync([]Connector{wide})
	h.settle(t)
	if _, ok := h.TaskConfigs("a"); ok {
		t.Fatal("refused task configs were published")
	}
	for range 5 {
		h.Sync([]Connector{wide})
	}
	h.settle(t)
	if c := h.plugin.counts(); c.starts != 1 || c.taskConfigs != 1 || c.stops != 1 || c.live != 0 {
		t.Fatalf("calls %+v: want one computation, then the instance stopped", c)
	}
	if p := h.clock.pending(); len(p) != 0 {
		t.Fatalf("a refusal is retried: timers %v", p)
	}

	narrow := conn("a", records.TargetStarted, "tasks.max", strconv.Itoa(2))
	h.Sync([]Connector{narrow})
	h.settle(t)
	if ts, ok := h.TaskConfigs("a"); !ok || !ts.Current || len(ts.Configs) != 2 {
		t.Fatalf("after a config that fits: %+v %v", ts, ok)
	}
	if got, want := h.status.of("a"), []Status{failed(tooMany.Error()), running}; !reflect.DeepEqual(got, want) {
		t.Errorf("statuses = %+v, want %+v", got, want)
	}
}
