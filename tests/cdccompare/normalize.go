package cdccompare

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The names the golden files use for what a live run names for itself: a
// run picks a topic prefix and a database that no other run shares, and
// Normalize puts these in their place.
const (
	GoldenPrefix   = "golden"
	GoldenDatabase = "golden"
)

// Normalizer turns a live run's records into the golden files' form:
// its names renamed, its volatile values masked.
type Normalizer struct {
	// Prefix is the run's topic.prefix (Debezium's server name).
	Prefix string
	// Database is the run's database.dbname.
	Database string
}

// Kind is what a topic of a Debezium-compatible connector carries, which
// decides what is masked in its records.
type Kind int

// The kinds of topic, by name (after renaming): "<prefix>.<schema>.<table>"
// changes, "__debezium-heartbeat.<prefix>" heartbeats,
// "<prefix>.transaction" transaction metadata (BEGIN/END) and
// "<prefix>.message" logical decoding messages.
const (
	Changes Kind = iota
	Heartbeat
	Transaction
	Message
)

// KindOf is the kind of a topic named as in the golden files.
func KindOf(topic string) Kind {
	switch topic {
	case "__debezium-heartbeat." + GoldenPrefix:
		return Heartbeat
	case GoldenPrefix + ".transaction":
		return Transaction
	case GoldenPrefix + ".message":
		return Message
	}
	return Changes
}

// masked lists, per kind of topic, the paths under a record's JSON (key or
// value, each {"schema": …, "payload": …} with schemas enabled) whose values
// differ from run to run whatever the connector does right:
//
//   - ts_ms, ts_us, ts_ns of the envelope and of its source block: when the
//     connector processed the event and when the database committed it;
//   - source.version: the connector's release (Debezium's, or Sluice's);
//   - source.lsn, source.sequence (the last commit's and the event's LSNs),
//     source.txId, source.xmin: positions in this server's WAL and its
//     transaction counter, which other databases' traffic moves;
//   - transaction.id ("<txId>:<lsn>") and the transaction topic's id.
//
// Beside these, the header __debezium.context.runId (maskedHeaders) is
// masked, and a transaction END's data_collections sorted
// (normalizeDataCollections). Everything else — every column value, the
// schemas, op, the snapshot marker, source.db/schema/table, the
// transaction counts, the order of records within a topic — is compared.
var masked = map[Kind][]string{
	Changes: changeMasks,
	Message: changeMasks,
	Transaction: {
		"key.payload.id",
		"value.payload.id", "value.payload.ts_ms",
	},
	Heartbeat: {"value.payload.ts_ms"},
}

var changeMasks = []string{
	"value.payload.ts_ms", "value.payload.ts_us", "value.payload.ts_ns",
	"value.payload.source.ts_ms", "value.payload.source.ts_us", "value.payload.source.ts_ns",
	"value.payload.source.version",
	"value.payload.source.lsn", "value.payload.source.sequence",
	"value.payload.source.txId", "value.payload.source.xmin",
	"value.payload.transaction.id",
}

// MaskedPaths are the paths masked in a topic's records (see masked), for
// documentation and test output.
func MaskedPaths(topic string) []string { return slices.Clone(masked[KindOf(topic)]) }

// Normalize is records with the run's names replaced by the golden ones and
// their volatile values masked; the heartbeat topic's repeats are collapsed
// (Collapse), since how many heartbeats a run sees depends on its timing.
func (n Normalizer) Normalize(records []Record) ([]Record, error) {
	out := make([]Record, 0, len(records))
	for i, r := range records {
		nr, err := n.normalize(r)
		if err != nil {
			return nil, fmt.Errorf("record %d (%s): %w", i, r.Topic, err)
		}
		out = append(out, nr)
	}
	return Collapse(out, func(topic string) bool { return KindOf(topic) == Heartbeat }), nil
}

// rename replaces the run's names in s with the golden ones. The longer
// name goes first, so one that holds the other (a prefix made from the
// database's name) is replaced whole.
func (n Normalizer) rename(s string) string {
	pairs := [][2]string{{n.Prefix, GoldenPrefix}, {n.Database, GoldenDatabase}}
	slices.SortFunc(pairs, func(a, b [2]string) int { return cmp.Compare(len(b[0]), len(a[0])) })
	var args []string
	for _, p := range pairs {
		if p[0] != "" {
			args = append(args, p[0], p[1])
		}
	}
	if len(args) == 0 {
		return s
	}
	return strings.NewReplacer(args...).Replace(s)
}

func (n Normalizer) normalize(r Record) (Record, error) {
	out := Record{Topic: n.rename(r.Topic)}
	paths := masked[KindOf(out.Topic)]
	for _, part := range []struct {
		name string
		raw  json.RawMessage
		dst  *json.RawMessage
	}{{"key", r.Key, &out.Key}, {"value", r.Value, &out.Value}} {
		v, err := decodeJSON(part.raw)
		if err != nil {
			return Record{}, fmt.Errorf("%s: %w", part.name, err)
		}
		v = n.renameAll(v)
		for _, p := range paths {
			if rest, ok := strings.CutPrefix(p, part.name+"."); ok {
				maskPath(v, strings.Split(rest, "."))
			}
		}
		if part.name == "value" && KindOf(out.Topic) == Transaction {
			normalizeDataCollections(v)
		}
		if *part.dst, err = encodeJSON(v); err != nil {
			return Record{}, fmt.Errorf("%s: %w", part.name, err)
		}
	}
	for _, h := range r.Headers {
		v := n.rename(h.Value)
		if maskedHeaders[h.Key] {
			v = ""
		}
		out.Headers = append(out.Headers, Header{Key: h.Key, Value: v})
	}
	return out, nil
}

// maskedHeaders are the headers whose values are masked (to ""): Debezium's
// __debezium.context.runId is a new UUID each time the task starts.
var maskedHeaders = map[string]bool{"__debezium.context.runId": true}

// identityHash is the "@1b6d3586" Java's Object.toString appends: Debezium
// names the data collection of a transactional logical message so in the
// transaction topic, and the hash changes from one JVM to the next.
var identityHash = regexp.MustCompile(`@[0-9a-f]+$`)

// normalizeDataCollections masks the identity hashes in the data
// collections of a transaction topic's END record and sorts them by name:
// Debezium lists them in a hash map's order, which the identity hash of a
// logical message's entry makes differ from run to run.
func normalizeDataCollections(value any) {
	p, _ := value.(map[string]any)
	p, _ = p["payload"].(map[string]any)
	dcs, _ := p["data_collections"].([]any)
	name := func(e any) string {
		m, _ := e.(map[string]any)
		s, _ := m["data_collection"].(string)
		return s
	}
	for _, e := range dcs {
		if m, ok := e.(map[string]any); ok {
			if s, ok := m["data_collection"].(string); ok {
				m["data_collection"] = identityHash.ReplaceAllString(s, "@0")
			}
		}
	}
	slices.SortStableFunc(dcs, func(a, b any) int { return cmp.Compare(name(a), name(b)) })
}

// renameAll renames in every string value of v (object keys are field and
// column names, which a run does not choose).
func (n Normalizer) renameAll(v any) any {
	switch x := v.(type) {
	case string:
		return n.rename(x)
	case map[string]any:
		for k, e := range x {
			x[k] = n.renameAll(e)
		}
	case []any:
		for i, e := range x {
			x[i] = n.renameAll(e)
		}
	}
	return v
}

// maskPath replaces the value at path in v, when there is one, by Mask of
// it.
func maskPath(v any, path []string) {
	obj, ok := v.(map[string]any)
	if !ok || len(path) == 0 {
		return
	}
	e, ok := obj[path[0]]
	if !ok {
		return
	}
	if len(path) == 1 {
		obj[path[0]] = Mask(e)
		return
	}
	maskPath(e, path[1:])
}

// Mask is the placeholder of a masked value, of the same JSON type: 0 for
// a number, "" for a string, false for a boolean, null for null, an empty
// array or object for one. So a connector that leaves a masked field out,
// or writes it as another type, still differs.
func Mask(v any) any {
	switch v.(type) {
	case json.Number:
		return json.Number("0")
	case string:
		return ""
	case bool:
		return false
	case []any:
		return []any{}
	case map[string]any:
		return map[string]any{}
	}
	return nil
}

// Collapse drops each record of a topic that repeat selects when it equals
// the previous record of that topic, so a run of identical heartbeats
// counts as one.
func Collapse(records []Record, repeat func(topic string) bool) []Record {
	last := map[string]Record{}
	var out []Record
	for _, r := range records {
		if repeat(r.Topic) {
			if prev, ok := last[r.Topic]; ok && sameRecord(prev, r) {
				continue
			}
			last[r.Topic] = r
		}
		out = append(out, r)
	}
	return out
}

// sameRecord reports whether a and b are byte for byte the same record.
func sameRecord(a, b Record) bool {
	if string(a.Key) != string(b.Key) || string(a.Value) != string(b.Value) {
		return false
	}
	return slices.Equal(a.Headers, b.Headers)
}
