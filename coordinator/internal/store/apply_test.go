package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/records"
)

// openStores follows the three topics of kc from their start, as a
// coordinator does.
func openStores(t *testing.T, ctx context.Context, opts []kgo.Opt) *Stores {
	t.Helper()
	cfg, err := NewConfigStore("configs", nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	st, err := NewStatusStore("status", opts...)
	if err != nil {
		t.Fatal(err)
	}
	fl, err := NewFleetStore("fleet", nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []interface {
		Start(context.Context) error
		Close()
	}{cfg, st, fl} {
		t.Cleanup(s.Close)
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return NewStores(cfg, st, fl)
}

// TestStoresApplyAcrossTopics: one Apply of config, status and fleet
// commands is one transaction — applied by all three stores when Apply
// returns, and by a second coordinator reading from the start; a commit
// that fails, or a stale command, makes none of it visible anywhere.
func TestStoresApplyAcrossTopics(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "configs", "status", "fleet"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	opts := kafkautil.ClientOpts(kc.ListenAddrs()[0], "apply-test", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := openStores(t, ctx, opts)
	open := OpenWindow{Window: Window{ID: "w1", State: api.StateStopped, Connectors: []WindowConnector{{Name: "c", Previous: api.StateRunning}}}}
	if err := s.Apply(ctx, StopConnector{Name: "c"}, open); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("apply without the leader writer: %v", err)
	}
	w, err := NewWriter(ctx, "apply-test-leader", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	var steps []string
	s.SetFaults(faults.Func(func(_ context.Context, at faults.Point, keys any) error {
		steps = append(steps, string(at)+" "+strings.Join(keys.([]string), " "))
		return nil
	}))
	s.SetWriter(w)
	if err := s.Apply(ctx, CreateConnector{Name: "c", Config: map[string]string{"name": "c"}}); err != nil {
		t.Fatal(err)
	}

	// A failed commit: the fault point aborts the transaction.
	w.w.BeforeCommit = func(context.Context) error { return errors.New("deposed") }
	err = s.Apply(ctx, StopConnector{Name: "c"}, PutConnectorStatus{Name: "c", State: "STOPPED", Worker: "w"}, open)
	if err == nil || !strings.Contains(err.Error(), "write to configs and status and fleet") {
		t.Fatalf("apply with a failed commit: %v", err)
	}
	w.w.BeforeCommit = nil
	if c, _ := s.Config.State.Get("c"); c.TargetState != records.TargetStarted {
		t.Fatalf("target state %s after an aborted write", c.TargetState)
	}
	if _, ok := s.Fleet.State.Window("w1"); ok {
		t.Fatal("window applied after an aborted write")
	}
	// A stale fleet command: nothing of the call is written.
	err = s.Apply(ctx, StopConnector{Name: "c"}, PauseRollout{ID: "nope", At: time.Now()})
	if !errors.Is(err, ErrStale) {
		t.Fatalf("stale command: %v", err)
	}
	if c, _ := s.Config.State.Get("c"); c.TargetState != records.TargetStarted {
		t.Fatal("the config command of a call with a stale command was written")
	}

	if err := s.Apply(ctx, StopConnector{Name: "c"}, PutConnectorStatus{Name: "c", State: "STOPPED", Worker: "w"}, open); err != nil {
		t.Fatal(err)
	}
	// Applied by every store of this coordinator on return…
	check := func(who string, s *Stores) {
		t.Helper()
		if c, _ := s.Config.State.Get("c"); c.TargetState != records.TargetStopped {
			t.Fatalf("%s: target state %s", who, c.TargetState)
		}
		if st, _ := s.Status.State.Connector("c"); st.State != "STOPPED" {
			t.Fatalf("%s: status %+v", who, st)
		}
		if got, ok := s.Fleet.State.Window("w1"); !ok || got.Connectors[0].Previous != api.StateRunning {
			t.Fatalf("%s: window %+v %v", who, got, ok)
		}
	}
	check("leader", s)
	// …and by another that reads the topics from their start (the aborted
	// transaction's records are skipped).
	check("follower", openStores(t, ctx, opts))
	if len(steps) != 1 || steps[0] != "store.commit commit-c target-state-c maintenance-w1" {
		t.Fatalf("fault steps %q", steps)
	}
}

// TestFencedWriteRenewed: a write that finds the leader writer fenced (a
// stray producer of its id bumped the epoch) asks the writer's renew for a
// replacement and lands through it, once; without a replacement it fails
// as fenced and nothing is applied.
func TestFencedWriteRenewed(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "configs", "status", "fleet"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	opts := kafkautil.ClientOpts(kc.ListenAddrs()[0], "renew-test", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := openStores(t, ctx, opts)
	const txnID = "renew-test-leader"
	open := func() *Writer {
		t.Helper()
		w, err := NewWriter(ctx, txnID, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Close)
		return w
	}
	first := open()
	var renewed []*Writer
	first.SetRenew(func(context.Context) *Writer {
		nw := open() // fences whatever holds the id, as the herder's re-fence does
		renewed = append(renewed, nw)
		s.SetWriter(nw)
		return nw
	})
	s.SetWriter(first)
	if err := s.Apply(ctx, CreateConnector{Name: "c", Config: map[string]string{"name": "c"}}); err != nil {
		t.Fatal(err)
	}

	open() // the stray producer: first is fenced from here on
	if err := s.Apply(ctx, StopConnector{Name: "c"}); err != nil {
		t.Fatalf("write through a fenced writer with a renew: %v", err)
	}
	if len(renewed) != 1 {
		t.Fatalf("renewed %d times, want 1", len(renewed))
	}
	if c, _ := s.Config.State.Get("c"); c.TargetState != records.TargetStopped {
		t.Fatalf("target state %s after the renewed write", c.TargetState)
	}

	// No replacement (this coordinator no longer leads): the write fails as
	// fenced and changes nothing.
	renewed[0].SetRenew(func(context.Context) *Writer { return nil })
	open()
	err = s.Apply(ctx, SetTargetState{Name: "c", State: records.TargetPaused})
	if !errors.Is(err, kafkautil.ErrFenced) {
		t.Fatalf("write through a fenced writer without a replacement: %v", err)
	}
	if c, _ := s.Config.State.Get("c"); c.TargetState != records.TargetStopped {
		t.Fatalf("target state %s after a fenced write", c.TargetState)
	}
}
