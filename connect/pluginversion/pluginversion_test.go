package pluginversion

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestCompare: the orderings Kafka Connect's users meet, as Maven orders
// them.
func TestCompare(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"1.0", "1.0.0", 0},
		{"1", "1.0.0.0", 0},
		{"1.9", "1.10", -1},
		{"4.3.1", "4.4.0", -1},
		{"10.0", "9.9.9", 1},
		{"1.0-SNAPSHOT", "1.0", -1},
		{"1.0-alpha", "1.0-beta", -1},
		{"1.0-a1", "1.0-alpha-1", 0},
		{"1.0-beta", "1.0-milestone", -1},
		{"1.0-m1", "1.0-rc1", -1},
		{"1.0-rc1", "1.0-CR1", 0},
		{"1.0-rc1", "1.0-SNAPSHOT", -1},
		{"1.0-SNAPSHOT", "1.0-ga", -1},
		{"1.0-ga", "1.0-final", 0},
		{"1.0-release", "1.0", 0},
		{"1.0", "1.0-sp1", -1},
		{"1.0-sp1", "1.0-foo", -1},
		{"1.0-bar", "1.0-foo", -1},
		{"1.0-sp", "1.0.1", -1},
		{"3.6.1.Final", "3.6.1", 0},
		{"3.6.1.Final", "3.6.2.Final", -1},
		{"1.0.RC1", "1.0-RC1", 0},
		{"1.0-1", "1.0.1", -1},
		{"007", "7", 0},
		{"99999999999999999999", "99999999999999999998", 1},
		{"1.0.0.1", "1.0", 1},
	} {
		if got := Compare(c.a, c.b); got != c.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Compare(c.b, c.a); got != -c.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
}

// TestRequirement: Kafka's reading of a *.plugin.version value.
func TestRequirement(t *testing.T) {
	for _, c := range []struct {
		spec, want, err string
		none            bool
		in, out         []string
	}{
		{spec: "", none: true},
		{spec: "latest", none: true},
		{spec: "1.2.0", want: "[1.2.0,1.2.0]", in: []string{"1.2", "1.2.0"}, out: []string{"1.2.1", "1.1.9"}},
		{spec: " 1.2.0 ", want: "[1.2.0,1.2.0]", in: []string{"1.2.0"}},
		{spec: "[1.0,2.0)", want: "[1.0,2.0)", in: []string{"1.0", "1.9.9", "2.0-rc1"}, out: []string{"2.0", "0.9"}},
		{spec: "(,1.0]", want: "(,1.0]", in: []string{"0.1", "1.0"}, out: []string{"1.0.1"}},
		{spec: "[1.2]", want: "[1.2,1.2]", in: []string{"1.2"}, out: []string{"1.3"}},
		{spec: "(,1.0],[1.2,)", want: "(,1.0],[1.2,)", in: []string{"1.0", "5.0"}, out: []string{"1.1"}},
		{spec: "[1.0", err: "Unbounded range: [1.0"},
		{spec: "(1.0]", err: "Single version must be surrounded by []: (1.0]"},
		{spec: "[2.0,1.0]", err: "Range defies version ordering: [2.0,1.0]"},
		{spec: "[1.0,2.0),[1.5,3.0)", err: "Ranges overlap: [1.0,2.0),[1.5,3.0)"},
		{spec: "[1.0,2.0),3.0", err: "Only fully-qualified sets allowed in multiple set scenario: [1.0,2.0),3.0"},
	} {
		r, ok, err := Requirement(c.spec)
		switch {
		case c.err != "":
			if err == nil || err.Error() != c.err {
				t.Errorf("Requirement(%q): error %v, want %q", c.spec, err, c.err)
			}
			continue
		case err != nil:
			t.Errorf("Requirement(%q): %v", c.spec, err)
			continue
		case ok == c.none:
			t.Errorf("Requirement(%q): ok %v", c.spec, ok)
			continue
		case c.none:
			continue
		}
		if r.String() != c.want {
			t.Errorf("Requirement(%q) = %s, want %s", c.spec, r, c.want)
		}
		for _, v := range c.in {
			if !r.Contains(v) {
				t.Errorf("%s does not contain %s", r, v)
			}
		}
		for _, v := range c.out {
			if r.Contains(v) {
				t.Errorf("%s contains %s", r, v)
			}
		}
	}
}

// TestExact: a bare version's range names its version; other ranges none.
func TestExact(t *testing.T) {
	for spec, want := range map[string]string{"1.2": "1.2", "[1.2]": "1.2", "[1.2,1.2]": "1.2", "[1.2,1.3]": "", "(,1.2]": "", "[1.2],[1.2]": ""} {
		r, _, err := Requirement(spec)
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := r.Exact(); v != want || ok != (want != "") {
			t.Errorf("Exact of %s = %q %v, want %q", spec, v, ok, want)
		}
	}
}

// TestHighest: the version a requirement resolves to among those at hand.
func TestHighest(t *testing.T) {
	r, _, _ := Requirement("[1.0,2.0)")
	if v, ok := Highest(r, []string{"2.0.0", "1.0.0", "1.10.0", "1.9.0", "0.9"}); !ok || v != "1.10.0" {
		t.Errorf("Highest = %q %v, want 1.10.0", v, ok)
	}
	if _, ok := Highest(r, []string{"2.0.0", "0.9"}); ok {
		t.Error("Highest found a version outside the range")
	}
}

// TestAgainstMaven replays testdata/maven.tsv: what maven-artifact 3.9.16
// (the version Kafka Connect 4.4 ships) answered for 77 × 77 version
// comparisons and 43 range specs (its parse or error, hasRestrictions, and
// containsVersion of 16 versions), recorded with a small Java program
// calling ComparableVersion.compareTo and VersionRange.createFromVersionSpec.
func TestAgainstMaven(t *testing.T) {
	f, err := os.Open("testdata/maven.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	probe := []string{"0.9", "1", "1.0", "1.0.0", "1.0.1", "1.1", "1.2", "1.5", "2.0", "2.0-rc1", "3.0", "3.5", "1.0-SNAPSHOT", "1.0-alpha", "4.4.0", "5"}
	s := bufio.NewScanner(f)
	n := 0
	for s.Scan() {
		n++
		p := strings.Split(s.Text(), "\t")
		if p[0] == "cmp" {
			want, _ := strconv.Atoi(p[3])
			if got := Compare(p[1], p[2]); got != want {
				t.Errorf("Compare(%q, %q) = %d, Maven says %d", p[1], p[2], got, want)
			}
			continue
		}
		r, err := ParseRange(p[1])
		if msg, isErr := strings.CutPrefix(p[2], "ERR "); isErr {
			if err == nil || err.Error() != msg {
				t.Errorf("ParseRange(%q): error %v, Maven says %q", p[1], err, msg)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseRange(%q): %v, Maven reads %s", p[1], err, p[2])
			continue
		}
		if r.String() != p[2] || strconv.FormatBool(r.HasRestrictions()) != p[3] {
			t.Errorf("ParseRange(%q) = %s (restricts: %v), Maven: %s (%s)", p[1], r, r.HasRestrictions(), p[2], p[3])
		}
		if len(p[4]) != len(probe) {
			t.Fatalf("line %d: %d answers for %d versions", n, len(p[4]), len(probe))
		}
		for i, want := range p[4] {
			v := probe[i]
			if got := r.Contains(v); got != (want == '1') {
				t.Errorf("%s contains %s: %v, Maven says %c", p[1], v, got, want)
			}
		}
	}
	if n < 5000 {
		t.Fatalf("read %d lines of testdata/maven.tsv", n)
	}
}
