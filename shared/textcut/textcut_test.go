package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exact", 5, "exact"},
		{"abcdef", 3, "abc…[cut: 6 bytes]"},
		{"ééé", 3, "é…[cut: 6 bytes]"}, // never half a rune
		{"abc", 0, "…[cut: 3 bytes]"},
	}
	for _, c := range cases {
		if got := Cut(c.in, c.n); got != c.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	big := strings.Repeat("x", 1<<20)
	if got := Cut(big, 1024); len(got) > 1100 || !strings.HasSuffix(got, "…[cut: 1048576 bytes]") {
		t.Errorf("a megabyte cut to %d bytes: %q…", len(got), got[len(got)-30:])
	}
}

func TestPrefix(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 2, 3, 4, 10} {
		got := Prefix("aéb", n)
		if !utf8.ValidString(got) || len(got) > max(n, 0) && len(got) != len("aéb") {
			t.Errorf("Prefix(aéb, %d) = %q", n, got)
		}
	}
}
