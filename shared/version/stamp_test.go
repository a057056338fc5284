package version_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCommitFromGitCheckout builds a program that prints version.Commit
// from a fresh git checkout, with go build and with go run -buildvcs=true
// (as make build and make run do), and checks that it prints the checkout's
// commit, then the commit with -dirty once a file changed.
func TestCommitFromGitCheckout(t *testing.T) {
	// git is what a checkout is made with; without it there is nothing to stamp.
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is needed to test the commit stamp: %v", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go \S+$`).Find(mod) // a module needs at least its dependency's go version
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module probe\n\n"+string(goLine)+"\n\nrequire github.com/sluice-io/sluice v0.0.0\n\nreplace github.com/sluice-io/sluice => "+root+"\n")
	write(t, filepath.Join(dir, "go.sum"), string(sum))
	write(t, filepath.Join(dir, "main.go"), "package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/sluice-io/sluice/shared/version\"\n)\n\nfunc main() { fmt.Print(version.Commit) }\n")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "probe"}} {
		run(t, dir, nil, git, args...)
	}
	head := strings.TrimSpace(run(t, dir, nil, git, "rev-parse", "HEAD"))

	// The machine's GOFLAGS may turn stamping off; these builds say what they want.
	env := []string{"GOFLAGS=-mod=readonly", "GOWORK=off", "GOPROXY=off"}
	bin := filepath.Join(t.TempDir(), "probe")
	run(t, dir, env, "go", "build", "-o", bin, ".")
	if got := run(t, dir, nil, bin); got != head {
		t.Errorf("go build: version.Commit = %q, want the checkout's commit %q", got, head)
	}
	if got := run(t, dir, env, "go", "run", "-buildvcs=true", "."); got != head {
		t.Errorf("go run -buildvcs=true: version.Commit = %q, want %q", got, head)
	}
	write(t, filepath.Join(dir, "main.go"), "package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/sluice-io/sluice/shared/version\"\n)\n\nfunc main() { fmt.Print(version.Commit) } // changed\n")
	if got := run(t, dir, env, "go", "run", "-buildvcs=true", "."); got != head+"-dirty" {
		t.Errorf("go run with a changed file: version.Commit = %q, want %q", got, head+"-dirty")
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// run runs name in dir with env added to the test's environment and
// returns its standard output; it fails the test if the command fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
