package values

import (
	"bytes"
	"math/big"
	"testing"

	"github.com/sluice-io/sluice/connect/javatext"
)

func TestDecimal(t *testing.T) {
	tests := []struct {
		in        string
		plain     string
		scale     int32
		stripped  string
		unscaled  []byte
		asFloat64 float64
	}{
		{"0", "0", 0, "0", []byte{0}, 0},
		{"0.000", "0.000", 3, "0", []byte{0}, 0},
		{"-1.50", "-1.50", 2, "-1.5", []byte{0xff, 0x6a}, -1.5},
		{"127", "127", 0, "127", []byte{0x7f}, 127},
		{"128", "128", 0, "128", []byte{0, 0x80}, 128},
		{"-128", "-128", 0, "-128", []byte{0x80}, -128},
		{"-129", "-129", 0, "-129", []byte{0xff, 0x7f}, -129},
		{"1200", "1200", 0, "1200", []byte{0x04, 0xb0}, 1200},
		{"1.5e3", "1500", -2, "1500", []byte{0x0f}, 1500},
		{"+0.001", "0.001", 3, "0.001", []byte{1}, 0.001},
	}
	for _, tt := range tests {
		d, err := parseDecimal(tt.in)
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if got := d.plainString(); got != tt.plain {
			t.Errorf("%s plain: got %s, want %s", tt.in, got, tt.plain)
		}
		if d.scale != tt.scale {
			t.Errorf("%s scale: got %d, want %d", tt.in, d.scale, tt.scale)
		}
		if got := d.stripTrailingZeros().plainString(); got != tt.stripped {
			t.Errorf("%s stripped: got %s, want %s", tt.in, got, tt.stripped)
		}
		if got := d.unscaledBytes(); !bytes.Equal(got, tt.unscaled) {
			t.Errorf("%s unscaled bytes: got %x, want %x", tt.in, got, tt.unscaled)
		}
		if got := d.float64(); got != tt.asFloat64 {
			t.Errorf("%s float64: got %v, want %v", tt.in, got, tt.asFloat64)
		}
	}
	for _, bad := range []string{"", "-", "1.2.3", "abc", "1e", "NaN", "1,000"} {
		if _, err := parseDecimal(bad); err == nil {
			t.Errorf("parseDecimal(%q) accepted", bad)
		}
	}
}

func TestDecimalWithScaleRoundsHalfUp(t *testing.T) {
	tests := []struct {
		in    string
		scale int32
		want  string
		exact bool
	}{
		{"1.005", 2, "1.01", false},
		{"-1.005", 2, "-1.01", false},
		{"1.004", 2, "1.00", false},
		{"2.5", 0, "3", false},
		{"-2.5", 0, "-3", false},
		{"1.5", 3, "1.500", true},
		{"1.500", 1, "1.5", true},
	}
	for _, tt := range tests {
		d, _ := parseDecimal(tt.in)
		got, exact := d.withScale(tt.scale)
		if got.plainString() != tt.want || exact != tt.exact {
			t.Errorf("%s at scale %d: got %s (exact %v), want %s (exact %v)", tt.in, tt.scale, got.plainString(), exact, tt.want, tt.exact)
		}
	}
}

// TestTwosComplementRoundTrips checks the bytes against big.Int's own
// reading of two's complement, over a range of magnitudes.
func TestTwosComplementRoundTrips(t *testing.T) {
	for _, s := range []string{"0", "1", "-1", "255", "-255", "256", "-256", "32767", "-32768", "92233720368547758.07",
		"-92233720368547758.08", "123456789012345678901234567890"} {
		d, _ := parseDecimal(s)
		b := javatext.BigIntegerBytes(d.unscaled)
		back := new(big.Int).SetBytes(b)
		if len(b) > 0 && b[0]&0x80 != 0 {
			back.Sub(back, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
		}
		if back.Cmp(d.unscaled) != 0 {
			t.Errorf("%s: %x reads back as %s", s, b, back)
		}
		if len(b) > 1 && (b[0] == 0 && b[1]&0x80 == 0 || b[0] == 0xff && b[1]&0x80 != 0) {
			t.Errorf("%s: %x is not the shortest form", s, b)
		}
	}
}
