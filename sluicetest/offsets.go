package sluicetest

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

// CanonOffsets renders offset entries canonically — each entry as compact
// JSON, the list sorted — so two lists compare as strings whatever their
// order. Entries go through JSON and back with UseNumber, so 30 and
// json.Number("30") render alike.
func CanonOffsets(t testing.TB, entries []map[string]any) string {
	t.Helper()
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		b, _ = json.Marshal(m)
		out = append(out, string(b))
	}
	sort.Strings(out)
	return "[" + strings.Join(out, ",") + "]"
}
