package values

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/converters"
)

// hstorePair is one key and its value (nil for NULL).
type hstorePair struct {
	key string
	val *string
}

// parseHstore reads hstore's text output: "k"=>"v" pairs separated by
// ", ", keys and values double-quoted with backslash escapes, a value
// possibly the bare word NULL.
func parseHstore(s string) ([]hstorePair, error) {
	var out []hstorePair
	i := 0
	bad := func() ([]hstorePair, error) { return nil, fmt.Errorf("not an hstore value: %.40q", s) }
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == ',') {
			i++
		}
	}
	quoted := func() (string, bool) {
		if i >= len(s) || s[i] != '"' {
			return "", false
		}
		var b strings.Builder
		for i++; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
				if i < len(s) {
					b.WriteByte(s[i])
				}
			case '"':
				i++
				return b.String(), true
			default:
				b.WriteByte(s[i])
			}
		}
		return "", false
	}
	for skip(); i < len(s); skip() {
		k, ok := quoted()
		if !ok || !strings.HasPrefix(s[i:], "=>") {
			return bad()
		}
		i += 2
		if strings.HasPrefix(s[i:], "NULL") {
			i += 4
			out = append(out, hstorePair{key: k})
			continue
		}
		v, ok := quoted()
		if !ok {
			return bad()
		}
		out = append(out, hstorePair{key: k, val: &v})
	}
	return out, nil
}

// javaHashOrder orders pairs as iterating the java.util.HashMap pgjdbc's
// HStoreConverter fills does: by bucket of the key's String.hashCode in a
// table sized for the entry count, then by insertion. Debezium writes the
// JSON object in that order.
func javaHashOrder(pairs []hstorePair) []hstorePair {
	capacity := 16
	for float64(len(pairs)) > 0.75*float64(capacity) {
		capacity *= 2
	}
	type entry struct {
		hstorePair
		bucket, at int
	}
	seen := map[string]int{}
	var es []entry
	for _, p := range pairs {
		if at, ok := seen[p.key]; ok {
			es[at].val = p.val // a repeated key keeps its place
			continue
		}
		var h int32
		for _, u := range utf16.Encode([]rune(p.key)) {
			h = 31*h + int32(u)
		}
		spread := uint32(h) ^ (uint32(h) >> 16)
		seen[p.key] = len(es)
		es = append(es, entry{p, int(spread) & (capacity - 1), len(es)})
	}
	sort.SliceStable(es, func(a, b int) bool { return es[a].bucket < es[b].bucket })
	out := make([]hstorePair, len(es))
	for i, e := range es {
		out[i] = e.hstorePair
	}
	return out
}

// jsonQuote writes a JSON string as JsonConverter (Jackson's generator)
// does.
func jsonQuote(b *strings.Builder, s string) { b.WriteString(converters.QuoteJSON(s)) }

func hstoreSpec(m Modes) spec {
	if m.HStore == HStoreMap {
		return spec{
			schema: &connect.Schema{Type: connect.SchemaTypeMap, KeySchema: plain(connect.SchemaTypeString),
				ValueSchema: &connect.Schema{Type: connect.SchemaTypeString, Optional: true}},
			zero: map[string]any{},
			conv: func(s string) (any, error) {
				pairs, err := parseHstore(s)
				if err != nil {
					return nil, err
				}
				out := make(map[string]any, len(pairs))
				for _, p := range pairs {
					if p.val == nil {
						out[p.key] = nil
					} else {
						out[p.key] = *p.val
					}
				}
				return out, nil
			}}
	}
	return spec{schema: named(connect.SchemaTypeString, jsonName, nil), zero: "{}", conv: func(s string) (any, error) {
		pairs, err := parseHstore(s)
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		b.WriteByte('{')
		for i, p := range javaHashOrder(pairs) {
			if i > 0 {
				b.WriteByte(',')
			}
			jsonQuote(&b, p.key)
			b.WriteByte(':')
			if p.val == nil {
				b.WriteString("null")
			} else {
				jsonQuote(&b, *p.val)
			}
		}
		b.WriteByte('}')
		return b.String(), nil
	}}
}
