// Package configdiff compares two connector configs key by key, as apply,
// patch, audit and rollouts show their changes.
package configdiff

import (
	"fmt"
	"slices"
	"strings"
)

// Change is one config key's change between two configs.
type Change struct {
	Key    string  `json:"key"`
	Before *string `json:"before"` // nil: added
	After  *string `json:"after"`  // nil: removed
}

// Mark is "+" for an added key, "-" for a removed one, "~" for a changed
// one.
func (k Change) Mark() string {
	switch {
	case k.Before == nil:
		return "+"
	case k.After == nil:
		return "-"
	}
	return "~"
}

// String is the change in one line, value included: "+k=v", "-k=v" or
// "~k: old -> new".
func (k Change) String() string {
	switch k.Mark() {
	case "+":
		return "+" + k.Key + "=" + *k.After
	case "-":
		return "-" + k.Key + "=" + *k.Before
	}
	return fmt.Sprintf("~%s: %s -> %s", k.Key, *k.Before, *k.After)
}

// Diff is what changes from before to after, by key.
func Diff(before, after map[string]string) []Change {
	var out []Change
	for k, v := range after {
		if old, ok := before[k]; !ok {
			out = append(out, Change{Key: k, After: &v})
		} else if old != v {
			out = append(out, Change{Key: k, Before: &old, After: &v})
		}
	}
	for k, v := range before {
		if _, ok := after[k]; !ok {
			out = append(out, Change{Key: k, Before: &v})
		}
	}
	slices.SortFunc(out, func(x, y Change) int { return strings.Compare(x.Key, y.Key) })
	return out
}

// With is m with k set to v, m itself unchanged.
func With(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for key, val := range m {
		out[key] = val
	}
	out[k] = v
	return out
}
