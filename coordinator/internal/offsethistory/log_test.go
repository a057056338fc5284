package offsethistory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/topicscan"
	"github.com/sluice-io/sluice/coordinator/internal/topicscan/scantest"
	"github.com/sluice-io/sluice/shared/kafkautil"
)

const topic = "history"

// newLog makes a Log of topic on brokers, its topic created.
func newLog(t *testing.T, brokers string, opts ...kgo.Opt) *Log {
	t.Helper()
	l, err := New(Config{Topic: topic, KafkaOpts: append(kafkautil.ClientOpts(brokers, "history-test", nil), opts...), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	if err := l.EnsureTopic(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	return l
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// sinkChange is partition p of topic t of a sink, moved from one offset
// to another.
func sinkChange(t string, p int, from, to int64) api.OffsetChange {
	return api.OffsetChange{
		Partition: map[string]any{"kafka_topic": t, "kafka_partition": json.Number(fmt.Sprint(p))},
		From:      map[string]any{"kafka_offset": json.Number(fmt.Sprint(from))},
		To:        map[string]any{"kafka_offset": json.Number(fmt.Sprint(to))},
	}
}

// begin writes a pending entry of connector, failing the test on error.
func begin(t *testing.T, l *Log, connector string, changes ...api.OffsetChange) api.OffsetsHistoryEntry {
	t.Helper()
	e, err := l.Begin(testCtx(t), api.OffsetsHistoryEntry{Connector: connector, Type: api.TypeSink, Operation: api.HistoryAlter, Principal: "anonymous", Changes: changes})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// finished writes an entry of connector and its marker: applied when cause
// is nil.
func finished(t *testing.T, l *Log, connector string, cause error, changes ...api.OffsetChange) api.OffsetsHistoryEntry {
	t.Helper()
	e := begin(t, l, connector, changes...)
	if err := l.Finish(testCtx(t), e, cause); err != nil {
		t.Fatal(err)
	}
	return e
}

func ids(es []api.OffsetsHistoryEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

// An entry begun and finished is what List, Get and Newest show, applied,
// with every field Begin was given.
func TestBeginFinishApplied(t *testing.T) {
	l := newLog(t, scantest.Broker(t))
	ctx := testCtx(t)
	in := api.OffsetsHistoryEntry{Connector: "s", Type: api.TypeSink, Operation: api.HistoryResetTo, Detail: "to=earliest",
		Principal: "alice", Reason: "replay", Changes: []api.OffsetChange{sinkChange("t", 0, 10, 0), sinkChange("t", 1, 7, 0)}}
	e, err := l.Begin(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if e.ID == "" || e.Time.IsZero() || e.State != api.HistoryPending {
		t.Fatalf("Begin returned %+v, want an id, a time and state pending", e)
	}
	if err := l.Finish(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	want := e
	want.State = api.HistoryApplied
	h, err := l.List(ctx, "s", 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Entries) != 1 || h.More || !reflect.DeepEqual(h.Entries[0], want) {
		t.Fatalf("List: %+v, want one entry %+v", h, want)
	}
	got, ok, err := l.Get(ctx, "s", e.ID)
	if err != nil || !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("Get: %+v %v %v, want %+v", got, ok, err, want)
	}
	got, ok, err = l.Newest(ctx, "s")
	if err != nil || !ok || got.ID != e.ID {
		t.Fatalf("Newest: %s %v %v, want %s", got.ID, ok, err, e.ID)
	}
	if _, ok, _ := l.Get(ctx, "other", e.ID); ok {
		t.Fatal("Get found the entry under another connector's name")
	}
	if h, _ := l.List(ctx, "other", 0, ""); len(h.Entries) != 0 || h.Entries == nil {
		t.Fatalf("List of a connector without history: %+v, want no entries ([])", h)
	}
}

// Failed and pending entries are never shown; Pending returns exactly the
// entries without a marker, of every connector, oldest first.
func TestOnlyAppliedShownPendingListed(t *testing.T) {
	l := newLog(t, scantest.Broker(t))
	ctx := testCtx(t)
	applied := finished(t, l, "a", nil, sinkChange("t", 0, 1, 2))
	failed := finished(t, l, "a", errors.New("group not empty"), sinkChange("t", 0, 2, 3))
	open1 := begin(t, l, "a", sinkChange("t", 0, 2, 4))
	open2 := begin(t, l, "b", sinkChange("u", 0, 5, 6))
	finishedLater := begin(t, l, "b")
	open3 := begin(t, l, "a")
	if err := l.Finish(ctx, finishedLater, nil); err != nil {
		t.Fatal(err)
	}

	h, err := l.List(ctx, "a", 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(h.Entries); !slices.Equal(got, []string{applied.ID}) {
		t.Fatalf("List(a) = %v, want only the applied %s", got, applied.ID)
	}
	for _, e := range []api.OffsetsHistoryEntry{failed, open1, open3} {
		if _, ok, err := l.Get(ctx, "a", e.ID); ok || err != nil {
			t.Fatalf("Get(%s) found a %s entry (err %v)", e.ID, e.Operation, err)
		}
	}
	if n, ok, _ := l.Newest(ctx, "a"); !ok || n.ID != applied.ID {
		t.Fatalf("Newest(a) = %s, want the applied %s", n.ID, applied.ID)
	}
	pending, err := l.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(pending), []string{open1.ID, open2.ID, open3.ID}; !slices.Equal(got, want) {
		t.Fatalf("Pending = %v, want %v", got, want)
	}
	if p := pending[1]; p.Connector != "b" || p.State != api.HistoryPending || IsIncomplete(p) || !reflect.DeepEqual(p.Changes, open2.Changes) {
		t.Fatalf("pending entry %+v, want %+v", p, open2)
	}

	// The leader resolves them: nothing is left pending, and the one it
	// found applied is shown.
	for _, e := range pending {
		var cause error
		if e.ID != open1.ID {
			cause = errors.New("positions are the before ones")
		}
		if err := l.Finish(ctx, e, cause); err != nil {
			t.Fatal(err)
		}
	}
	if pending, err := l.Pending(ctx); err != nil || len(pending) != 0 {
		t.Fatalf("Pending after resolving = %v, %v; want none", ids(pending), err)
	}
	h, _ = l.List(ctx, "a", 0, "")
	if got := ids(h.Entries); !slices.Equal(got, []string{open1.ID, applied.ID}) {
		t.Fatalf("List(a) after resolving = %v, want %v", got, []string{open1.ID, applied.ID})
	}
}

// 120 entries of two connectors page newest first with limit and before,
// More saying whether another page exists.
func TestListPaging(t *testing.T) {
	l := newLog(t, scantest.Broker(t))
	ctx := testCtx(t)
	byConnector := map[string][]string{}
	for i := range 120 {
		c := fmt.Sprintf("c%d", i%2)
		e := finished(t, l, c, nil, sinkChange("t", i, int64(i), int64(i+1)))
		byConnector[c] = append(byConnector[c], e.ID)
	}
	for c, written := range byConnector {
		want := slices.Clone(written)
		slices.Reverse(want)
		var got []string
		before, pages := "", 0
		for {
			h, err := l.List(ctx, c, 25, before)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			got = append(got, ids(h.Entries)...)
			if !h.More {
				break
			}
			if pages > 5 {
				t.Fatalf("%s: still More after %d pages", c, pages)
			}
			before = h.Entries[len(h.Entries)-1].ID
		}
		if pages != 3 || !slices.Equal(got, want) {
			t.Fatalf("%s: %d pages of %v, want 3 pages of %v", c, pages, got, want)
		}
		h, _ := l.List(ctx, c, 0, "")
		if len(h.Entries) != DefaultLimit || !h.More || h.Entries[0].ID != want[0] {
			t.Fatalf("%s: default limit gave %d entries (more %v), want %d newest and more", c, len(h.Entries), h.More, DefaultLimit)
		}
		h, _ = l.List(ctx, c, 10, want[49])
		if got := ids(h.Entries); !slices.Equal(got, want[50:60]) || h.More {
			t.Fatalf("%s: before the 50th newest = %v (more %v), want the 10 oldest and no more", c, got, h.More)
		}
		if h, _ := l.List(ctx, c, 10, want[59]); len(h.Entries) != 0 || h.More {
			t.Fatalf("%s: before the oldest = %v (more %v), want nothing", c, ids(h.Entries), h.More)
		}
	}
}

// fileChanges are n changes of a file source's positions, removed.
func fileChanges(n int) []api.OffsetChange {
	changes := make([]api.OffsetChange, n)
	for i := range changes {
		changes[i] = api.OffsetChange{
			Partition: map[string]any{"filename": fmt.Sprintf("/var/data/input/file-%06d.txt", i)},
			From:      map[string]any{"position": json.Number(fmt.Sprint(i * 1000))},
			To:        nil,
		}
	}
	return changes
}

// A reset of 50 000 partitions is written as several records, each under
// the topic's max.message.bytes without compression (the broker's default,
// or a lower one set on the topic), and read back whole.
func TestLargeEntryRoundTrips(t *testing.T) {
	for _, tt := range []struct {
		name       string
		maxMessage string // the topic's max.message.bytes; empty: the default
		most       int
	}{
		{"broker default", "", maxRecordBytes},
		{"topic max.message.bytes 300000", "300000", 300_000 - batchOverhead},
	} {
		t.Run(tt.name, func(t *testing.T) {
			brokers := scantest.Broker(t)
			if tt.maxMessage != "" {
				createTopic(t, brokers, map[string]string{"max.message.bytes": tt.maxMessage})
			}
			l := newLog(t, brokers, kgo.ProducerBatchCompression(kgo.NoCompression()))
			ctx := testCtx(t)
			changes := fileChanges(50_000)
			e := finished(t, l, "big", nil, changes...)

			values := rawValues(t, brokers)
			if len(values) < 3 {
				t.Fatalf("%d records for 50 000 changes, want several parts and a marker", len(values))
			}
			for i, v := range values {
				if len(v) > tt.most {
					t.Fatalf("record %d holds %d bytes, more than %d", i, len(v), tt.most)
				}
			}
			got, ok, err := l.Get(ctx, "big", e.ID)
			if err != nil || !ok {
				t.Fatalf("Get: %v %v", ok, err)
			}
			if len(got.Changes) != len(changes) || !reflect.DeepEqual(got.Changes, changes) {
				t.Fatalf("read back %d changes, not the %d written in order", len(got.Changes), len(changes))
			}
			h, err := l.List(ctx, "big", 0, "")
			if err != nil || len(h.Entries) != 1 || len(h.Entries[0].Changes) != len(changes) {
				t.Fatalf("List: %d entries, %v", len(h.Entries), err)
			}
		})
	}
}

// A pending entry the broker refuses fails Begin, and Begin marks it
// failed itself: nothing is left pending for the next leader.
func TestRefusedBeginMarkedFailed(t *testing.T) {
	brokers := scantest.Broker(t)
	createTopic(t, brokers, map[string]string{"max.message.bytes": "300000"})
	l := newLog(t, brokers, kgo.ProducerBatchCompression(kgo.NoCompression()))
	// Someone lowers the limit after the coordinator read it.
	alterTopic(t, l, "max.message.bytes", "100000")
	ctx := testCtx(t)
	if _, err := l.Begin(ctx, api.OffsetsHistoryEntry{Connector: "c", Operation: api.HistoryReset, Changes: fileChanges(5000)}); err == nil {
		t.Fatal("Begin of records larger than the topic takes succeeded")
	}
	l.Close() // waits for the failed marker
	next := newLog(t, brokers)
	if pending, err := next.Pending(ctx); err != nil || len(pending) != 0 {
		t.Fatalf("Pending = %v, %v; want nothing left", ids(pending), err)
	}
	values := rawValues(t, brokers)
	var m marker
	if len(values) == 0 || json.Unmarshal(values[len(values)-1], &m) != nil || m.State != api.HistoryFailed || !strings.HasPrefix(m.Error, "not begun: ") {
		t.Fatalf("last record %q, want a failed marker saying the entry was not begun", values[len(values)-1:])
	}
}

// createTopic makes the history topic as an operator might, with cfgs.
func createTopic(t *testing.T, brokers string, cfgs map[string]string) {
	t.Helper()
	cl, err := kgo.NewClient(kafkautil.ClientOpts(brokers, "history-admin", nil)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := kafkautil.EnsureTopics(testCtx(t), kadm.NewClient(cl), kafkautil.TopicSpec{Name: topic, Partitions: 1, Configs: cfgs}); err != nil {
		t.Fatal(err)
	}
}

// alterTopic sets one config of the history topic.
func alterTopic(t *testing.T, l *Log, key, value string) {
	t.Helper()
	resp, err := kadm.NewClient(l.cl).AlterTopicConfigs(testCtx(t), []kadm.AlterConfig{{Op: kadm.SetConfig, Name: key, Value: &value}}, topic)
	if err == nil {
		_, err = resp.On(topic, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// rawValues are the values of every record of the topic, read with
// topicscan as any reader would.
func rawValues(t *testing.T, brokers string) [][]byte {
	t.Helper()
	opts := kafkautil.ClientOpts(brokers, "history-raw", nil)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	spans, _, err := topicscan.Spans(testCtx(t), kadm.NewClient(cl), topic, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var values [][]byte
	if err := topicscan.Read(testCtx(t), opts, topic, spans, func(r *kgo.Record) { values = append(values, r.Value) }); err != nil {
		t.Fatal(err)
	}
	return values
}

// A crash between the parts of an entry leaves it incomplete: Pending
// returns it with the changes of the parts written and says it is
// incomplete; nothing else shows it, even with a marker.
func TestIncompleteEntry(t *testing.T) {
	l := newLog(t, scantest.Broker(t))
	ctx := testCtx(t)
	changes := make([]api.OffsetChange, 30_000)
	for i := range changes {
		changes[i] = sinkChange("a-topic-with-a-rather-long-name-to-fill-records", i, int64(i), 0)
	}
	e := api.OffsetsHistoryEntry{ID: newID(time.Now()), Time: time.Now().UTC(), Connector: "s", Type: api.TypeSink,
		Operation: api.HistoryReset, Principal: "anonymous", State: api.HistoryPending, Changes: changes}
	parts, err := encodeParts(e, maxRecordBytes)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) < 3 {
		t.Fatalf("%d parts, want at least 3", len(parts))
	}
	// Parts 1 and 3 reach the topic, then the coordinator dies.
	for _, p := range []int{1, 3} {
		if err := l.cl.ProduceSync(ctx, &kgo.Record{Key: []byte("s"), Value: parts[p-1]}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	complete := begin(t, l, "s", sinkChange("t", 0, 1, 2))

	pending, err := l.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(pending); !slices.Equal(got, []string{e.ID, complete.ID}) {
		t.Fatalf("Pending = %v, want the incomplete %s and the complete %s", got, e.ID, complete.ID)
	}
	inc := pending[0]
	var want []api.OffsetChange
	for _, p := range []int{0, 2} {
		var r record
		if err := json.Unmarshal(parts[p], &r); err != nil {
			t.Fatal(err)
		}
		var cs []api.OffsetChange
		dec := json.NewDecoder(bytes.NewReader(r.Changes))
		dec.UseNumber()
		if err := dec.Decode(&cs); err != nil {
			t.Fatal(err)
		}
		want = append(want, cs...)
	}
	wantErr := fmt.Sprintf("incomplete: read parts [1 3] of %d", len(parts))
	if !IsIncomplete(inc) || inc.Error != wantErr || inc.Operation != api.HistoryReset || !reflect.DeepEqual(inc.Changes, want) {
		t.Fatalf("incomplete entry: error %q, %d changes, operation %q; want error %q and the %d changes of parts 1 and 3",
			inc.Error, len(inc.Changes), inc.Operation, wantErr, len(want))
	}
	if IsIncomplete(pending[1]) {
		t.Fatalf("the complete pending entry reads incomplete: %q", pending[1].Error)
	}
	// A marker (which the protocol never writes for it) still does not
	// make an incomplete entry visible.
	if err := l.Finish(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := l.Get(ctx, "s", e.ID); ok || err != nil {
		t.Fatalf("Get found an incomplete entry (err %v)", err)
	}
}

// Ids made one after another sort in the order they were made, however
// fast, and Begin's ids too.
func TestIDsSortInCreationOrder(t *testing.T) {
	now := time.Now()
	prev := newID(now)
	for i := range 5000 {
		id := newID(now) // the same millisecond every time
		if id <= prev {
			t.Fatalf("id %d %s does not sort after %s", i, id, prev)
		}
		prev = id
	}
	if !ValidID(prev) {
		t.Fatalf("id %s: want 13 digits, '-', 16 hex digits", prev)
	}
	for _, bad := range []string{"", "1796119200123", "1796119200123-c98a176d316d239", "1796119200123-C98A176D316D2399",
		"179611920012x-c98a176d316d2399", "1796119200123_c98a176d316d2399", "1796119200123-c98a176d316d2399-"} {
		if ValidID(bad) {
			t.Fatalf("ValidID(%q) = true", bad)
		}
	}
	l := newLog(t, scantest.Broker(t))
	var made []string
	for range 20 {
		made = append(made, finished(t, l, "c", nil).ID)
	}
	if !slices.IsSorted(made) || made[0] <= prev {
		t.Fatalf("Begin's ids %v are not in creation order (after %s)", made, prev)
	}
}

// The history is in the topic, not in the Log: a connector deleted long
// ago, read by a new leader's Log, still has its entries.
func TestHistoryOutlivesConnector(t *testing.T) {
	brokers := scantest.Broker(t)
	first := newLog(t, brokers)
	gone := finished(t, first, "gone", nil, sinkChange("t", 0, 5, 0))
	finished(t, first, "other", nil)
	first.Close()

	next := newLog(t, brokers)
	ctx := testCtx(t)
	got, ok, err := next.Newest(ctx, "gone")
	if err != nil || !ok || got.ID != gone.ID || !reflect.DeepEqual(got.Changes, gone.Changes) {
		t.Fatalf("Newest(gone) = %+v %v %v, want %+v", got, ok, err, gone)
	}
}

// EnsureTopic creates one partition, delete policy, the configured
// retention.
func TestEnsureTopicCreates(t *testing.T) {
	brokers := scantest.Broker(t)
	l, err := New(Config{Retention: 7 * 24 * time.Hour, KafkaOpts: kafkautil.ClientOpts(brokers, "history-test", nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := testCtx(t)
	if err := l.EnsureTopic(ctx); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(l.cl)
	details, err := adm.ListTopics(ctx, DefaultTopic)
	if err != nil || len(details[DefaultTopic].Partitions) != 1 {
		t.Fatalf("topic %s: %v partitions, %v; want 1", DefaultTopic, details[DefaultTopic].Partitions, err)
	}
	cfgs, err := adm.DescribeTopicConfigs(ctx, DefaultTopic)
	if err != nil || len(cfgs) != 1 {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range cfgs[0].Configs {
		got[c.Key] = c.MaybeValue()
	}
	if got["cleanup.policy"] != "delete" || got["retention.ms"] != "604800000" {
		t.Fatalf("cleanup.policy %q retention.ms %q, want delete and 604800000", got["cleanup.policy"], got["retention.ms"])
	}
}

// A compacted history topic made by someone else is kept, with a warning.
func TestEnsureTopicWarnsCompacted(t *testing.T) {
	brokers := scantest.Broker(t)
	var logged strings.Builder
	l, err := New(Config{Topic: topic, KafkaOpts: kafkautil.ClientOpts(brokers, "history-test", nil), Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := testCtx(t)
	if err := kafkautil.EnsureTopics(ctx, kadm.NewClient(l.cl), kafkautil.TopicSpec{Name: topic, Partitions: 1, Compacted: true}); err != nil {
		t.Fatal(err)
	}
	if err := l.EnsureTopic(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logged.String(), "the offsets history topic is compacted") {
		t.Fatalf("logged %q, want a warning about compaction", logged.String())
	}
}

// Without a broker, Begin fails within its context, so the caller
// refuses the change; Finish fails too.
func TestBeginFailsWithoutBroker(t *testing.T) {
	l, err := New(Config{Topic: topic, KafkaOpts: kafkautil.ClientOpts(scantest.Unreachable(t), "history-test", nil), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := l.Begin(ctx, api.OffsetsHistoryEntry{Connector: "c", Operation: api.HistoryAlter}); err == nil || !strings.Contains(err.Error(), "write pending entry") {
		t.Fatalf("Begin without a broker: %v, want an error", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := l.Finish(ctx, api.OffsetsHistoryEntry{ID: "1-a", Connector: "c"}, nil); err == nil {
		t.Fatal("Finish without a broker succeeded")
	}
	if _, err := l.Begin(context.Background(), api.OffsetsHistoryEntry{}); err == nil {
		t.Fatal("Begin of an entry without connector succeeded")
	}
}

// One change larger than a record holds cannot be split: Begin refuses
// the entry before writing anything.
func TestBeginRefusesOversizedChange(t *testing.T) {
	brokers := scantest.Broker(t)
	l := newLog(t, brokers)
	huge := api.OffsetChange{Partition: map[string]any{"filename": strings.Repeat("x", maxRecordBytes)}}
	_, err := l.Begin(testCtx(t), api.OffsetsHistoryEntry{Connector: "c", Changes: []api.OffsetChange{huge}})
	if err == nil || !strings.Contains(err.Error(), "more than a record of the topic holds") {
		t.Fatalf("Begin of a change of %d bytes: %v, want it refused", maxRecordBytes, err)
	}
	if values := rawValues(t, brokers); len(values) != 0 {
		t.Fatalf("%d records written for a refused entry", len(values))
	}
}

// TestNumbersKeepTheirText: positions come back from the topic exactly as
// written — a sink offset of a million, an int64 source offset above 2^53,
// a decimal — so that an undo writes them back unchanged.
func TestNumbersKeepTheirText(t *testing.T) {
	l := newLog(t, scantest.Broker(t))
	changes := []api.OffsetChange{
		sinkChange("t", 0, 999_999, 1_234_567),
		{Partition: map[string]any{"filename": "a"}, To: map[string]any{"position": json.Number("9007199254740993"), "ratio": json.Number("5.0")}},
	}
	e := finished(t, l, "nums", nil, changes...)
	got, ok, err := l.Get(testCtx(t), "nums", e.ID)
	if err != nil || !ok {
		t.Fatalf("Get: %v %v", ok, err)
	}
	if g, w := fmt.Sprint(got.Changes), fmt.Sprint(changes); g != w {
		t.Fatalf("changes read back %s, want %s", g, w)
	}
}

// TestIDsSortAfterObservedOnes: an id read from the topic that is ahead of
// this process's clock (another coordinator's clock ran ahead) moves the
// next ids past it.
func TestIDsSortAfterObservedOnes(t *testing.T) {
	ahead := fmt.Sprintf("%013d-%016x", time.Now().Add(time.Hour).UnixMilli(), 1)
	observeID(ahead)
	if id := newID(time.Now()); id <= ahead {
		t.Fatalf("id %s made after observing %s sorts before it", id, ahead)
	}
}
