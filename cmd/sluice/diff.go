package main

import (
	"fmt"
	"slices"
	"strings"
)

// keyChange is one config key's change between two configs.
type keyChange struct {
	Key    string  `json:"key"`
	Before *string `json:"before"` // nil: added
	After  *string `json:"after"`  // nil: removed
}

// mark is "+" for an added key, "-" for a removed one, "~" for a changed
// one.
func (k keyChange) mark() string {
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
func (k keyChange) String() string {
	switch k.mark() {
	case "+":
		return "+" + k.Key + "=" + *k.After
	case "-":
		return "-" + k.Key + "=" + *k.Before
	}
	return fmt.Sprintf("~%s: %s -> %s", k.Key, *k.Before, *k.After)
}

// configDiff is what changes from before to after, by key.
func configDiff(before, after map[string]string) []keyChange {
	var out []keyChange
	for k, v := range after {
		if old, ok := before[k]; !ok {
			out = append(out, keyChange{Key: k, After: &v})
		} else if old != v {
			out = append(out, keyChange{Key: k, Before: &old, After: &v})
		}
	}
	for k, v := range before {
		if _, ok := after[k]; !ok {
			out = append(out, keyChange{Key: k, Before: &v})
		}
	}
	slices.SortFunc(out, func(x, y keyChange) int { return strings.Compare(x.Key, y.Key) })
	return out
}
