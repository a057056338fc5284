// Command sluicelint checks the project rules of package lint over the
// whole repository (every module, every build tag) and exits 1 on a
// finding:
//
//	go run ./internal/lint/sluicelint            # from the repository root
//	go run ./internal/lint/sluicelint -update-baseline
//
// The test kit, whose helpers may hold a fault for a given time, is the one
// place a test may sleep: -kit names it, and its default here is the one
// place the project names it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sluice-io/sluice/internal/lint"
)

// defaultKit is the test kit's directory: its tests may sleep.
const defaultKit = "sluicetest"

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sluicelint:", err)
		os.Exit(1)
	}
}

// errFindings is returned when a rule is broken; the findings are printed.
var errFindings = errors.New("findings above")

func run(args []string, out io.Writer) error {
	fl := flag.NewFlagSet("sluicelint", flag.ContinueOnError)
	root := fl.String("root", ".", "the repository root")
	kit := fl.String("kit", defaultKit, "comma-separated directories, from the root, whose _test.go files may call time.Sleep (the test kit)")
	baselinePath := fl.String("baseline", "tools/sleep_baseline.txt", "the sleep baseline, from the root")
	update := fl.Bool("update-baseline", false, "rewrite the sleep baseline with today's counts (to lower it as sleeps go)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	fset := token.NewFileSet()
	files, err := lint.ParseTree(fset, *root)
	if err != nil {
		return err
	}
	kitDirs := strings.Split(*kit, ",")
	var docs []lint.Finding
	sleeps := map[string][]lint.Finding{}
	counts := map[string]int{}
	for _, f := range files {
		docs = append(docs, lint.CheckDocs(fset, f.AST)...)
		if lint.InDirs(f.Path, kitDirs) {
			continue
		}
		if s := lint.CountSleeps(fset, f.AST); len(s) > 0 {
			sleeps[f.Path], counts[f.Path] = s, len(s)
		}
	}
	bpath := filepath.Join(*root, *baselinePath)
	if *update {
		return writeBaseline(bpath, counts)
	}
	base, err := readBaseline(bpath)
	if err != nil {
		return err
	}
	for _, f := range docs {
		fmt.Fprintln(out, f)
	}
	over, under := base.Compare(counts)
	for _, p := range over {
		fmt.Fprintf(out, "%s: %d time.Sleep, the baseline (%s) allows %d:\n", p, counts[p], *baselinePath, base[p])
		for _, f := range sleeps[p] {
			fmt.Fprintf(out, "\t%s\n", f)
		}
	}
	if len(under) > 0 {
		fmt.Fprintf(out, "sluicelint: %d file(s) sleep less than the baseline allows: lower it with go run ./internal/lint/sluicelint -update-baseline\n", len(under))
	}
	if len(docs) > 0 || len(over) > 0 {
		return fmt.Errorf("%d undocumented exported name(s), %d file(s) over the sleep baseline: %w", len(docs), len(over), errFindings)
	}
	return nil
}

func readBaseline(path string) (lint.Baseline, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sleep baseline: %w", err)
	}
	defer f.Close()
	return lint.ReadBaseline(f)
}

func writeBaseline(path string, counts map[string]int) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("sleep baseline: %w", err)
	}
	if err := lint.Baseline(counts).Write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("sleep baseline: %w", err)
	}
	return nil
}
