package secretfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestRead: a secret is its file's one line without the line end; an empty
// file, one of two lines and a missing one are refused, saying which.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]error{"s3cret\n": nil, "s3cret\r\n": nil, "s3cret": nil, "\n": ErrEmpty, "": ErrEmpty, "a\nb\n": ErrMultiline} {
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := Read(p)
		if !errors.Is(err, want) || (want == nil && got != "s3cret") {
			t.Errorf("%q: %q, %v; want %v", text, got, err, want)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}
