// Package textcut bounds text a client sent before it is logged, recorded
// or echoed: a request may carry a megabyte where a name is expected, and
// a log line or an audit record must not repeat it.
package textcut

import (
	"fmt"
	"unicode/utf8"
)

// Prefix returns s's first n bytes or fewer, ending on a rune boundary.
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < 0 {
		n = 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Cut returns s when it has at most n bytes, else its first n bytes or
// fewer (on a rune boundary) and a marker with s's size, so that whoever
// reads it knows it was cut and how much there was: "abc…[cut: 1048576
// bytes]".
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s…[cut: %d bytes]", Prefix(s, n), len(s))
}
