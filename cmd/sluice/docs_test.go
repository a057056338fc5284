package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/cmd/sluice/internal/clidoc"
	goldenfile "github.com/sluice-io/sluice/cmd/sluice/internal/golden"
)

// cliDoc is the CLI's guide and reference.
var cliDoc = filepath.Join("..", "..", "docs", "cli.md")

// TestCLIReference: docs/cli.md's reference section is the one the
// command tree generates (go test -run TestCLIReference -update rewrites
// it).
func TestCLIReference(t *testing.T) {
	var ref strings.Builder
	clidoc.Reference(&ref, newApp())
	doc, err := os.ReadFile(cliDoc)
	if err != nil {
		t.Fatal(err)
	}
	want, err := clidoc.Splice(string(doc), ref.String())
	if err != nil {
		t.Fatal(err)
	}
	goldenfile.File(t, cliDoc, want)
}

// example is one command of a guide's runnable examples, with the output
// the guide shows for it (checked when it shows one).
type example struct {
	docLine
	output     []string
	showOutput bool
}

// guideExamples reads the runnable examples of a Markdown file: the code
// blocks whose info string has sluice-example. In them a line "$ CMD" is
// a command whose output follows it (up to the next "$ " line or the
// block's end); any other line, but blank ones and # comments, is a
// command whose output is not shown.
func guideExamples(t *testing.T, path string) []example {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []example
	// in: inside a block; runnable: a block of examples; collecting: the
	// lines are the output of the last "$ " command.
	in, runnable, collecting, n := false, false, false, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```"):
			in, collecting = !in, false
			runnable = in && strings.Contains(l, "sluice-example")
			continue
		case !runnable:
			continue
		case strings.HasPrefix(l, "$ "):
			out = append(out, example{docLine: docLine{line: n, text: strings.TrimPrefix(l, "$ ")}, showOutput: true})
			collecting = true
		case collecting:
			out[len(out)-1].output = append(out[len(out)-1].output, l)
		default:
			if tl := strings.TrimSpace(l); tl != "" && !strings.HasPrefix(tl, "#") {
				out = append(out, example{docLine: docLine{line: n, text: tl}})
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCLIGuideExamples runs docs/cli.md's runnable examples in order,
// against a real cluster, in the agent's work directory: each sluice
// command exits 0 and prints what the guide shows after it, if it shows
// anything; the others (printf > file) run with sh.
func TestCLIGuideExamples(t *testing.T) {
	examples := guideExamples(t, cliDoc)
	if len(examples) < 10 {
		t.Fatalf("only %d runnable examples in docs/cli.md", len(examples))
	}
	cl := startCluster(t)
	t.Chdir(cl.WorkDir)
	t.Setenv("SLUICE_URL", cl.URL)
	for _, e := range examples {
		args := sluiceArgs(t, e.docLine)
		if args == nil {
			if out, err := exec.Command("sh", "-c", e.text).CombinedOutput(); err != nil {
				t.Fatalf("docs/cli.md:%d: %s: %v\n%s", e.line, e.text, err, out)
			}
			continue
		}
		out, errOut, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("docs/cli.md:%d: %s: exit %d\n%s%s", e.line, e.text, code, out, errOut)
		}
		if want := strings.Join(e.output, "\n"); e.showOutput && want != "" && trimLines(out) != trimLines(want) {
			t.Fatalf("docs/cli.md:%d: %s printed\n%s\nthe guide shows\n%s", e.line, e.text, out, want)
		}
	}
}

// trimLines is s without trailing spaces on its lines and blank lines at
// its ends.
func trimLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}
