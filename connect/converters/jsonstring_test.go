package converters

import (
	"bytes"
	"testing"
)

func TestJSONWriteStringEscapes(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain ascii", `"plain ascii"`},
		{`q"b\s`, `"q\"b\\s"`},
		{"\n\r\t\b\f", `"\n\r\t\b\f"`},
		{"\x00\x01\x1f", `"\u0000\u0001\u001F"`},
		{"\x7f</script>&", "\"\x7f</script>&\""}, // DEL and HTML characters stay as they are
		{"héllo ✓ 😀", `"héllo ✓ 😀"`},
		{"\u2028\u2029", "\"\u2028\u2029\""},
		{"a\xffb", "\"a\uFFFDb\""},       // a byte that is not UTF-8
		{"\xe2\x9c", "\"\uFFFD\uFFFD\""}, // a truncated sequence: one U+FFFD per byte
		{"\uFFFD", "\"\uFFFD\""},         // a real U+FFFD is kept
		{"end\\", `"end\\"`},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		writeString(&b, tt.in)
		if b.String() != tt.want {
			t.Errorf("writeString(%q) = %q, want %q", tt.in, b.String(), tt.want)
		}
	}
}
