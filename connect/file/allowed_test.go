package file

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/allowedpaths"
)

// allowedDir returns a fresh allowed directory, its Paths, and a directory
// outside it holding a file.
func allowedDir(t *testing.T) (string, *allowedpaths.Paths, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	in, out := filepath.Join(root, "files"), filepath.Join(root, "private")
	for _, d := range []string{in, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(out, "secret"), []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	paths, err := allowedpaths.New([]string{in})
	if err != nil {
		t.Fatal(err)
	}
	return in, paths, out
}

func TestSourceRefusesPathOutsideAllowed(t *testing.T) {
	in, paths, out := allowedDir(t)
	if err := os.Symlink(filepath.Join(out, "secret"), filepath.Join(in, "link")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"/etc/passwd", filepath.Join(out, "secret"), "../private/secret", "link"} {
		task := &SourceTask{}
		err := task.Start(context.Background(), connect.SourceTaskContext{WorkDir: in, AllowedPaths: paths},
			map[string]string{"file": name, "topic": "t"})
		var na *allowedpaths.NotAllowedError
		if !errors.As(err, &na) || !strings.Contains(err.Error(), "FileStreamSourceTask may not read '"+name+"'") {
			t.Errorf("file %s: Start = %v, want a refusal naming it", name, err)
		}
	}
}

func TestSourceRechecksAFileThatAppearsLater(t *testing.T) {
	in, paths, out := allowedDir(t)
	task := &SourceTask{}
	if err := task.Start(context.Background(), connect.SourceTaskContext{WorkDir: in, AllowedPaths: paths},
		map[string]string{"file": "later.txt", "topic": "t"}); err != nil {
		t.Fatal(err)
	}
	// The missing file appears as a link out of the allowed directory.
	if err := os.Symlink(filepath.Join(out, "secret"), filepath.Join(in, "later.txt")); err != nil {
		t.Fatal(err)
	}
	recs, err := task.Poll(context.Background())
	var na *allowedpaths.NotAllowedError
	if !errors.As(err, &na) || len(recs) != 0 {
		t.Fatalf("Poll = %d records, %v; want a refusal", len(recs), err)
	}
}

func TestSinkAllowedPaths(t *testing.T) {
	in, paths, out := allowedDir(t)
	ok := &SinkTask{}
	// A file that does not exist yet, in an allowed directory.
	if err := ok.Start(context.Background(), connect.SinkTaskContext{WorkDir: in, AllowedPaths: paths}, map[string]string{"file": "out.txt"}); err != nil {
		t.Fatal(err)
	}
	if err := ok.Put(context.Background(), []connect.SinkRecord{{Value: "line"}}); err != nil {
		t.Fatal(err)
	}
	if err := ok.Stop(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(in, "out.txt")); err != nil || string(b) != "line\n" {
		t.Fatalf("out.txt = %q, %v", b, err)
	}
	for _, name := range []string{filepath.Join(out, "new.txt"), "../private/new.txt"} {
		bad := &SinkTask{}
		err := bad.Start(context.Background(), connect.SinkTaskContext{WorkDir: in, AllowedPaths: paths}, map[string]string{"file": name})
		if err == nil || !strings.Contains(err.Error(), "FileStreamSinkTask may not write to '"+name+"'") {
			t.Errorf("file %s: Start = %v, want a refusal", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused sink created its file: %v", err)
	}
}
