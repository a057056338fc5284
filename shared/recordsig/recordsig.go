// Package recordsig signs the records coordinators write for each other —
// on the config, status, fleet, offsets history and audit topics — and
// keeps readers from applying a record no coordinator wrote. A principal
// that can write one of those topics (a misconfigured ACL, a leaked
// credential) could otherwise plant a connector, a status or an audit
// record; with a key only coordinators hold, such a record is ignored,
// counted and logged.
//
// The signature is an HMAC-SHA256 over the record's topic, key and value,
// in a header: it does not trust anything the record says about itself,
// and survives compaction and producer id rotation, unlike a filter on
// the producer id.
//
// Records written before signing began are accepted: the first leader
// with a key writes, once, a signed marker on the config topic that says
// where signing began on every topic (Since); records before that offset
// are the previous version's, and later ones must be signed.
package recordsig

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/secretfile"
	"github.com/sluice-io/sluice/shared/textcut"
)

// Header is the record header that holds the signature.
const Header = "sluice-signature"

// MarkerKey is the config topic key of the marker that says where signing
// began (a Since, JSON).
const MarkerKey = "sluice-signing-since"

// minKey is the shortest key taken: 256 bits, hex or not.
const minKey = 32

// Key signs and verifies records. A nil *Key signs nothing and takes
// every record.
type Key struct{ secret []byte }

// LoadKey reads a key file (its bytes, surrounding white space trimmed).
func LoadKey(file string) (*Key, error) {
	secret, err := secretfile.Key(file, minKey)
	var short *secretfile.ShortKeyError
	switch {
	case errors.As(err, &short):
		return nil, fmt.Errorf("record signing key file %s: %w", file, err)
	case err != nil:
		return nil, fmt.Errorf("record signing key file: %w", err)
	}
	return &Key{secret: secret}, nil
}

// NewKey is a Key of secret's bytes.
func NewKey(secret []byte) (*Key, error) {
	if len(secret) < minKey {
		return nil, &secretfile.ShortKeyError{Got: len(secret), Min: minKey}
	}
	return &Key{secret: bytes.Clone(secret)}, nil
}

// mac is the signature of a record of topic.
func (k *Key) mac(topic string, r *kgo.Record) []byte {
	m := hmac.New(sha256.New, k.secret)
	m.Write([]byte("sluice-record-v1\n"))
	// Length-prefixed, so that no two records share an input; a null
	// value (a tombstone) differs from an empty one.
	var n [8]byte
	for _, part := range [][]byte{[]byte(topic), r.Key} {
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		m.Write(n[:])
		m.Write(part)
	}
	if r.Value == nil {
		m.Write([]byte{0})
	} else {
		m.Write([]byte{1})
		m.Write(r.Value)
	}
	return m.Sum(nil)
}

// Sign adds r's signature, for topic (the record's own Topic may still be
// empty, to be filled by the client's default topic).
func (k *Key) Sign(topic string, r *kgo.Record) {
	if k == nil {
		return
	}
	r.Headers = append(r.Headers, kgo.RecordHeader{Key: Header, Value: k.mac(topic, r)})
}

// Verify reports whether r, as read from its topic, carries a valid
// signature.
func (k *Key) Verify(r *kgo.Record) bool {
	if k == nil {
		return true
	}
	want := k.mac(r.Topic, r)
	for _, h := range r.Headers {
		if h.Key == Header && hmac.Equal(h.Value, want) {
			return true
		}
	}
	return false
}

// Since is where signing began: per topic and partition, the first offset
// whose records must be signed.
type Since map[string]map[int32]int64

// EncodeSince is the marker's value.
func EncodeSince(s Since) []byte {
	b, _ := json.Marshal(s) // maps of strings and numbers always marshal
	return b
}

// Gate decides which records of the topics it guards a reader applies:
// signed ones; and, until it knows where signing began, or for records
// before that, unsigned ones too (the previous version wrote them). A nil
// *Gate applies everything.
type Gate struct {
	key *Key
	log *slog.Logger
	// configTopic holds the marker.
	configTopic string
	// onIgnored counts an ignored record of topic (a metric).
	onIgnored func(topic string)

	mu    sync.Mutex
	since Since
	known bool
	// inferred: no marker was read, but a signed record of the config
	// topic was (the marker is gone — a tombstone, compacted): signing
	// began at that record at the latest, and no other topic's records
	// are taken unsigned. A marker read later still sets the boundaries.
	inferred bool
	warned   map[string]bool
}

// NewGate returns a gate over key's signatures for a cluster whose config
// topic (holding the marker) is configTopic; nil when key is nil.
func NewGate(key *Key, configTopic string, log *slog.Logger, onIgnored func(topic string)) *Gate {
	if key == nil {
		return nil
	}
	if log == nil {
		log = slog.Default()
	}
	return &Gate{key: key, configTopic: configTopic, log: log, onIgnored: onIgnored, warned: map[string]bool{}}
}

// Key is the gate's key, which writers sign with (nil for a nil gate).
func (g *Gate) Key() *Key {
	if g == nil {
		return nil
	}
	return g.key
}

// Known reports whether the gate knows where signing began (a marker was
// read).
func (g *Gate) Known() bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.known
}

// Mark applies a marker record read from the config topic: when it is
// signed, and the first one, it says where signing began, the config
// topic's own boundary being the marker's offset. It reports whether the
// record was a marker this gate took.
func (g *Gate) Mark(r *kgo.Record) bool {
	if g == nil || string(r.Key) != MarkerKey || !g.key.Verify(r) {
		return false
	}
	var s Since
	if err := json.Unmarshal(r.Value, &s); err != nil {
		g.log.Error("the record signing marker does not parse; ignoring it", "topic", r.Topic, "offset", r.Offset, "err", err)
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.known && !g.inferred {
		return true // the first marker holds: a later one cannot widen what is taken unsigned
	}
	if s == nil {
		s = Since{}
	}
	first := r.Offset
	if g.inferred {
		// A signed record came before this marker: the boundary stays
		// there, not later.
		first = min(first, g.since[r.Topic][r.Partition])
	}
	s[r.Topic] = map[int32]int64{r.Partition: first}
	g.since, g.known, g.inferred = s, true, false
	return true
}

// noteSigned takes a signed record of the config topic read before any
// marker as where signing began: the marker should have come first, so it
// was removed (a tombstone someone wrote, then compaction). Failing closed,
// the config topic's later records and every other topic's must then be
// signed, and no leader writes a new marker that would take what came
// since as the previous version's.
func (g *Gate) noteSigned(r *kgo.Record) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.known {
		return
	}
	g.since = Since{r.Topic: {r.Partition: r.Offset}}
	g.known, g.inferred = true, true
	if string(r.Key) != MarkerKey {
		g.log.Warn("a signed record precedes any record signing marker on the config topic: the marker was removed; records that are not signed are ignored from here on, on every topic",
			"topic", r.Topic, "offset", r.Offset)
	}
}

// Admit reports whether a reader applies r. An ignored record is counted
// and, the first time for its topic, logged.
func (g *Gate) Admit(r *kgo.Record) bool {
	if g == nil {
		return true
	}
	if g.key.Verify(r) {
		if r.Topic == g.configTopic {
			g.noteSigned(r)
		}
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.known {
		return true
	}
	if first, ok := g.since[r.Topic][r.Partition]; ok && r.Offset < first {
		return true
	}
	if g.onIgnored != nil {
		g.onIgnored(r.Topic)
	}
	if !g.warned[r.Topic] {
		g.warned[r.Topic] = true
		g.log.Warn("ignoring a record no coordinator wrote: it is not signed with the coordinators' key (further ones on this topic are counted in sluice_records_ignored_total, not logged)",
			"topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "key", textcut.Cut(string(r.Key), 256))
	}
	return false
}
