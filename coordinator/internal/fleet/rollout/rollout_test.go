package rollout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/connlock"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
)

// env is a fake leader: the real commands applied to in-memory states
// (store.Memory), a fake clock, and a task generation counter standing in
// for the reconciler. Its controller can be replaced by a new one over the
// same state, as a new leader's would be.
type env struct {
	t   *testing.T
	mem *store.Memory
	now time.Time
	gen int64
	c   *Controller
}

var t0 = time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)

// newEnv makes RUNNING connectors of one RUNNING task each, configs
// {"name", "v": "1"}.
func newEnv(t *testing.T, names ...string) *env {
	e := &env{t: t, mem: store.NewMemory(), now: t0}
	for _, n := range names {
		e.apply(store.CreateConnector{Name: n, Config: map[string]string{"name": n, "v": "1"}},
			store.PutTaskConfigs{Name: n, Tasks: []map[string]string{{"task": "0"}}})
		e.restart(n)
	}
	e.mem.Txns = nil
	e.failover()
	return e
}

func (e *env) apply(cmds ...store.Command) {
	e.t.Helper()
	if err := e.mem.Apply(context.Background(), cmds...); err != nil {
		e.t.Fatal(err)
	}
}

// failover replaces the controller by a new one over the persisted state.
func (e *env) failover() {
	e.c = New(Config{Configs: e.mem.Config, Statuses: e.mem.Status, Rollouts: e.mem.Fleet, Store: e.mem, Locks: connlock.New(func() {}),
		Clock:      func() time.Time { return e.now },
		NewID:      func(now time.Time) string { return "r-" + now.Format("150405") },
		Generation: func() int64 { return e.gen },
		Validate: func(_ context.Context, config map[string]string) error {
			if config["bad"] != "" {
				return api.Errorf(api.CodeBadRequest, "bad is %s", config["bad"])
			}
			return nil
		},
		CheckSize: func(context.Context, string, map[string]string) error { return nil },
		WriteFailed: func(err error, what string, args ...any) error {
			return api.Errorf(api.CodeInternal, "%s: %v", fmt.Sprintf(what, args...), err)
		},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// restart stands for the reconciler restarting a connector's task: a new
// generation, RUNNING.
func (e *env) restart(name string) {
	e.gen++
	e.status(name, api.StateRunning, api.StateRunning)
}

// status sets a connector's state and its task's, at the current
// generation.
func (e *env) status(name, conn, task string) {
	e.t.Helper()
	e.apply(store.PutConnectorStatus{Name: name, State: conn, Worker: "c1"},
		store.PutTaskStatus{Connector: name, Task: 0, State: task, Worker: "a1", Generation: e.gen})
}

func ptr(s string) *string { return &s }

// spec patches v to 2 in batches of one, then the rest.
func spec(onFailure string) store.RolloutSpec {
	return store.RolloutSpec{Selector: store.Selector{Match: "*"}, Patch: map[string]*string{"v": ptr("2")},
		Batches: []json.RawMessage{json.RawMessage(`1`), json.RawMessage(`"rest"`)},
		Health:  store.RolloutHealth{RunningFor: "30s"}, OnFailure: onFailure}
}

func (e *env) create(s store.RolloutSpec, names ...string) store.Rollout {
	e.t.Helper()
	if err := CheckSpec(&s); err != nil {
		e.t.Fatal(err)
	}
	r, err := e.c.Create(context.Background(), s, names, "ann")
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// step takes one step and says what the rollout looks like then.
func (e *env) step(id string) (bool, string) {
	e.t.Helper()
	took, err := e.c.Step(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return took, e.summary(id)
}

// summary is a rollout as "state batch [batch state: connector states]…".
func (e *env) summary(id string) string {
	r, ok := e.mem.Fleet.Rollout(id)
	if !ok {
		return "gone"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d", r.State, r.Batch)
	for _, rb := range r.Batches {
		var cs []string
		for _, c := range rb.Connectors {
			cs = append(cs, c.State)
		}
		fmt.Fprintf(&b, " [%s: %s]", rb.State, strings.Join(cs, ","))
	}
	return b.String()
}

func (e *env) config(name string) string {
	c, ok := e.mem.Config.Get(name)
	if !ok {
		return "gone"
	}
	return c.Config["v"]
}

func (e *env) rollout(id string) store.Rollout {
	r, _ := e.mem.Fleet.Rollout(id)
	return r
}

// lastTxn is the keys of the last transaction.
func (e *env) lastTxn() []string {
	var keys []string
	for _, r := range e.mem.Txns[len(e.mem.Txns)-1] {
		keys = append(keys, r.Key)
	}
	return keys
}

// TestBatchTransitions is the table of a running rollout's steps: each row
// sets the scene from a fresh rollout over a and b (batches [a] [b]),
// takes one step at the row's clock and checks where the rollout is, and
// what the step's one transaction held.
func TestBatchTransitions(t *testing.T) {
	for _, tt := range []struct {
		name  string
		scene func(e *env, id string)
		want  string
		txn   []string // nil: no step taken
	}{
		{"pending batch starts applying", nil,
			"running 0 [applying: pending] [pending: pending]", []string{"rollout-r-093000"}},
		{"a connector's config and its mark are one transaction",
			func(e *env, id string) { e.step(id) },
			"running 0 [applying: applied] [pending: pending]", []string{"connector-a", "rollout-r-093000"}},
		{"a deleted connector is skipped",
			func(e *env, id string) { e.step(id); e.apply(store.DeleteConnector{Name: "a"}) },
			"running 0 [applying: skipped] [pending: pending]", []string{"rollout-r-093000"}},
		{"a connector with the patch already is marked without a write",
			func(e *env, id string) {
				e.step(id)
				e.apply(store.PutConnectorConfig{Name: "a", Config: map[string]string{"name": "a", "v": "2"}})
			},
			"running 0 [applying: applied] [pending: pending]", []string{"rollout-r-093000"}},
		{"a connector changed by hand gets the patch merged into its config",
			func(e *env, id string) {
				e.step(id)
				e.apply(store.PutConnectorConfig{Name: "a", Config: map[string]string{"name": "a", "v": "1", "extra": "x"}})
			},
			"running 0 [applying: applied] [pending: pending]", []string{"connector-a", "rollout-r-093000"}},
		{"a connector changed by hand that no longer validates fails",
			func(e *env, id string) {
				e.step(id)
				e.apply(store.PutConnectorConfig{Name: "a", Config: map[string]string{"name": "a", "bad": "yes"}})
			},
			"running 0 [applying: failed: a: its config changed since the rollout was made, and the patch no longer validates: bad is yes] [pending: pending]",
			[]string{"rollout-r-093000"}},
		{"an applied batch starts verifying",
			func(e *env, id string) { e.step(id); e.step(id) },
			"running 0 [verifying: applied] [pending: pending]", []string{"rollout-r-093000"}},
		{"a verifying batch with a fresh task becomes healthy",
			func(e *env, id string) { e.step(id); e.step(id); e.step(id); e.restart("a") },
			"running 0 [verifying: applied] [pending: pending]", []string{"rollout-r-093000"}},
		{"a verifying batch whose task did not restart yet waits",
			func(e *env, id string) { e.step(id); e.step(id); e.step(id) },
			"running 0 [verifying: applied] [pending: pending]", nil},
		{"a FAILED fresh task fails the batch: paused",
			func(e *env, id string) {
				e.step(id)
				e.step(id)
				e.step(id)
				e.gen++
				e.status("a", api.StateRunning, api.StateFailed)
			},
			"paused 0 [failed: applied] [pending: pending]", []string{"rollout-r-093000"}},
		{"a FAILED connector fails the batch",
			func(e *env, id string) {
				e.step(id)
				e.step(id)
				e.step(id)
				e.status("a", api.StateFailed, api.StateRunning)
			},
			"paused 0 [failed: applied] [pending: pending]", []string{"rollout-r-093000"}},
		{"a connector deleted while verifying is skipped",
			func(e *env, id string) { e.step(id); e.step(id); e.step(id); e.apply(store.DeleteConnector{Name: "a"}) },
			"running 0 [verifying: skipped] [pending: pending]", []string{"rollout-r-093000"}},
		{"a connector paused by hand is not held to the gate",
			func(e *env, id string) {
				e.step(id)
				e.step(id)
				e.step(id)
				e.apply(store.SetTargetState{Name: "a", State: records.TargetPaused})
			},
			"running 0 [verifying: applied] [pending: pending]", []string{"rollout-r-093000"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "a", "b")
			r := e.create(spec(""), "a", "b")
			if tt.scene != nil {
				tt.scene(e, r.ID)
			}
			txns := len(e.mem.Txns)
			took, got := e.step(r.ID)
			if got != tt.want {
				t.Fatalf("rollout %q, want %q", got, tt.want)
			}
			if took != (tt.txn != nil) || len(e.mem.Txns) != txns+boolInt(took) {
				t.Fatalf("step taken %v (%d transactions), want %v", took, len(e.mem.Txns)-txns, tt.txn != nil)
			}
			if took && !reflect.DeepEqual(e.lastTxn(), tt.txn) {
				t.Fatalf("transaction %v, want %v", e.lastTxn(), tt.txn)
			}
			if ro := e.rollout(r.ID); !ro.UpdatedAt.Equal(e.now) && took {
				t.Fatalf("updated at %s, want the clock's %s", ro.UpdatedAt, e.now)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// verifying makes a rollout over a whose only batch verifies since t0 with
// its task restarted, and returns its id.
func verifying(t *testing.T, s store.RolloutSpec) (*env, string) {
	e := newEnv(t, "a")
	s.Batches = nil
	r := e.create(s, "a")
	for range 3 {
		e.step(r.ID)
	}
	if got := e.summary(r.ID); got != "running 0 [verifying: applied]" {
		t.Fatalf("rollout %q", got)
	}
	e.restart("a")
	return e, r.ID
}

// TestHealthGateClockEdges pins the gate's bounds at their instants:
// healthy for exactly running_for passes; a batch unhealthy for exactly
// the bound still verifies and fails one nanosecond later; a task that did
// not restart counts once running_for and the grace have passed, exactly.
func TestHealthGateClockEdges(t *testing.T) {
	t.Run("healthy for exactly running_for passes", func(t *testing.T) {
		e, id := verifying(t, spec(""))
		e.now = t0.Add(5 * time.Second)
		e.step(id) // healthy since t0+5s
		if hs := e.rollout(id).Batches[0].HealthySince; !hs.Equal(e.now) {
			t.Fatalf("healthy since %s", hs)
		}
		e.now = t0.Add(35*time.Second - time.Nanosecond)
		if took, got := e.step(id); took {
			t.Fatalf("passed before running_for: %s", got)
		}
		e.now = t0.Add(35 * time.Second)
		if took, got := e.step(id); !took || got != "running 1 [done: applied]" {
			t.Fatalf("at running_for: %v %s", took, got)
		}
		if took, got := e.step(id); !took || got != "done 1 [done: applied]" {
			t.Fatalf("finish: %v %s", took, got)
		}
		if took, _ := e.step(id); took {
			t.Fatal("a done rollout took a step")
		}
	})
	t.Run("unhealthy past the bound fails, not at it", func(t *testing.T) {
		e, id := verifying(t, spec(""))
		e.status("a", api.StateRunning, api.StateUnassigned)
		bound := VerifyBound(30 * time.Second)
		e.now = t0.Add(bound)
		if took, got := e.step(id); took {
			t.Fatalf("failed at the bound: %s", got)
		}
		e.now = t0.Add(bound + time.Nanosecond)
		if took, got := e.step(id); !took || got != "paused 0 [failed: applied]" {
			t.Fatalf("past the bound: %v %s", took, got)
		}
		if r := e.rollout(id); r.Error != "batch 1 of 1 did not become healthy within 2m30s: task a-0 is UNASSIGNED" {
			t.Fatalf("error %q", r.Error)
		}
	})
	t.Run("healthy then unhealthy starts over", func(t *testing.T) {
		e, id := verifying(t, spec(""))
		e.step(id)
		e.now = t0.Add(10 * time.Second)
		e.status("a", api.StateRunning, api.StateUnassigned)
		e.step(id)
		if hs := e.rollout(id).Batches[0].HealthySince; !hs.IsZero() {
			t.Fatalf("healthy since %s after a relapse", hs)
		}
		e.status("a", api.StateRunning, api.StateRunning)
		e.now = t0.Add(20 * time.Second)
		e.step(id)
		e.now = t0.Add(49 * time.Second)
		if took, _ := e.step(id); took {
			t.Fatal("passed counting the time before the relapse")
		}
		e.now = t0.Add(50 * time.Second)
		if took, got := e.step(id); !took || got != "running 1 [done: applied]" {
			t.Fatalf("%v %s", took, got)
		}
	})
	t.Run("a task that did not restart counts once settled, exactly", func(t *testing.T) {
		e := newEnv(t, "a")
		s := spec("")
		s.Batches = nil
		r := e.create(s, "a")
		for range 3 {
			e.step(r.ID)
		}
		settle := t0.Add(30*time.Second + graceFresh)
		e.now = settle.Add(-time.Nanosecond)
		if took, _ := e.step(r.ID); took {
			t.Fatal("an old task counted before it settled")
		}
		e.now = settle
		if took, got := e.step(r.ID); !took || !e.rollout(r.ID).Batches[0].HealthySince.Equal(settle) {
			t.Fatalf("settled: %v %s", took, got)
		}
	})
	t.Run("failed tasks within the limit pass, beyond it fail", func(t *testing.T) {
		s := spec("")
		s.Health.MaxFailedTasks = 1
		e, id := verifying(t, s)
		e.status("a", api.StateRunning, api.StateFailed)
		if took, got := e.step(id); !took || got != "running 0 [verifying: applied]" || e.rollout(id).Batches[0].HealthySince.IsZero() {
			t.Fatalf("one FAILED task of one allowed is healthy: %v %s", took, got)
		}
		s.Health.MaxFailedTasks = 0
		e2, id2 := verifying(t, s)
		e2.status("a", api.StateRunning, api.StateFailed)
		e2.step(id2)
		if r := e2.rollout(id2); r.State != store.RolloutPaused || r.Error != "batch 1 of 1 failed its health gate: 1 task(s) FAILED (at most 0 allowed), task a-0 among them" {
			t.Fatalf("%s %q", r.State, r.Error)
		}
	})
}

// TestPauseResumeAbort: the REST changes, their refusals, and a resumed
// batch verifying afresh from the clock of its resume.
func TestPauseResumeAbort(t *testing.T) {
	ctx := context.Background()
	e, id := verifying(t, spec(""))
	e.status("a", api.StateRunning, api.StateFailed)
	e.step(id)
	if r := e.rollout(id); r.State != store.RolloutPaused || r.Batches[0].State != store.BatchFailed {
		t.Fatalf("%s", e.summary(id))
	}
	if _, err := e.c.Pause(ctx, id); err == nil || err.Error() != "Rollout "+id+" is paused: only a running rollout can be paused" {
		t.Fatalf("pause of a paused rollout: %v", err)
	}
	if took, _ := e.step(id); took {
		t.Fatal("a paused rollout took a step")
	}
	e.restart("a")
	e.now = t0.Add(time.Hour)
	r, err := e.c.Resume(ctx, id)
	if err != nil || r.State != store.RolloutRunning || r.Error != "" || !r.Batches[0].VerifyingSince.IsZero() || !r.UpdatedAt.Equal(e.now) {
		t.Fatalf("resumed %+v %v", r, err)
	}
	if _, err := e.c.Resume(ctx, id); err == nil || err.Error() != "Rollout "+id+" is running: only a paused rollout can be resumed" {
		t.Fatalf("resume of a running rollout: %v", err)
	}
	e.step(id)
	if vs := e.rollout(id).Batches[0].VerifyingSince; !vs.Equal(e.now) {
		t.Fatalf("verifying since %s, want the resume's %s", vs, e.now)
	}
	if r, err := e.c.Pause(ctx, id); err != nil || r.State != store.RolloutPaused {
		t.Fatalf("pause %+v %v", r, err)
	}
	if r, err := e.c.Abort(ctx, id); err != nil || r.State != store.RolloutAborted {
		t.Fatalf("abort %+v %v", r, err)
	}
	if _, err := e.c.Abort(ctx, id); err == nil || err.Error() != "Rollout "+id+" is aborted already" {
		t.Fatalf("abort of an aborted rollout: %v", err)
	}
	if took, _ := e.step(id); took {
		t.Fatal("an aborted rollout took a step")
	}
	if _, err := e.c.Pause(ctx, "nope"); err == nil || err.Error() != "Rollout nope not found" {
		t.Fatalf("pause of an unknown rollout: %v", err)
	}
	e.mem.Fail = func([]store.Command) error { return errors.New("deposed") }
	if _, err := e.c.Abort(ctx, "nope"); err == nil || err.Error() != "Rollout nope not found" {
		t.Fatalf("%v", err)
	}
}

// TestRollBack: a failed batch of a rollout that rolls back restores every
// applied connector, newest batch and last connector first, each restore
// one transaction with its mark; then each batch, then the rollout.
func TestRollBack(t *testing.T) {
	e := newEnv(t, "a", "b", "c")
	s := spec("rollback")
	s.Batches = []json.RawMessage{json.RawMessage(`1`)}
	r := e.create(s, "a", "b", "c")
	drive(e, r.ID, func() bool {
		return e.rollout(r.ID).Batch == 1 && e.rollout(r.ID).Batches[1].State == store.BatchVerifying
	})
	e.gen++
	e.status("c", api.StateRunning, api.StateFailed)
	want := []struct {
		summary string
		txn     []string
	}{
		{"failed 1 [done: applied] [failed: applied,applied]", []string{"rollout-r-093000"}},
		{"failed 1 [done: applied] [failed: applied,rolled_back]", []string{"connector-c", "rollout-r-093000"}},
		{"failed 1 [done: applied] [failed: skipped,rolled_back]", []string{"rollout-r-093000"}},
		{"failed 1 [done: applied] [rolled_back: skipped,rolled_back]", []string{"rollout-r-093000"}},
		{"failed 1 [done: rolled_back] [rolled_back: skipped,rolled_back]", []string{"connector-a", "rollout-r-093000"}},
		{"failed 1 [rolled_back: rolled_back] [rolled_back: skipped,rolled_back]", []string{"rollout-r-093000"}},
		{"rolled_back 1 [rolled_back: rolled_back] [rolled_back: skipped,rolled_back]", []string{"rollout-r-093000"}},
	}
	for i, w := range want {
		if i == 2 {
			e.apply(store.DeleteConnector{Name: "b"})
		}
		took, got := e.step(r.ID)
		if !took || got != w.summary || !reflect.DeepEqual(e.lastTxn(), w.txn) {
			t.Fatalf("step %d: %v %q %v, want %q %v", i, took, got, e.lastTxn(), w.summary, w.txn)
		}
	}
	if took, _ := e.step(r.ID); took {
		t.Fatal("a rolled back rollout took a step")
	}
	if e.config("a") != "1" || e.config("c") != "1" || e.config("b") != "gone" {
		t.Fatalf("configs a=%s b=%s c=%s", e.config("a"), e.config("b"), e.config("c"))
	}
}

// drive takes steps, restarting the tasks of applied connectors and
// moving the clock on when no step is due, until until holds.
func drive(e *env, id string, until func() bool) {
	e.t.Helper()
	for i := 0; !until(); i++ {
		if i > 500 {
			e.t.Fatalf("rollout stuck at %s", e.summary(id))
		}
		took, err := e.c.Step(context.Background(), id)
		if err != nil {
			continue // a failed write: the next step retries
		}
		if !took {
			e.now = e.now.Add(10 * time.Second)
			r := e.rollout(id)
			for _, b := range r.Batches {
				for _, c := range b.Connectors {
					if st, _ := e.mem.Status.Task(c.Name, 0); c.State == store.ConnectorApplied && st.Generation <= b.StartGeneration {
						e.restart(c.Name)
					}
				}
			}
		}
	}
}

// TestFailoverMidStep: the leader fails at each step of a whole rollout in
// turn — its write never commits — and a new controller takes over from
// the persisted state. Every run ends as an uninterrupted one does: done,
// every config patched, each connector's config written once, and no
// transaction that wrote a config without its rollout's record.
func TestFailoverMidStep(t *testing.T) {
	for _, onFailure := range []string{"pause", "rollback"} {
		names := []string{"a", "b", "c"}
		clean := newEnv(t, names...)
		r := clean.create(spec(onFailure), names...)
		drive(clean, r.ID, func() bool { return clean.rollout(r.ID).Finished() })
		steps := len(clean.mem.Txns)
		want := clean.summary(r.ID)
		for k := 1; k <= steps; k++ {
			t.Run(fmt.Sprintf("%s/step %d of %d", onFailure, k, steps), func(t *testing.T) {
				e := newEnv(t, names...)
				r := e.create(spec(onFailure), names...)
				calls := 0
				e.mem.Fail = failAt(k, &calls)
				drive(e, r.ID, func() bool { return calls >= k || e.rollout(r.ID).Finished() })
				e.mem.Fail = nil
				e.failover()
				drive(e, r.ID, func() bool { return e.rollout(r.ID).Finished() })
				if got := e.summary(r.ID); got != want {
					t.Fatalf("after a failover at step %d: %q, want %q", k, got, want)
				}
				writes := map[string]int{}
				for _, txn := range e.mem.Txns {
					var config, fleet bool
					for _, rec := range txn {
						if rec.Topic == store.TopicConfig {
							config = true
							writes[rec.Key]++
						}
						fleet = fleet || rec.Topic == store.TopicFleet
					}
					if config && !fleet {
						t.Fatalf("a config written without its rollout's record: %v", txn)
					}
				}
				for _, n := range names {
					if e.config(n) != "2" || writes["connector-"+n] != 1 {
						t.Fatalf("connector %s: v=%s, written %d times", n, e.config(n), writes["connector-"+n])
					}
				}
			})
		}
	}
}

// failAt fails the k-th write of the controller (the test's own status
// writes, standing for the agents', are not counted).
func failAt(k int, calls *int) func([]store.Command) error {
	return func(cmds []store.Command) error {
		if _, status := cmds[0].(store.PutConnectorStatus); status {
			return nil
		}
		if *calls++; *calls == k {
			return errors.New("deposed before the commit")
		}
		return nil
	}
}

// TestFailoverMidRollBack: the same for every step of a rollback.
func TestFailoverMidRollBack(t *testing.T) {
	names := []string{"a", "b", "c"}
	setup := func(t *testing.T) (*env, string) {
		e := newEnv(t, names...)
		s := spec("rollback")
		s.Batches = []json.RawMessage{json.RawMessage(`1`)}
		r := e.create(s, names...)
		drive(e, r.ID, func() bool {
			return e.rollout(r.ID).Batch == 1 && e.rollout(r.ID).Batches[1].State == store.BatchVerifying
		})
		e.gen++
		e.status("c", api.StateRunning, api.StateFailed)
		e.mem.Txns = nil
		return e, r.ID
	}
	clean, id := setup(t)
	drive(clean, id, func() bool { return clean.rollout(id).Finished() })
	steps, want := len(clean.mem.Txns), clean.summary(id)
	for k := 1; k <= steps; k++ {
		t.Run(fmt.Sprintf("step %d of %d", k, steps), func(t *testing.T) {
			e, id := setup(t)
			calls := 0
			e.mem.Fail = failAt(k, &calls)
			drive(e, id, func() bool { return calls >= k || e.rollout(id).Finished() })
			e.mem.Fail = nil
			e.failover()
			drive(e, id, func() bool { return e.rollout(id).Finished() })
			if got := e.summary(id); got != want {
				t.Fatalf("%q, want %q", got, want)
			}
			for _, n := range names {
				if e.config(n) != "1" {
					t.Fatalf("connector %s: v=%s after the rollback", n, e.config(n))
				}
			}
		})
	}
}

// TestCreate: batches, the recorded configs, the 400 listing invalid
// patches, the 409 of a connector in another rollout in progress, and a
// finished rollout freeing its connectors.
func TestCreate(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "a", "b", "c")
	s := spec("")
	if err := CheckSpec(&s); err != nil {
		t.Fatal(err)
	}
	r, err := e.c.Create(ctx, s, []string{"a", "b", "c"}, "ann")
	if err != nil {
		t.Fatal(err)
	}
	if e.summary(r.ID) != "running 0 [pending: pending] [pending: pending,pending]" || r.Principal != "ann" || !r.CreatedAt.Equal(t0) {
		t.Fatalf("%s %+v", e.summary(r.ID), r)
	}
	if c := r.Batches[1].Connectors[1]; c.Name != "c" || c.Before["v"] != "1" || c.After["v"] != "2" || c.After["name"] != "c" {
		t.Fatalf("connector %+v", c)
	}
	e.now = e.now.Add(time.Second)
	if _, err := e.c.Create(ctx, s, []string{"c"}, "bob"); err == nil || err.Error() != "Connector c is already in rollout "+r.ID+" (running): wait for it to end or abort it" {
		t.Fatalf("overlap: %v", err)
	}
	bad := s
	bad.Patch = map[string]*string{"bad": ptr("yes")}
	if _, err := e.c.Create(ctx, bad, []string{"a", "b"}, "bob"); err == nil ||
		err.Error() != "The patch leaves 2 of the 2 matched connectors with an invalid config; nothing was applied:\na: bad is yes\nb: bad is yes" {
		t.Fatalf("invalid: %v", err)
	}
	if _, err := e.c.Create(ctx, s, []string{"ghost"}, "bob"); err == nil || err.Error() != "Connector ghost not found" {
		t.Fatalf("missing: %v", err)
	}
	if _, err := e.c.Abort(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Create(ctx, s, []string{"c"}, "bob"); err != nil {
		t.Fatalf("a connector of an aborted rollout: %v", err)
	}
	e.mem.Fail = func([]store.Command) error { return errors.New("broker away") }
	e.now = e.now.Add(time.Second)
	if _, err := e.c.Create(ctx, s, []string{"a"}, "bob"); err == nil || err.Error() != "Failed to record rollout r-093002: broker away" {
		t.Fatalf("failed write: %v", err)
	}
}

// TestPlan: a dry run answers what Create would record — batches, configs
// before and after — and records nothing; it refuses what Create refuses.
func TestPlan(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "a", "b", "c")
	s := spec("")
	if err := CheckSpec(&s); err != nil {
		t.Fatal(err)
	}
	e.mem.Fail = func([]store.Command) error { return errors.New("a plan writes nothing") }
	p, err := e.c.Plan(ctx, s, []string{"a", "b", "c"}, "ann")
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != "" || len(p.Batches) != 2 || len(p.Batches[0].Connectors) != 1 || len(p.Batches[1].Connectors) != 2 || p.Principal != "ann" {
		t.Fatalf("plan %+v", p)
	}
	if c := p.Batches[1].Connectors[1]; c.Name != "c" || c.Before["v"] != "1" || c.After["v"] != "2" || c.State != store.BatchPending {
		t.Fatalf("connector %+v", c)
	}
	if n := len(e.c.cfg.Rollouts.Rollouts()); n != 0 {
		t.Fatalf("a plan recorded %d rollout(s)", n)
	}
	bad := s
	bad.Patch = map[string]*string{"bad": ptr("yes")}
	if _, err := e.c.Plan(ctx, bad, []string{"a"}, "bob"); err == nil ||
		err.Error() != "The patch leaves 1 of the 1 matched connectors with an invalid config; nothing was applied:\na: bad is yes" {
		t.Fatalf("invalid: %v", err)
	}
	e.mem.Fail = nil
	r, err := e.c.Create(ctx, s, []string{"c"}, "ann")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Plan(ctx, s, []string{"b", "c"}, "bob"); err == nil || err.Error() != "Connector c is already in rollout "+r.ID+" (running): wait for it to end or abort it" {
		t.Fatalf("overlap: %v", err)
	}
}

// TestPrune: a pass removes the finished rollouts beyond the newest kept,
// in one write, and leaves those in progress.
func TestPrune(t *testing.T) {
	e := newEnv(t, "a")
	for i := range keptRollouts + 2 {
		e.now = t0.Add(time.Duration(i) * time.Second)
		r := e.create(spec(""), "a")
		if _, err := e.c.Abort(context.Background(), r.ID); err != nil {
			t.Fatal(err)
		}
	}
	e.now = e.now.Add(time.Minute)
	live := e.create(spec(""), "a")
	e.mem.Txns = nil
	e.c.Pass(context.Background())
	all := e.mem.Fleet.Rollouts()
	if len(all) != keptRollouts+1 || all[0].ID != "r-093002" {
		t.Fatalf("%d rollouts kept, oldest %s", len(all), all[0].ID)
	}
	if _, ok := e.mem.Fleet.Rollout(live.ID); !ok {
		t.Fatal("the rollout in progress was removed")
	}
	deletes := 0
	for _, txn := range e.mem.Txns {
		for _, rec := range txn {
			if rec.Value == nil {
				deletes++
			}
		}
	}
	if deletes != 2 {
		t.Fatalf("%d removals", deletes)
	}
}

// TestStaleStepIsDropped: a step refused as stale (the rollout moved on
// under another writer) writes nothing and is no error.
func TestStaleStepIsDropped(t *testing.T) {
	e := newEnv(t, "a")
	r := e.create(spec(""), "a")
	e.mem.Fail = func(cmds []store.Command) error {
		e.mem.Fail = nil
		return fmt.Errorf("rollout: %w", store.ErrStale)
	}
	took, err := e.c.Step(context.Background(), r.ID)
	if took || err != nil {
		t.Fatalf("stale step: %v %v", took, err)
	}
	if got := e.summary(r.ID); got != "running 0 [pending: pending]" {
		t.Fatalf("%s", got)
	}
	if !maps.Equal(e.rollout(r.ID).Batches[0].Connectors[0].After, map[string]string{"name": "a", "v": "2"}) {
		t.Fatal("after config")
	}
}

// TestRollBackRestoresThePluginVersion: a rollback writes the before
// config with the plugin version the connector ran before the patch, not
// the before config resolved anew — which, for a version range or none,
// could be the very version that failed the health gate.
func TestRollBackRestoresThePluginVersion(t *testing.T) {
	e := newEnv(t, "a")
	before := &records.PluginPin{Class: "io.example.Source", Spec: "[1.0,4.0)", Version: "1.0.0", Java: true}
	e.apply(store.PutConnectorConfig{Name: "a", Config: map[string]string{"name": "a", "v": "1"}, Plugin: before})
	s := spec("rollback")
	s.Batches = []json.RawMessage{json.RawMessage(`"rest"`)}
	r := e.create(s, "a")
	drive(e, r.ID, func() bool { return e.rollout(r.ID).Batches[0].State == store.BatchVerifying })
	if got := e.rollout(r.ID).Batches[0].Connectors[0].BeforePlugin; !reflect.DeepEqual(got, before) {
		t.Fatalf("recorded before plugin %+v, want %+v", got, before)
	}
	// What the patch's write recorded (the leader resolves it: here, 3.0.0).
	e.apply(store.PutConnectorConfig{Name: "a", Config: map[string]string{"name": "a", "v": "2"},
		Plugin: &records.PluginPin{Class: before.Class, Spec: before.Spec, Version: "3.0.0", Java: true}})
	e.gen++
	e.status("a", api.StateRunning, api.StateFailed)
	drive(e, r.ID, func() bool { return e.rollout(r.ID).State == store.RolloutRolledBack })
	if e.config("a") != "1" || !reflect.DeepEqual(e.mem.Config.PluginPin("a"), before) {
		t.Fatalf("after the rollback: v=%s, plugin %+v, want v=1 at %+v", e.config("a"), e.mem.Config.PluginPin("a"), before)
	}
}
