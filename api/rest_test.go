package api

import "testing"

// TestTrimName follows Java's String.trim: code points up to U+0020 go,
// whatever they are; nothing above it does.
func TestTrimName(t *testing.T) {
	for in, want := range map[string]string{
		"  orders\t\n":       "orders",
		"\x01orders\x1f":     "orders",
		"\x00\x7forders":     "\x7forders", // DEL is above U+0020
		"\u00a0orders\u0085": "\u00a0orders\u0085",
		"\u2003orders\u3000": "\u2003orders\u3000",
		"or ders":            "or ders",
		" \x02 ":             "",
		"":                   "",
	} {
		if got := TrimName(in); got != want {
			t.Errorf("TrimName(%q) = %q, want %q", in, got, want)
		}
	}
}
