package recordsig

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func key(t *testing.T, s string) *Key {
	t.Helper()
	k, err := NewKey([]byte(strings.Repeat(s, 32)))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSignVerify: a signature holds for its topic, key and value only; a
// record signed with another key, moved to another topic, or changed, is
// refused, and a tombstone differs from an empty value.
func TestSignVerify(t *testing.T) {
	k := key(t, "k")
	r := &kgo.Record{Key: []byte("connector-a"), Value: []byte(`{"x":1}`)}
	k.Sign("configs", r)
	r.Topic = "configs"
	if !k.Verify(r) {
		t.Fatal("a signed record does not verify")
	}
	for name, change := range map[string]func(*kgo.Record){
		"another topic": func(r *kgo.Record) { r.Topic = "status" },
		"another key":   func(r *kgo.Record) { r.Key = []byte("connector-b") },
		"another value": func(r *kgo.Record) { r.Value = []byte(`{"x":2}`) },
		"no value":      func(r *kgo.Record) { r.Value = nil },
		"no signature":  func(r *kgo.Record) { r.Headers = nil },
	} {
		c := *r
		change(&c)
		if k.Verify(&c) {
			t.Errorf("%s: verifies", name)
		}
	}
	if key(t, "o").Verify(r) {
		t.Error("another key verifies the signature")
	}
	empty := &kgo.Record{Topic: "configs", Key: []byte("x"), Value: []byte{}}
	k.Sign("configs", empty)
	if tomb := (&kgo.Record{Topic: "configs", Key: []byte("x"), Headers: empty.Headers}); k.Verify(tomb) {
		t.Error("an empty value's signature holds for a tombstone")
	}
	if _, err := NewKey([]byte("short")); err == nil {
		t.Error("a 5-byte key was taken")
	}
}

// TestGate: until the marker is read every record is taken (the version
// before signed nothing); after it, records before its boundary are taken
// unsigned, later ones only signed — counted when ignored. A later marker
// cannot move the boundary, and an unsigned one is not a marker.
func TestGate(t *testing.T) {
	k := key(t, "k")
	ignored := map[string]int{}
	g := NewGate(k, "configs", slog.New(slog.DiscardHandler), func(topic string) { ignored[topic]++ })
	unsigned := func(topic string, offset int64) *kgo.Record {
		return &kgo.Record{Topic: topic, Key: []byte("forged"), Value: []byte("x"), Offset: offset}
	}
	if !g.Admit(unsigned("configs", 3)) {
		t.Fatal("before the marker, an unsigned record must be taken")
	}
	forgedMarker := &kgo.Record{Topic: "configs", Key: []byte(MarkerKey), Value: EncodeSince(Since{}), Offset: 4}
	if g.Mark(forgedMarker) || g.Known() {
		t.Fatal("an unsigned marker was taken")
	}
	marker := &kgo.Record{Key: []byte(MarkerKey), Value: EncodeSince(Since{"status": {0: 10, 1: 20}}), Offset: 5}
	k.Sign("configs", marker)
	marker.Topic = "configs"
	if !g.Mark(marker) || !g.Known() {
		t.Fatal("the marker was not taken")
	}
	for _, tc := range []struct {
		r    *kgo.Record
		want bool
	}{
		{unsigned("configs", 4), true}, {unsigned("configs", 6), false},
		{unsigned("status", 9), true}, {&kgo.Record{Topic: "status", Partition: 1, Offset: 19}, true},
		{unsigned("status", 10), false},
		{unsigned("audit", 0), false}, // a topic with no boundary: everything signed
	} {
		if got := g.Admit(tc.r); got != tc.want {
			t.Errorf("%s-%d@%d: admitted %v, want %v", tc.r.Topic, tc.r.Partition, tc.r.Offset, got, tc.want)
		}
	}
	signed := &kgo.Record{Key: []byte("connector-a"), Value: []byte("v"), Offset: 100}
	k.Sign("configs", signed)
	signed.Topic = "configs"
	if !g.Admit(signed) {
		t.Error("a signed record was ignored")
	}
	later := &kgo.Record{Key: []byte(MarkerKey), Value: EncodeSince(Since{"status": {0: 1000}}), Offset: 50}
	k.Sign("configs", later)
	later.Topic = "configs"
	g.Mark(later)
	if g.Admit(unsigned("status", 500)) || g.Admit(unsigned("configs", 30)) {
		t.Error("a later marker widened what is taken unsigned")
	}
	if ignored["configs"] != 2 || ignored["status"] != 2 || ignored["audit"] != 1 {
		t.Errorf("ignored %v", ignored)
	}
	var none *Gate
	if !none.Admit(unsigned("configs", 1)) || none.Key() != nil {
		t.Error("a nil gate must take everything and sign nothing")
	}
}

// TestGateWithoutItsMarker: a signed config record read before any marker
// means the marker was removed (a tombstone, then compaction): from there
// on nothing unsigned is taken, on any topic, and the gate counts as
// knowing where signing began, so no leader writes a new marker that would
// bless what came since. A marker read after it still gives the other
// topics their boundaries, but cannot move the config topic's later.
func TestGateWithoutItsMarker(t *testing.T) {
	k := key(t, "k")
	g := NewGate(k, "configs", slog.New(slog.DiscardHandler), nil)
	old := &kgo.Record{Topic: "configs", Key: []byte("connector-x"), Value: []byte("v"), Offset: 2}
	if !g.Admit(old) {
		t.Fatal("a record of the version before was ignored")
	}
	signed := &kgo.Record{Key: []byte("connector-a"), Value: []byte("v"), Offset: 7}
	k.Sign("configs", signed)
	signed.Topic = "configs"
	if !g.Admit(signed) || !g.Known() {
		t.Fatal("a signed config record before any marker must set the boundary")
	}
	if g.Admit(&kgo.Record{Topic: "configs", Key: []byte("connector-evil"), Offset: 8}) ||
		g.Admit(&kgo.Record{Topic: "status", Key: []byte("status-connector-a"), Offset: 0}) {
		t.Error("an unsigned record after the first signed one was taken")
	}
	marker := &kgo.Record{Key: []byte(MarkerKey), Value: EncodeSince(Since{"status": {0: 5}}), Offset: 9}
	k.Sign("configs", marker)
	marker.Topic = "configs"
	g.Admit(marker)
	if !g.Mark(marker) {
		t.Fatal("the marker was not taken")
	}
	if !g.Admit(&kgo.Record{Topic: "status", Offset: 4}) || g.Admit(&kgo.Record{Topic: "configs", Offset: 8}) {
		t.Error("the marker's boundaries: status before 5 taken unsigned, configs from 7 on signed only")
	}
}
