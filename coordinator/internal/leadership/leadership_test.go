package leadership

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// journal records what the components did, in order.
type journal struct {
	mu  sync.Mutex
	got []string
}

func (j *journal) add(s string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.got = append(j.got, s)
}

func (j *journal) list() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.got)
}

// waitFor waits until the journal holds want exactly.
func (j *journal) waitFor(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !slices.Equal(j.list(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("journal %q, want %q", j.list(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// component records its start and stop; fail, when set, decides whether
// its start fails.
func component(j *journal, name string, fail func(term int64) bool) Component {
	return Component{Name: name, Start: func(_ context.Context, term int64) (func(), error) {
		if fail != nil && fail(term) {
			j.add(fmt.Sprintf("%s fails %d", name, term))
			return nil, errors.New("broken")
		}
		j.add(fmt.Sprintf("start %s %d", name, term))
		return func() { j.add(fmt.Sprintf("stop %s %d", name, term)) }, nil
	}}
}

// TestComponentsStartInOrderAndStopInReverse: a term starts every
// component in the order given and Revoke stops them in reverse, returning
// only once all stopped.
func TestComponentsStartInOrderAndStopInReverse(t *testing.T) {
	j := &journal{}
	l := New(nil, component(j, "writer", nil), component(j, "reconciler", nil), component(j, "fleet", nil))
	l.Establish(context.Background(), 7)
	j.waitFor(t, "start writer 7", "start reconciler 7", "start fleet 7")
	if got := l.Term(); got != 7 {
		t.Fatalf("Term() = %d while leading term 7", got)
	}
	l.Revoke(7)
	want := []string{"start writer 7", "start reconciler 7", "start fleet 7", "stop fleet 7", "stop reconciler 7", "stop writer 7"}
	if got := j.list(); !slices.Equal(got, want) {
		t.Fatalf("after Revoke: %q, want %q", got, want)
	}
	if got := l.Term(); got != 0 {
		t.Fatalf("Term() = %d after Revoke", got)
	}
}

// TestFailedStartUndoesAndRetries: a component that fails to start has
// the ones started before it stopped (in reverse), and the whole term is
// tried again until it starts.
func TestFailedStartUndoesAndRetries(t *testing.T) {
	j := &journal{}
	var mu sync.Mutex
	failures := 2
	flaky := func(int64) bool {
		mu.Lock()
		defer mu.Unlock()
		failures--
		return failures >= 0
	}
	l := New(nil, component(j, "a", nil), component(j, "b", flaky), component(j, "c", nil))
	l.minBackoff, l.maxBackoff = time.Millisecond, 2*time.Millisecond
	l.Establish(context.Background(), 3)
	j.waitFor(t,
		"start a 3", "b fails 3", "stop a 3",
		"start a 3", "b fails 3", "stop a 3",
		"start a 3", "start b 3", "start c 3")
	l.Revoke(3)
	j.waitFor(t,
		"start a 3", "b fails 3", "stop a 3",
		"start a 3", "b fails 3", "stop a 3",
		"start a 3", "start b 3", "start c 3",
		"stop c 3", "stop b 3", "stop a 3")
}

// TestRevokeDuringRetriesEndsThem: a term that keeps failing to start is
// ended by Revoke, which returns promptly and leaves nothing running.
func TestRevokeDuringRetriesEndsThem(t *testing.T) {
	j := &journal{}
	l := New(nil, component(j, "a", nil), component(j, "b", func(int64) bool { return true }))
	l.minBackoff, l.maxBackoff = time.Hour, time.Hour // a retry would wait for ever
	l.Establish(context.Background(), 4)
	j.waitFor(t, "start a 4", "b fails 4", "stop a 4")
	done := make(chan struct{})
	go func() { l.Revoke(4); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Revoke waited for the retry's backoff")
	}
	if got := j.list(); len(got) != 3 {
		t.Fatalf("something ran after Revoke: %q", got)
	}
}

// TestRevokeOfAnotherTermIsIgnored: revoking a term that is not the
// running one (a late call for an old term) stops nothing.
func TestRevokeOfAnotherTermIsIgnored(t *testing.T) {
	j := &journal{}
	l := New(nil, component(j, "a", nil))
	l.Establish(context.Background(), 5)
	j.waitFor(t, "start a 5")
	l.Revoke(4)
	time.Sleep(10 * time.Millisecond)
	if got := j.list(); len(got) != 1 {
		t.Fatalf("Revoke(4) stopped term 5: %q", got)
	}
	l.Revoke(5)
	j.waitFor(t, "start a 5", "stop a 5")
}

// TestNewTermStopsTheOld: establishing a term while another runs stops
// the old one's components before the new one's start, so no component
// runs for two terms at once.
func TestNewTermStopsTheOld(t *testing.T) {
	j := &journal{}
	l := New(nil, component(j, "a", nil), component(j, "b", nil))
	l.Establish(context.Background(), 1)
	j.waitFor(t, "start a 1", "start b 1")
	l.Establish(context.Background(), 2)
	j.waitFor(t, "start a 1", "start b 1", "stop b 1", "stop a 1", "start a 2", "start b 2")
	l.Revoke(2)
}

// TestContextEndStopsTheTerm: the elector's context ending (the process
// stops) stops the components as a Revoke would.
func TestContextEndStopsTheTerm(t *testing.T) {
	j := &journal{}
	l := New(nil, component(j, "a", nil), component(j, "b", nil))
	ctx, cancel := context.WithCancel(context.Background())
	l.Establish(ctx, 9)
	j.waitFor(t, "start a 9", "start b 9")
	cancel()
	j.waitFor(t, "start a 9", "start b 9", "stop b 9", "stop a 9")
	l.Revoke(9)
}

// TestComponentSeesTheTermsContext: a component's loop ends with the
// term; its stop waits for it.
func TestComponentSeesTheTermsContext(t *testing.T) {
	ended := make(chan struct{})
	loop := Component{Name: "loop", Start: func(ctx context.Context, _ int64) (func(), error) {
		done := make(chan struct{})
		go func() { <-ctx.Done(); close(ended); close(done) }()
		return func() { <-done }, nil
	}}
	l := New(nil, loop)
	l.Establish(context.Background(), 1)
	time.Sleep(5 * time.Millisecond)
	l.Revoke(1)
	select {
	case <-ended:
	default:
		t.Fatal("Revoke returned before the component's loop ended")
	}
}

// TestFailedStartEndsTheLoopsBeforeIt: a loop started before a component
// that fails to start sees its attempt end, so its stop returns and the
// attempt is retried rather than hanging.
func TestFailedStartEndsTheLoopsBeforeIt(t *testing.T) {
	j := &journal{}
	var mu sync.Mutex
	fails := 1
	loop := Component{Name: "loop", Start: func(ctx context.Context, term int64) (func(), error) {
		done := make(chan struct{})
		go func() { <-ctx.Done(); j.add(fmt.Sprintf("loop ended %d", term)); close(done) }()
		return func() { <-done }, nil
	}}
	flaky := component(j, "b", func(int64) bool {
		mu.Lock()
		defer mu.Unlock()
		fails--
		return fails >= 0
	})
	l := New(nil, loop, flaky)
	l.minBackoff, l.maxBackoff = time.Millisecond, time.Millisecond
	l.Establish(context.Background(), 2)
	j.waitFor(t, "b fails 2", "loop ended 2", "start b 2")
	l.Revoke(2)
	// Revoke returned: the loop ended (with the term) and b stopped.
	got := j.list()
	if len(got) != 5 || !slices.Contains(got[3:], "loop ended 2") || !slices.Contains(got[3:], "stop b 2") {
		t.Fatalf("after Revoke: %q", got)
	}
}
