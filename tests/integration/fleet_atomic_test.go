package integration

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/sluicetest"
)

// commitFault is a harness fault injector that holds the leader at its
// commit (faults.StoreCommit) of the first transaction whose keys hold every one
// of want, until the test lets it go: then that commit fails, as a leader
// stopped between its produce and its commit would leave it, and so does
// every later matching commit while it is armed.
type commitFault struct {
	want    []string
	mu      sync.Mutex
	armed   bool
	held    chan string
	release chan struct{}
	hits    int
}

func newCommitFault(want ...string) *commitFault {
	return &commitFault{want: want, armed: true, held: make(chan string, 1), release: make(chan struct{})}
}

func (f *commitFault) Fault(_ context.Context, at faults.Point, subject any) error {
	if at != faults.StoreCommit {
		return nil
	}
	step := string(at) + " " + strings.Join(subject.([]string), " ")
	for _, w := range f.want {
		if !strings.Contains(step, w) {
			return nil
		}
	}
	f.mu.Lock()
	armed := f.armed
	f.hits++
	first := f.hits == 1
	f.mu.Unlock()
	if !armed {
		return nil
	}
	if first {
		f.held <- step
		<-f.release
	}
	return errors.New("injected: the leader stopped before its commit")
}

func (f *commitFault) disarm() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed = false
}

// keys are the keys of topic's records holding prefix: read_committed, or
// every record produced (read_uncommitted: records of an open or aborted
// transaction too).
func keys(c *sluicetest.Cluster, topic, prefix string, committed bool) []string {
	c.T.Helper()
	var out []string
	for _, r := range sluicetest.ReadLog(c.T, c.Brokers, "atomic-reader", topic, committed) {
		if !r.Attrs.IsControl() && strings.HasPrefix(string(r.Key), prefix) {
			out = append(out, string(r.Key))
		}
	}
	return out
}

// TestMaintenanceOpenIsOneTransaction holds the leader between the produce
// and the commit of a window's opening: the window's record and its
// connectors' target states are all produced, and none is visible to a
// read_committed reader, nor to the leader. The commit then fails and the
// leader is stopped; the next leader finds no window and every connector
// as it was — nothing half-done — and opens the window whole.
func TestMaintenanceOpenIsOneTransaction(t *testing.T) {
	t.Parallel()
	fault := newCommitFault("maintenance-", "target-state-")
	c := sluicetest.Start(t, sluicetest.Options{Faults: fault})
	createInStates(c, map[string]string{"tx-a": "RUNNING", "tx-b": "RUNNING"})
	configs, fleet := c.Prefix+"-configs", c.Prefix+"-fleet"
	stateKeys := len(keys(c, configs, "target-state-", true))

	answered := make(chan sluicetest.Response, 1)
	go func() {
		answered <- sluicetest.Do(t, c.URL, "POST", "/sluice/maintenance", map[string]any{"match": "tx-*", "state": "STOPPED"})
	}()
	var step string
	select {
	case step = <-fault.held:
	case <-time.After(time.Minute):
		t.Fatal("the window's opening never reached its commit")
	}
	// Produced, in one transaction: the window and both connectors' states.
	for _, k := range []string{"target-state-tx-a", "target-state-tx-b", "commit-tx-a", "commit-tx-b"} {
		if !strings.Contains(step, " "+k) {
			t.Fatalf("the window's transaction %q lacks %s", step, k)
		}
	}
	if got := keys(c, fleet, "maintenance-", false); len(got) != 1 {
		t.Fatalf("window records produced: %v", got)
	}
	if got := keys(c, configs, "target-state-", false); len(got) != stateKeys+2 {
		t.Fatalf("target states produced: %v", got)
	}
	// Visible: none of it.
	if got := keys(c, fleet, "maintenance-", true); len(got) != 0 {
		t.Fatalf("a window record is visible before its commit: %v", got)
	}
	if got := keys(c, configs, "target-state-", true); len(got) != stateKeys {
		t.Fatalf("target states visible before their commit: %v", got)
	}
	close(fault.release)
	if r := <-answered; r.Status != http.StatusInternalServerError || !strings.Contains(string(r.Body), "Failed to record maintenance window") {
		t.Fatalf("open with a failed commit: %s", r)
	}
	c.StopCoordinator()
	fault.disarm()
	c.StartCoordinator()
	waitLeader(t, c)
	wantJSON(t, c.Do("GET", "/sluice/maintenance", nil), 200, `{"windows":[]}`)
	waitTarget(c, "tx-a", "RUNNING")
	waitTarget(c, "tx-b", "RUNNING")
	if got := keys(c, fleet, "maintenance-", true); len(got) != 0 {
		t.Fatalf("an aborted window record is visible: %v", got)
	}
	if got := keys(c, configs, "target-state-", true); len(got) != stateKeys {
		t.Fatalf("aborted target states are visible: %v", got)
	}

	w := window(t, c.Do("POST", "/sluice/maintenance", map[string]any{"match": "tx-*", "state": "STOPPED"}), 201)
	waitTarget(c, "tx-a", "STOPPED")
	waitTarget(c, "tx-b", "STOPPED")
	if got := keys(c, fleet, "maintenance-"+w.ID, true); len(got) != 1 {
		t.Fatalf("window records %v", got)
	}
}

// TestRolloutStepIsOneTransaction holds the leader between the produce and
// the commit of a rollout step that writes a connector's config: the
// patched config and the rollout's record are produced together and
// neither is visible. The commit fails and the leader stops; the next
// leader carries the rollout on from what was committed, and writes each
// connector's config exactly once.
func TestRolloutStepIsOneTransaction(t *testing.T) {
	t.Parallel()
	fault := newCommitFault("rollout-", "connector-")
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, Faults: fault})
	topic := c.Name("gen")
	names := createGenerators(c, topic, "txr", 2)
	for _, n := range names {
		c.WaitState(n, "RUNNING", 1, "RUNNING")
	}
	configs := c.Prefix + "-configs"
	r := createRollout(c, map[string]any{
		"match": c.Name("txr-*"), "patch": map[string]any{"rollout.tag": "v2"},
		"batches": []any{1}, "health": map[string]any{"running_for": "1s"},
	})
	var step string
	select {
	case step = <-fault.held:
	case <-time.After(time.Minute):
		t.Fatal("the rollout's first step never reached its commit")
	}
	if !strings.Contains(step, " connector-"+names[0]) || !strings.Contains(step, " rollout-"+r.ID) {
		t.Fatalf("the step's transaction %q", step)
	}
	patched := func(committed bool) int {
		n := 0
		for _, rec := range sluicetest.ReadLog(t, c.Brokers, "atomic-reader", configs, committed) {
			if string(rec.Key) == "connector-"+names[0] && strings.Contains(string(rec.Value), `"rollout.tag":"v2"`) {
				n++
			}
		}
		return n
	}
	if patched(false) != 1 || patched(true) != 0 {
		t.Fatalf("patched config: %d produced, %d visible; want 1 and 0", patched(false), patched(true))
	}
	if got := getRollout(c, r.ID); got.Batches[0].Connectors[0].State != api.BatchPending {
		t.Fatalf("the rollout shows the uncommitted step: %s", batchStates(got))
	}
	close(fault.release)
	// The leader stops before any retry can commit.
	c.StopCoordinator()
	if patched(true) != 0 {
		t.Fatal("the aborted step's config is visible")
	}
	fault.disarm()
	c.StartCoordinator()
	r = waitRollout(c, r.ID, api.RolloutDone)
	writes := configWrites(c, names...)
	for _, n := range names {
		if got := connectorConfig(c, n); got["rollout.tag"] != "v2" {
			t.Errorf("%s: config %v", n, got)
		}
		if writes[n] != 2 {
			t.Errorf("%s: %d config writes, want 2 (created, patched once)", n, writes[n])
		}
	}
	t.Logf("rollout %s done: %s", r.ID, batchStates(r))
}
