package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// write writes files (slash path → content) under root.
func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, src := range files {
		path := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const sleepy = "package p\n\nimport \"time\"\n\nfunc f() { time.Sleep(1); time.Sleep(2) }\n"

func TestRunBaseline(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"p/p_test.go":          sleepy,
		"sluicetest/k_test.go": sleepy,
		"tools/.keep":          "",
	})
	var out strings.Builder
	if err := run([]string{"-root", root, "-update-baseline"}, &out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "tools/sleep_baseline.txt"))
	if err != nil || !strings.Contains(string(b), "\np/p_test.go:2\n") || strings.Contains(string(b), "sluicetest") {
		t.Fatalf("baseline %q, %v: want p/p_test.go:2 and not the kit", b, err)
	}
	if err := run([]string{"-root", root}, &out); err != nil {
		t.Fatalf("at the baseline: %v\n%s", err, out.String())
	}
	write(t, root, map[string]string{"q/q_test.go": sleepy})
	out.Reset()
	if err := run([]string{"-root", root}, &out); !errors.Is(err, errFindings) || !strings.Contains(out.String(), "q/q_test.go: 2 time.Sleep") {
		t.Fatalf("a new sleepy file: %v\n%s", err, out.String())
	}
	write(t, root, map[string]string{"q/q_test.go": "package p\n", "p/p_test.go": "package p\n"})
	out.Reset()
	if err := run([]string{"-root", root}, &out); err != nil || !strings.Contains(out.String(), "sleep less than the baseline") {
		t.Fatalf("under the baseline: %v\n%s", err, out.String())
	}
}

func TestRunDocs(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"p/p.go": "package p\n\nfunc Bare() {}\n", "tools/sleep_baseline.txt": ""})
	var out strings.Builder
	if err := run([]string{"-root", root}, &out); !errors.Is(err, errFindings) || !strings.Contains(out.String(), "p/p.go:3:6: exported function Bare has no doc comment") {
		t.Fatalf("%v\n%s", err, out.String())
	}
}
