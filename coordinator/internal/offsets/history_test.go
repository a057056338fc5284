package offsets

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"
)

// srcEntry is an applied alter of source connector name from from to to,
// in partition "a".
func srcEntry(name string, from, to map[string]any) api.OffsetsHistoryEntry {
	return api.OffsetsHistoryEntry{Connector: name, Type: api.TypeSource, Operation: api.HistoryAlter,
		Changes: []api.OffsetChange{{Partition: part("a"), From: from, To: to}}}
}

func TestHistoryOff(t *testing.T) {
	w := newWorld(t, stopped("src", srcClass))
	cfg := w.config()
	cfg.History = nil
	svc := New(cfg)
	_, err := svc.OffsetsHistory(ctx, "src", 10, "")
	wantCode(t, err, api.CodeNotFound, "The offsets history is not kept by this coordinator")
	_, err = svc.UndoOffsets(ctx, "src", "e1", false, false)
	wantCode(t, err, api.CodeNotFound, "The offsets history is not kept by this coordinator")
	// Changes go on without one.
	if _, err := svc.AlterOffsets(ctx, "src", []api.ConnectorOffset{{Partition: part("a"), Offset: off(1)}}); err != nil {
		t.Fatal(err)
	}
}

func TestHistoryReads(t *testing.T) {
	w := newWorld(t)
	got, err := w.svc.OffsetsHistory(ctx, "src", 10, "")
	if err != nil || got.Entries == nil {
		t.Fatalf("empty history %+v, %v: want an empty list", got, err)
	}
	_, err = w.svc.OffsetsHistoryEntry(ctx, "src", "")
	wantCode(t, err, api.CodeNotFound, "Connector src has no offsets history")
	_, err = w.svc.OffsetsHistoryEntry(ctx, "src", "e9")
	wantCode(t, err, api.CodeNotFound, "No offsets history entry e9 for connector src")
	e := w.hist.add(srcEntry("src", off(1), off(2)))
	if got, err := w.svc.OffsetsHistoryEntry(ctx, "src", ""); err != nil || got.ID != e.ID {
		t.Fatalf("newest %+v, %v", got, err)
	}
}

// TestUndo: an undo writes back the positions its entry moved from, and
// is refused (409, naming the partitions) once they moved since — by a
// later entry or by the connector's tasks — unless forced.
func TestUndo(t *testing.T) {
	for _, tc := range []struct {
		name     string
		later    bool           // a later entry changed partition a
		current  map[string]any // partition a's position now
		force    bool
		conflict bool
	}{
		{name: "unchanged", current: off(2)},
		{name: "moved by its tasks", current: off(7), conflict: true},
		{name: "changed by a later entry", later: true, current: off(2), conflict: true},
		{name: "forced", later: true, current: off(7), force: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, stopped("src", srcClass))
			e := w.hist.add(srcEntry("src", off(1), off(2)))
			if tc.later {
				w.hist.add(srcEntry("src", off(2), off(2)))
			}
			w.kafka.setSource("src", api.ConnectorOffset{Partition: part("a"), Offset: tc.current})
			got, err := w.svc.UndoOffsets(ctx, "src", e.ID, tc.force, false)
			if tc.conflict {
				wantCode(t, err, api.CodeConflict, "The positions of connector src changed after entry "+e.ID+", in partitions "+`{"file":"a"}`)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			last := w.hist.entries[len(w.hist.entries)-1]
			if got.HistoryID != last.ID || last.Operation != api.HistoryUndo || last.Undoes != e.ID || last.Detail != "undo of alter "+e.ID ||
				!sameOffset(last.Changes[0].To, off(1)) {
				t.Fatalf("answer %+v, entry %+v", got, last)
			}
		})
	}
}

// TestUndoComputation: the change of an undo, and of a restore before or
// after an entry, from the entry alone.
func TestUndoComputation(t *testing.T) {
	e := api.OffsetsHistoryEntry{ID: "e1", Connector: "old", Operation: api.HistoryReset, Changes: []api.OffsetChange{
		{Partition: part("a"), From: off(1)},
		{Partition: part("b"), To: off(5)},
	}}
	u := undoChange(e, true)
	if u.Op != wire.OffsetsOpAlter || !u.DryRun || u.Meta.Undoes != "e1" || !sameOffset(u.Entries[0].Offset, off(1)) || u.Entries[1].Offset != nil {
		t.Fatalf("undo %+v", u)
	}
	r := restoreChange(e, false, false)
	if r.Meta.FromEntry != "e1" || r.Meta.Detail != "positions after reset e1 of connector old" || r.Entries[0].Offset != nil || !sameOffset(r.Entries[1].Offset, off(5)) {
		t.Fatalf("restore after %+v", r)
	}
	if r := restoreChange(e, true, false); r.Meta.Detail != "positions before reset e1 of connector old" {
		t.Fatalf("restore before %+v", r)
	}
}

func TestRestoreValidation(t *testing.T) {
	for _, tc := range []struct {
		req    api.OffsetsRestoreRequest
		before bool
		msg    string
	}{
		{req: api.OffsetsRestoreRequest{From: " "}, msg: `Give "from": the connector whose offsets history holds the positions`},
		{req: api.OffsetsRestoreRequest{From: "a", Positions: "during"}, msg: "Invalid positions 'during': must be"},
		{req: api.OffsetsRestoreRequest{From: "a"}, before: true},
		{req: api.OffsetsRestoreRequest{From: "a", Positions: "before"}, before: true},
		{req: api.OffsetsRestoreRequest{From: "a", Positions: "after"}},
	} {
		before, err := checkRestore(tc.req)
		if tc.msg != "" {
			wantCode(t, err, api.CodeBadRequest, tc.msg)
			continue
		}
		if err != nil || before != tc.before {
			t.Errorf("%+v: before %v, %v", tc.req, before, err)
		}
	}
}

// TestRestore: a deleted connector's positions reach a new one; a sink's
// entry does not fit a source.
func TestRestore(t *testing.T) {
	w := newWorld(t, stopped("new", srcClass))
	e := w.hist.add(srcEntry("gone", off(1), off(2)))
	got, err := w.svc.RestoreOffsets(ctx, "new", api.OffsetsRestoreRequest{From: "gone", Positions: "after"})
	if err != nil {
		t.Fatal(err)
	}
	last := w.hist.entries[len(w.hist.entries)-1]
	if got.HistoryID != last.ID || last.Connector != "new" || last.FromEntry != e.ID || !sameOffset(last.Changes[0].To, off(2)) {
		t.Fatalf("answer %+v, entry %+v", got, last)
	}
	sink := w.hist.add(api.OffsetsHistoryEntry{Connector: "s", Type: api.TypeSink, Operation: api.HistoryAlter})
	_, err = w.svc.RestoreOffsets(ctx, "new", api.OffsetsRestoreRequest{From: "s"})
	wantCode(t, err, api.CodeBadRequest, "Entry "+sink.ID+" holds the positions of a sink connector (s); connector new is a source connector")
	if _, ok := w.locks.TryLock("new"); !ok {
		t.Fatal("a refused restore kept the connector locked")
	}
}

// TestSettle: an entry is marked by the change's outcome, or, when the
// change failed, by what the positions show.
func TestSettle(t *testing.T) {
	cause := errors.New("agent silent past its deadline")
	for _, tc := range []struct {
		name    string
		cause   error
		current map[string]any
		readErr error
		want    string // state
	}{
		{name: "made", current: off(2), want: api.HistoryApplied},
		{name: "failed, but written", cause: cause, current: off(2), want: api.HistoryApplied},
		{name: "failed", cause: cause, current: off(1), want: api.HistoryFailed},
		{name: "unreadable", cause: cause, readErr: errors.New("down"), want: api.HistoryPending},
	} {
		w := newWorld(t)
		e, _ := w.svc.History().Begin(ctx, "src", api.TypeSource, "", "", Meta{Operation: api.HistoryAlter}, srcEntry("src", off(1), off(2)).Changes)
		w.kafka.setSource("src", api.ConnectorOffset{Partition: part("a"), Offset: tc.current})
		w.kafka.err = tc.readErr
		w.svc.History().Settle(ctx, e, "source", tc.cause)
		if got := w.hist.entries[0].State; got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestResolvePending: the entries a previous leader left pending are
// marked by the positions, once as long as an agent may still be at work
// has passed — their connectors locked meanwhile, others not.
func TestResolvePending(t *testing.T) {
	w := newWorld(t, stopped("snk", sinkClass))
	pend := func(e api.OffsetsHistoryEntry) api.OffsetsHistoryEntry {
		e, _ = w.hist.Begin(ctx, e)
		return e
	}
	applied := pend(srcEntry("a", off(1), off(2)))
	notMade := pend(srcEntry("b", off(1), off(2)))
	partial := pend(api.OffsetsHistoryEntry{Connector: "c", Type: api.TypeSource, Error: "the entry's parts are not all there"})
	sink := pend(api.OffsetsHistoryEntry{Connector: "snk", Type: api.TypeSink, Changes: []api.OffsetChange{
		{Partition: map[string]any{"kafka_topic": "t", "kafka_partition": int32(0)}, To: map[string]any{"kafka_offset": 9}}}})
	w.kafka.setSource("a", api.ConnectorOffset{Partition: part("a"), Offset: off(2)})
	w.kafka.setSource("b", api.ConnectorOffset{Partition: part("a"), Offset: off(1)})
	w.kafka.groups["connect-snk"] = map[string]map[int32]int64{"t": {0: 9}}

	done := make(chan struct{})
	go func() { defer close(done); w.svc.History().ResolvePending(ctx) }()
	w.clock.awaitWaiter(t)
	if got := w.clock.asked[len(w.clock.asked)-1]; got != 10*time.Second {
		t.Fatalf("waited %v, want the agent lease (10s, under the 60s call bound)", got)
	}
	for _, name := range []string{"a", "b", "c", "snk"} {
		if _, ok := w.locks.TryLock(name); ok {
			t.Fatalf("%s was not locked while its entry waited", name)
		}
	}
	if unlock, ok := w.locks.TryLock("other"); !ok {
		t.Fatal("a connector without a pending entry was locked")
	} else {
		unlock()
	}
	if w.kafka.reads != 0 {
		t.Fatal("positions were read before the wait ended")
	}
	w.clock.Advance(10*time.Second - time.Nanosecond)
	select {
	case <-done:
		t.Fatal("resolved before the wait ended")
	case <-time.After(20 * time.Millisecond):
	}
	w.clock.Advance(time.Nanosecond)
	<-done
	want := map[string]error{applied.ID: nil, notMade.ID: errNotMade, partial.ID: errNotMade, sink.ID: nil}
	for id, cause := range want {
		got, ok := w.hist.finished[id]
		if !ok || got != cause {
			t.Errorf("entry %s: marked %v (%v), want %v", id, got, ok, cause)
		}
	}
	if _, ok := w.locks.TryLock("a"); !ok {
		t.Fatal("a stayed locked after the resolution")
	}
}

// TestResolvePendingEndsWithTheTerm: a term that ends during the wait
// marks nothing, and releases the locks.
func TestResolvePendingEndsWithTheTerm(t *testing.T) {
	w := newWorld(t)
	_, _ = w.hist.Begin(ctx, srcEntry("a", off(1), off(2)))
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); w.svc.History().ResolvePending(cctx) }()
	w.clock.awaitWaiter(t)
	cancel()
	<-done
	if len(w.hist.finished) != 0 {
		t.Fatalf("marked %v after the term ended", w.hist.finished)
	}
	if _, ok := w.locks.TryLock("a"); !ok {
		t.Fatal("a stayed locked")
	}
}

// TestResolvePendingUnreadable: an entry whose positions cannot be read
// stays pending for the next leader.
func TestResolvePendingUnreadable(t *testing.T) {
	w := newWorld(t)
	_, _ = w.hist.Begin(ctx, srcEntry("a", off(1), off(2)))
	w.kafka.err = errors.New("down")
	done := make(chan struct{})
	go func() { defer close(done); w.svc.History().ResolvePending(ctx) }()
	w.clock.awaitWaiter(t)
	w.clock.Advance(time.Minute)
	<-done
	if len(w.hist.finished) != 0 || w.hist.entries[0].State != api.HistoryPending {
		t.Fatalf("an unreadable entry was marked: %+v", w.hist.entries[0])
	}
}
