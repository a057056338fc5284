// Package suggest finds, among known names, the ones close to a name that
// was mistyped: the "did you mean" of an unknown command, flag, connector
// or plugin.
package suggest

import (
	"slices"
	"strings"
)

// maxSuggestions bounds how many names a "did you mean" offers.
const maxSuggestions = 3

// Closest returns the names of known closest to typed: those at the
// smallest edit distance (insertions, deletions, substitutions, swaps of
// adjacent letters, case ignored) if it is at most a quarter of typed's
// length (at least one edit); else those that contain typed, or that typed
// contains, when it is at least three letters long. Nothing when none is
// close: a suggestion far from what was typed helps less than none.
func Closest(typed string, known []string) []string {
	t := strings.ToLower(typed)
	limit := max(1, len([]rune(t))/4)
	type scored struct {
		name string
		dist int
	}
	var found []scored
	for _, k := range known {
		lk := strings.ToLower(k)
		if lk == t {
			continue // the same name: nothing to suggest
		}
		d := distance(t, lk)
		switch {
		case d <= limit:
		case len(t) >= 3 && (strings.Contains(lk, t) || strings.Contains(t, lk)):
			d = limit + 1 // a part of the name: after the near misses
		default:
			continue
		}
		found = append(found, scored{k, d})
	}
	slices.SortFunc(found, func(a, b scored) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for _, f := range found {
		if len(out) == maxSuggestions || f.dist > found[0].dist {
			break
		}
		out = append(out, f.name)
	}
	return out
}

// DidYouMean is "; did you mean A?" (or "A or B", "A, B or C") for the
// names close to typed, empty when there are none.
func DidYouMean(typed string, known []string) string {
	c := Closest(typed, known)
	if len(c) == 0 {
		return ""
	}
	if len(c) == 1 {
		return "; did you mean " + c[0] + "?"
	}
	return "; did you mean " + strings.Join(c[:len(c)-1], ", ") + " or " + c[len(c)-1] + "?"
}

// distance is the optimal string alignment distance between a and b:
// Levenshtein's, with a swap of two adjacent letters counting as one edit
// (the commonest typo).
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// d[i][j] is the distance between ra[:i] and rb[:j].
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
