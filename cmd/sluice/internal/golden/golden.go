// Package golden compares what a test got with a committed file, and
// rewrites the file under go test's -update flag: the CLI's tables, and
// docs/cli.md's reference generated from the command tree.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files (testdata/*.golden, docs/cli.md's reference) with what the tests got")

// Check compares got with testdata/<name>.golden, or writes it there under
// -update.
func Check(t *testing.T, name, got string) {
	t.Helper()
	File(t, filepath.Join("testdata", name+".golden"), got)
}

// File compares got with the file at path, or writes it there under
// -update.
func File(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to write it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -run %s -update rewrites it):\n--- got\n%s--- want\n%s", path, t.Name(), got, want)
	}
}
