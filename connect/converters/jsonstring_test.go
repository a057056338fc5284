package converters

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
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

// writeStringByRune is the plain form of writeString, one rune at a time,
// to check the quick one against.
func writeStringByRune(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func TestJSONWriteStringAsByRune(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab\"\\\n\x00\x1f\x7f\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80\xff\xbf")
	for range 5000 {
		s := make([]byte, rng.IntN(12))
		for i := range s {
			s[i] = alphabet[rng.IntN(len(alphabet))]
		}
		var b bytes.Buffer
		writeString(&b, string(s))
		if want := writeStringByRune(string(s)); b.String() != want {
			t.Fatalf("writeString(%q) = %q, want %q", s, b.String(), want)
		}
	}
}

func FuzzJSONWriteString(f *testing.F) {
	f.Add("a\"b\\c\n\x01\xffé")
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		writeString(&b, s)
		if want := writeStringByRune(s); b.String() != want {
			t.Errorf("writeString(%q) = %q, want %q", s, b.String(), want)
		}
	})
}
