// Package labels parses and matches placement labels: agents start with
// labels (`zone=a,host=web-1`) and a connector's `sluice.agent.selector`
// (same syntax) picks the agents its tasks may run on.
package labels

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// SelectorKey is the connector config key holding the agent selector.
const SelectorKey = "sluice.agent.selector"

// Parse reads `k=v,k=v`. Blank input is an empty set. Keys must be
// non-empty and appear once.
func Parse(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(part, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid label %q: expected key=value", strings.TrimSpace(part))
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("label key %q given twice", k)
		}
		out[k] = v
	}
	return out, nil
}

// Format renders a label set as Parse reads it, keys sorted.
func Format(set map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(set)) {
		parts = append(parts, k+"="+set[k])
	}
	return strings.Join(parts, ",")
}

// Matches reports whether labels satisfy every key=value of selector.
func Matches(selector, labels map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
