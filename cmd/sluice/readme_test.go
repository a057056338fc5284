package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

// docLine is one command line of a document's sh code block.
type docLine struct {
	line  int
	text  string
	block int // the code block's number, from 1
}

// shellBlocks returns the lines of the ```sh code blocks of a Markdown
// file, comments and blank lines left out, continuation lines joined.
func shellBlocks(t *testing.T, path string) []docLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docLine
	in, block, n := false, 0, 0
	var pending *docLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```sh"):
			in, block = true, block+1
			continue
		case strings.HasPrefix(l, "```"):
			in = false
			continue
		case !in:
			continue
		}
		if pending != nil {
			pending.text += " " + strings.TrimSpace(strings.TrimSuffix(l, "\\"))
			if !strings.HasSuffix(l, "\\") {
				out, pending = append(out, *pending), nil
			}
			continue
		}
		tl := strings.TrimSpace(l)
		if tl == "" || strings.HasPrefix(tl, "#") {
			continue
		}
		d := docLine{line: n, text: strings.TrimSuffix(tl, "\\"), block: block}
		if strings.HasSuffix(tl, "\\") {
			pending = &d
			continue
		}
		out = append(out, d)
	}
	return out
}

// sluicePrefix matches the ways the docs run the CLI.
var sluicePrefix = regexp.MustCompile(`^(sluice|bin/sluice|go run \./cmd/sluice)\s`)

// shellWords splits a command line as sh does for the docs' commands:
// single and double quotes, backslashes, and a # comment at a word's start.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, quote := false, rune(0)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			if r == '"' {
				quote = 0
			} else if r == '\\' && i+1 < len(rs) {
				i++
				cur.WriteRune(rs[i])
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			cur.WriteRune(rs[i])
			inWord = true
		case r == ' ' || r == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case r == '#' && !inWord:
			return words, nil
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// sluiceArgs are a doc line's CLI arguments, or nil if it does not run
// the CLI.
func sluiceArgs(t *testing.T, d docLine) []string {
	t.Helper()
	m := sluicePrefix.FindString(d.text)
	if m == "" {
		return nil
	}
	words, err := shellWords(d.text[len(m):])
	if err != nil {
		t.Fatalf("line %d: %v", d.line, err)
	}
	// A redirection is the shell's, not the CLI's.
	if i := slices.Index(words, ">"); i >= 0 {
		words = words[:i]
	}
	return words
}

// parseOnly makes every command of app succeed without doing anything
// once its flags are read: what is left checked is the command line
// itself — commands, flags, their values, required flags.
func parseOnly(cmds []*cli.Command) {
	for _, c := range cmds {
		c.Before, c.After = nil, nil
		if c.Action != nil {
			c.Action = func(*cli.Context) error { return nil }
		}
		parseOnly(c.Subcommands)
	}
}

// TestReadmeCommands runs the README's CLI walk-through as written, in
// order, against a real cluster: the `sluice …` lines in this process,
// the others (printf > file) with sh, all in the agent's work directory.
// The README's other sluice commands, which start processes against
// servers the test does not have (bin/sluice coordinator --nats
// nats://nats:4222 …), are parsed: a wrong command or flag fails.
func TestReadmeCommands(t *testing.T) {
	lines := shellBlocks(t, filepath.Join("..", "..", "README.md"))
	cl := startCluster(t)
	t.Chdir(cl.WorkDir)
	t.Setenv("SLUICE_URL", cl.URL)
	// What the walk-through's comments promise, checked right after the
	// command that makes it true: "resume: it reads the file again", and
	// a reset leaves no offsets.
	promises := map[string]func(){
		"sluice resume file-src --wait": func() {
			eventually(t, 30*time.Second, func() (bool, string) {
				data, _ := os.ReadFile("output.txt")
				return string(data) == "hello\nworld\nhello\nworld\n", fmt.Sprintf("output.txt after the resume at position 0: %q", data)
			})
		},
		"sluice offsets reset file-src": func() {
			got := doCurl(t, "GET …/offsets after the reset", curlReq{method: http.MethodGet, url: cl.URL + "/connectors/file-src/offsets"})
			if !jsonEqual(got, `{"offsets":[]}`) {
				t.Errorf("offsets of file-src after sluice offsets reset: %s", got)
			}
		},
	}
	ran := 0
	for _, d := range lines {
		args := sluiceArgs(t, d)
		switch {
		case args == nil:
			if !strings.HasPrefix(d.text, "printf ") {
				continue // make, curl, go build, docker: not the CLI
			}
			if out, err := exec.Command("sh", "-c", d.text).CombinedOutput(); err != nil {
				t.Fatalf("README.md:%d: %s: %v\n%s", d.line, d.text, err, out)
			}
		case isClientCommand(args[0]):
			ran++
			if out, errOut, code := runCLI(t, args...); code != 0 {
				t.Fatalf("README.md:%d: %s: exit %d\n%s%s", d.line, d.text, code, out, errOut)
			}
			if promise, ok := promises[d.text]; ok {
				promise()
				delete(promises, d.text)
			}
		default:
			parseArgs(t, "README.md", d, args)
		}
	}
	if ran < 10 {
		t.Fatalf("ran only %d CLI commands of the README", ran)
	}
	for cmd := range promises {
		t.Errorf("the README no longer runs %q: move its check to the command that now makes it true", cmd)
	}
	// The walk-through's effect: the sink wrote the file, and its last
	// line deleted both connectors.
	if out, err := os.ReadFile("output.txt"); err != nil || !strings.HasPrefix(string(out), "hello\nworld\n") {
		t.Errorf("output.txt: %q, %v", out, err)
	}
	if out := mustCLI(t, "get", "connectors", "-o", "json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("connectors left after the walk-through: %s", out)
	}
}

// isClientCommand reports whether a top-level command calls the REST API
// (and can run against the test cluster) rather than start a process.
func isClientCommand(name string) bool {
	switch name {
	case "coordinator", "agent", "dev":
		return false
	}
	return true
}

// parseArgs parses a doc's command line with the CLI's own flags, its
// commands doing nothing, and fails the test if the CLI refuses it.
func parseArgs(t *testing.T, doc string, d docLine, args []string) {
	t.Helper()
	if err := parseCommand(args); err != nil {
		t.Errorf("%s:%d: %s: %v", doc, d.line, d.text, err)
	}
}

// parseCommand parses a command line as main would, running nothing.
func parseCommand(args []string) error {
	app := newApp()
	parseOnly(app.Commands)
	var out strings.Builder
	app.Writer, app.ErrWriter = &out, &out
	if err := app.Run(argvFor(app, args)); err != nil {
		return fmt.Errorf("%w\n%s", err, out.String())
	}
	return nil
}

// TestParseCommand: parsing alone catches a wrong flag, a missing
// required flag and a wrong command, and takes the README's real shape.
func TestParseCommand(t *testing.T) {
	for _, bad := range []string{"coordinator --nope", "nats-config --group-id g", "coordinater --nats x"} {
		if err := parseCommand(strings.Fields(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if err := parseCommand(strings.Fields("agent --nats nats://nats:4222 --kafka k:9092 --id web-1 --labels zone=a")); err != nil {
		t.Errorf("a good agent command line: %v", err)
	}
}

// TestDocsCLICommands: every sluice command that docs/cli.md and
// docs/security.md show parses with the CLI's commands and flags.
func TestDocsCLICommands(t *testing.T) {
	for doc, atLeast := range map[string]int{"cli.md": 30, "security.md": 3, "offsets.md": 10} {
		n := 0
		for _, d := range shellBlocks(t, filepath.Join("..", "..", "docs", doc)) {
			if args := sluiceArgs(t, d); args != nil {
				n++
				parseArgs(t, "docs/"+doc, d, args)
			}
		}
		if n < atLeast {
			t.Errorf("only %d sluice commands found in docs/%s", n, doc)
		}
	}
}
