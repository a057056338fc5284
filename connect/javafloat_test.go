package connect

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestJavaFloatText checks JavaDouble and JavaFloat against what Java 17
// printed for powers of two and their neighbours, powers of ten, subnormals,
// whole numbers up to 2^64 and random values (testdata/java17_floats.txt).
func TestJavaFloatText(t *testing.T) {
	f, err := os.Open("testdata/java17_floats.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		row := sc.Text()
		if row == "" || strings.HasPrefix(row, "#") {
			continue
		}
		cols := strings.Fields(row)
		bits, err := strconv.ParseUint(cols[1], 16, 64)
		if err != nil || len(cols) != 3 {
			t.Fatalf("row %q", row)
		}
		var got string
		if cols[0] == "d" {
			got = JavaDouble(math.Float64frombits(bits))
		} else {
			got = JavaFloat(math.Float32frombits(uint32(bits)))
		}
		if got != cols[2] {
			t.Errorf("%s %s: got %s, want %s", cols[0], cols[1], got, cols[2])
		}
		n++
	}
	if n < 3000 {
		t.Fatalf("only %d rows", n)
	}
}

// TestJavaFloatNotShortest names the cases where Java 17 differs from the
// shortest digits (what Go and Java 19+ print).
func TestJavaFloatNotShortest(t *testing.T) {
	for _, tt := range []struct {
		got, want, shortest string
	}{
		// A whole number below 2^63 is printed from its exact value.
		{JavaDouble(75250996711784448), "7.5250996711784448E16", "7.525099671178445E16"},
		{JavaFloat(4589109746000000000), "4.58910975E18", "4.5891097E18"},
		// Two digits at least in scientific notation, then a stopping
		// test that can stop a digit late.
		{JavaDouble(1e23), "9.999999999999999E22", "1.0E23"},
		{JavaDouble(2e23), "1.9999999999999998E23", "2.0E23"},
		{JavaDouble(8.41e21), "8.409999999999999E21", "8.41E21"},
		// And where it agrees.
		{JavaDouble(2e-3), "0.002", "0.002"},
		{JavaFloat(1.0e-10), "1.0E-10", "1.0E-10"},
		{JavaDouble(1e7), "1.0E7", "1.0E7"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %s, want %s (shortest %s)", tt.got, tt.want, tt.shortest)
		}
	}
}
