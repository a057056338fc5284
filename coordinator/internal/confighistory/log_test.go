package confighistory

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/topicscan/scantest"
	"github.com/sluice-io/sluice/shared/kafkautil"
)

func newLog(t *testing.T) *Log {
	t.Helper()
	l, err := New(Config{Topic: "config-history", KafkaOpts: kafkautil.ClientOpts(scantest.Broker(t), "config-history-test", nil), Logger: slog.New(slog.DiscardHandler)})
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

func entry(connector, op string, before, after map[string]string) api.ConfigHistoryEntry {
	return api.ConfigHistoryEntry{ConfigHistorySummary: api.ConfigHistorySummary{Connector: connector, Operation: op, Principal: "ada", Diff: Diff(before, after)},
		Before: before, After: after}
}

// TestAppendListGet: entries come back newest first with their ids, only
// those of the connector asked for, paged by before and limit; Get returns
// one whole, and nothing for another connector's id.
func TestAppendListGet(t *testing.T) {
	l := newLog(t)
	var ids []string
	for i := range 5 {
		w, err := l.Append(testCtx(t), entry("a", api.ConfigPut, map[string]string{"n": fmt.Sprint(i)}, map[string]string{"n": fmt.Sprint(i + 1)}),
			entry("b", api.ConfigCreate, nil, map[string]string{"k": "v"}))
		if err != nil {
			t.Fatal(err)
		}
		if w[0].ID == "" || w[0].ID >= w[1].ID || w[0].Time.IsZero() {
			t.Fatalf("written %+v", w)
		}
		ids = append(ids, w[0].ID)
	}
	h, err := l.List(testCtx(t), "a", 2, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Entries) != 2 || h.Entries[0].ID != ids[4] || h.Entries[1].ID != ids[3] || !h.More {
		t.Fatalf("first page %+v", h)
	}
	h, err = l.List(testCtx(t), "a", 10, h.Entries[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Entries) != 3 || h.Entries[2].ID != ids[0] || h.More {
		t.Fatalf("second page %+v", h)
	}
	e, ok, err := l.Get(testCtx(t), "a", ids[2])
	if err != nil || !ok || e.Before["n"] != "2" || e.After["n"] != "3" || e.Diff.Changed[0] != "n" {
		t.Fatalf("Get: %+v %v %v", e, ok, err)
	}
	if _, ok, _ := l.Get(testCtx(t), "b", ids[2]); ok {
		t.Fatal("Get found connector a's entry under b")
	}
	if h, _ := l.List(testCtx(t), "nobody", 0, ""); len(h.Entries) != 0 || h.Entries == nil {
		t.Fatalf("history of an unknown connector %+v", h)
	}
}

// TestMaxPerConnector: only the newest MaxPerConnector entries of a
// connector are seen; an older one is not found.
func TestMaxPerConnector(t *testing.T) {
	l := newLog(t)
	var all []api.ConfigHistoryEntry
	for i := range MaxPerConnector + 5 {
		all = append(all, entry("a", api.ConfigPatch, map[string]string{"i": fmt.Sprint(i)}, map[string]string{"i": fmt.Sprint(i + 1)}))
	}
	written, err := l.Append(testCtx(t), all...)
	if err != nil {
		t.Fatal(err)
	}
	h, err := l.List(testCtx(t), "a", MaxLimit, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Entries) != MaxPerConnector || h.More || h.Entries[0].ID != written[len(written)-1].ID {
		t.Fatalf("%d entries (more %v), want the newest %d", len(h.Entries), h.More, MaxPerConnector)
	}
	if _, ok, _ := l.Get(testCtx(t), "a", written[4].ID); ok {
		t.Fatal("an entry older than the newest MaxPerConnector was found")
	}
	if _, ok, _ := l.Get(testCtx(t), "a", written[5].ID); !ok {
		t.Fatal("the oldest entry kept was not found")
	}
}

// TestOversizedConfigsOmitted: an entry whose configs do not fit a record
// keeps its diff and says its configs were omitted.
func TestOversizedConfigsOmitted(t *testing.T) {
	l := newLog(t)
	big := map[string]string{"blob": strings.Repeat("x", maxRecordBytes/2+1)}
	bigger := map[string]string{"blob": strings.Repeat("y", maxRecordBytes/2+1)}
	w, err := l.Append(testCtx(t), entry("a", api.ConfigPut, big, bigger))
	if err != nil {
		t.Fatal(err)
	}
	e, ok, err := l.Get(testCtx(t), "a", w[0].ID)
	if err != nil || !ok {
		t.Fatalf("Get: %v %v", ok, err)
	}
	if !e.Omitted || e.Before != nil || e.After["blob"] != bigger["blob"] || e.Diff.Changed[0] != "blob" {
		t.Fatalf("omitted %v, before %d keys, after kept %v, diff %+v", e.Omitted, len(e.Before), e.After != nil, e.Diff)
	}
}

// TestObserveNewest: an entry another coordinator appended with an id
// ahead of this process's clock is read as the newest, and the entries
// appended next sort after it.
func TestObserveNewest(t *testing.T) {
	l := newLog(t)
	ahead := fmt.Sprintf("%013d-%016x", time.Now().Add(time.Hour).UnixMilli(), 1)
	value := fmt.Sprintf(`{"id":%q,"time":"2026-12-06T10:00:00Z","connector":"a","operation":"put","principal":"ada","diff":{"added":[],"removed":[],"changed":[]},"before":null,"after":null}`, ahead)
	if err := l.cl.ProduceSync(testCtx(t), &kgo.Record{Key: []byte("a"), Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := l.ObserveNewest(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	w, err := l.Append(testCtx(t), entry("a", api.ConfigPatch, nil, map[string]string{"k": "v"}))
	if err != nil {
		t.Fatal(err)
	}
	if w[0].ID <= ahead {
		t.Fatalf("appended %s, not after the newest entry %s", w[0].ID, ahead)
	}
	if h, _ := l.List(testCtx(t), "a", 0, ""); len(h.Entries) != 2 || h.Entries[0].ID != w[0].ID {
		t.Fatalf("history %+v: the appended entry is not the newest", h)
	}
}

// TestReadsOnlyWhatIsNew: a read goes through the records appended since
// the previous one, and a coordinator that never read the topic reads it
// all; both see the same history.
func TestReadsOnlyWhatIsNew(t *testing.T) {
	l := newLog(t)
	for i := range 3 {
		if _, err := l.Append(testCtx(t), entry("a", api.ConfigPut, map[string]string{"i": fmt.Sprint(i)}, map[string]string{"i": fmt.Sprint(i + 1)})); err != nil {
			t.Fatal(err)
		}
	}
	if h, err := l.List(testCtx(t), "a", 0, ""); err != nil || len(h.Entries) != 3 {
		t.Fatalf("first read: %+v %v", h, err)
	}
	if l.index.next[0] != 3 {
		t.Fatalf("read up to %d, want 3", l.index.next[0])
	}
	w, err := l.Append(testCtx(t), entry("a", api.ConfigPatch, map[string]string{"i": "3"}, map[string]string{"i": "4"}), entry("b", api.ConfigCreate, nil, map[string]string{"k": "v"}))
	if err != nil {
		t.Fatal(err)
	}
	h, err := l.List(testCtx(t), "a", 0, "")
	if err != nil || len(h.Entries) != 4 || h.Entries[0].ID != w[0].ID || l.index.next[0] != 5 {
		t.Fatalf("second read: %+v %v, read up to %d", h, err, l.index.next[0])
	}
	// Another coordinator's Log over the same topic reads it all.
	other, err := New(Config{Topic: l.cfg.Topic, KafkaOpts: l.cfg.KafkaOpts, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	e, ok, err := other.Get(testCtx(t), "b", w[1].ID)
	if err != nil || !ok || e.After["k"] != "v" || e.Operation != api.ConfigCreate {
		t.Fatalf("the other coordinator's Get: %+v %v %v", e, ok, err)
	}
	if h2, _ := other.List(testCtx(t), "a", 0, ""); !reflect.DeepEqual(h2, h) {
		t.Fatalf("the other coordinator reads %+v, this one %+v", h2, h)
	}
}
