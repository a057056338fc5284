package cdccompare

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
)

// Difference is one place where two runs' normalized records differ:
// Path names it as topic[index].key|value|headers then the JSON keys and
// array indexes down to the value, e.g.
// golden.cdc.all_types[3].value.payload.after.c_numeric.
type Difference struct {
	Path        string
	Want, Got   string // the JSON at Path in the reference and in the run under test; "(missing)" when absent
	Explanation string // what kind of difference, when more than a value
}

// String is the difference as a test reports it.
func (d Difference) String() string {
	s := fmt.Sprintf("%s: want %s, got %s", d.Path, d.Want, d.Got)
	if d.Explanation != "" {
		s += " (" + d.Explanation + ")"
	}
	return s
}

const missing = "(missing)"

// Diff compares the records of a run under test (got) with the reference
// (want), both normalized, topic by topic in record order, and returns the
// differences: for each topic, its first differing record's first
// differing key path (object keys in sorted order), or the count when one
// side has more records. Topics are reported in name order. An empty result
// means the runs are identical.
func Diff(want, got []Record) []Difference {
	wantBy, gotBy := byTopic(want), byTopic(got)
	var topics []string
	for t := range wantBy {
		topics = append(topics, t)
	}
	for t := range gotBy {
		if _, ok := wantBy[t]; !ok {
			topics = append(topics, t)
		}
	}
	slices.Sort(topics)
	var out []Difference
	for _, topic := range topics {
		if d, ok := diffTopic(topic, wantBy[topic], gotBy[topic]); ok {
			out = append(out, d)
		}
	}
	return out
}

// byTopic groups records by topic, keeping their order.
func byTopic(records []Record) map[string][]Record {
	m := map[string][]Record{}
	for _, r := range records {
		m[r.Topic] = append(m[r.Topic], r)
	}
	return m
}

// diffTopic is the first difference between one topic's records: record
// by record, then in their counts. A difference in a record when the counts
// differ too says so, since a record missing or extra before it shifts the
// records after.
func diffTopic(topic string, want, got []Record) (Difference, bool) {
	for i := range min(len(want), len(got)) {
		if d, ok := diffRecord(fmt.Sprintf("%s[%d]", topic, i), want[i], got[i]); ok {
			if len(want) != len(got) {
				note := fmt.Sprintf("the topic has %d records, want %d", len(got), len(want))
				if d.Explanation != "" {
					note = d.Explanation + "; " + note
				}
				d.Explanation = note
			}
			return d, true
		}
	}
	if len(want) != len(got) {
		d := Difference{Path: topic, Want: fmt.Sprintf("%d records", len(want)), Got: fmt.Sprintf("%d records", len(got))}
		if len(got) > len(want) {
			d.Explanation = "first extra: " + recordString(got[len(want)])
		} else {
			d.Explanation = "first missing: " + recordString(want[len(got)])
		}
		return d, true
	}
	return Difference{}, false
}

// diffRecord is the first difference between two records at base: key,
// then value, then headers.
func diffRecord(base string, want, got Record) (Difference, bool) {
	for _, part := range []struct {
		name      string
		want, got json.RawMessage
	}{{"key", want.Key, got.Key}, {"value", want.Value, got.Value}} {
		w, errW := decodeJSON(part.want)
		g, errG := decodeJSON(part.got)
		if errW != nil || errG != nil {
			return Difference{Path: base + "." + part.name, Want: string(part.want), Got: string(part.got),
				Explanation: "not JSON"}, true
		}
		if d, ok := diffValue(base+"."+part.name, w, g); ok {
			return d, true
		}
	}
	if !slices.Equal(want.Headers, got.Headers) {
		return Difference{Path: base + ".headers", Want: headersString(want.Headers), Got: headersString(got.Headers)}, true
	}
	return Difference{}, false
}

// diffValue is the first difference between two decoded JSON values.
func diffValue(path string, want, got any) (Difference, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return typeDifference(path, want, got), true
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := path + "." + k
			we, inW := w[k]
			ge, inG := g[k]
			switch {
			case !inG:
				return Difference{Path: p, Want: jsonString(we), Got: missing}, true
			case !inW:
				return Difference{Path: p, Want: missing, Got: jsonString(ge), Explanation: "not in the reference"}, true
			}
			if d, ok := diffValue(p, we, ge); ok {
				return d, true
			}
		}
		return Difference{}, false
	case []any:
		g, ok := got.([]any)
		if !ok {
			return typeDifference(path, want, got), true
		}
		for i := range min(len(w), len(g)) {
			if d, ok := diffValue(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); ok {
				return d, true
			}
		}
		if len(w) != len(g) {
			return Difference{Path: path, Want: jsonString(w), Got: jsonString(g),
				Explanation: fmt.Sprintf("%d elements, want %d", len(g), len(w))}, true
		}
		return Difference{}, false
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return typeDifference(path, want, got), true
		}
		if w == g {
			return Difference{}, false
		}
		d := Difference{Path: path, Want: string(w), Got: string(g)}
		if sameNumber(w, g) {
			// JsonConverter's bytes are what a consumer sees: 1.0E10 and
			// 1e10 are the same double but not the same output.
			d.Explanation = "same number, spelled differently"
		}
		return d, true
	}
	if fmt.Sprintf("%T", want) != fmt.Sprintf("%T", got) {
		return typeDifference(path, want, got), true
	}
	if want != got {
		return Difference{Path: path, Want: jsonString(want), Got: jsonString(got)}, true
	}
	return Difference{}, false
}

// typeDifference is a difference of JSON types at path.
func typeDifference(path string, want, got any) Difference {
	return Difference{Path: path, Want: jsonString(want), Got: jsonString(got),
		Explanation: fmt.Sprintf("%s, want %s", jsonType(got), jsonType(want))}
}

// jsonType names a decoded value's JSON type.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// sameNumber reports whether two JSON numbers denote the same value.
func sameNumber(a, b json.Number) bool {
	x, okA := new(big.Float).SetString(string(a))
	y, okB := new(big.Float).SetString(string(b))
	return okA && okB && x.Cmp(y) == 0
}

// jsonString is v as compact JSON, shortened past 200 bytes.
func jsonString(v any) string {
	b, err := encodeJSON(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return shorten(string(b))
}

func headersString(h []Header) string {
	b, _ := encodeJSON(h)
	return string(b)
}

// recordString is a record's key and value, shortened, for a count
// difference.
func recordString(r Record) string {
	return shorten(fmt.Sprintf("key %s value %s", orNull(r.Key), orNull(r.Value)))
}

func shorten(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "…"
}
