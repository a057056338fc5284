package lint

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// A Baseline is how many sleeps each test file may keep: the offenders of
// the day the rule came, which only shrink. Keys are slash paths from the
// repository root.
type Baseline map[string]int

// ReadBaseline parses lines of the form path:count; blank lines and lines
// starting with # are skipped.
func ReadBaseline(r io.Reader) (Baseline, error) {
	b := Baseline{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ':')
		if i < 0 {
			return nil, fmt.Errorf("baseline line %d: %q is not path:count", n, line)
		}
		count, err := strconv.Atoi(line[i+1:])
		if err != nil || count < 0 {
			return nil, fmt.Errorf("baseline line %d: %q: the count is not a number", n, line)
		}
		b[line[:i]] += count
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read baseline: %w", err)
	}
	return b, nil
}

// Write writes the baseline sorted by path, after a header comment.
func (b Baseline) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# time.Sleep in _test.go files outside the test kit, per file, on the day the rule\n"+
		"# came (%d in all). make check fails when a file has more; lower a count, or delete\n"+
		"# its line, as sleeps are replaced: go run ./internal/lint/sluicelint -update-baseline\n", b.Total())
	for _, p := range b.paths() {
		if b[p] > 0 {
			fmt.Fprintf(bw, "%s:%d\n", p, b[p])
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write baseline: %w", err)
	}
	return nil
}

// Total is the number of sleeps the baseline allows.
func (b Baseline) Total() int {
	n := 0
	for _, c := range b {
		n += c
	}
	return n
}

// Compare lists, sorted, the files of counts that have more sleeps than the
// baseline allows (over: the gate fails) and those of the baseline that
// now have fewer (under: its counts can be lowered).
func (b Baseline) Compare(counts map[string]int) (over, under []string) {
	for p, c := range counts {
		if c > b[p] {
			over = append(over, p)
		}
	}
	for p, c := range b {
		if counts[p] < c {
			under = append(under, p)
		}
	}
	sort.Strings(over)
	sort.Strings(under)
	return over, under
}

func (b Baseline) paths() []string {
	ps := make([]string, 0, len(b))
	for p := range b {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}
