package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"testing"
)

// binDir holds the sluice binary the tests build once (sluiceBinary).
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sluice-deploy-test-")
	if err != nil {
		panic(err)
	}
	binDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	buildErr  error
	buildOut  []byte
)

// sluiceBinary builds the sluice binary of the repository once for the
// package's tests and returns its path.
func sluiceBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(binDir, "sluice")
	buildOnce.Do(func() {
		build := exec.Command("go", "build", "-o", bin, "./cmd/sluice")
		build.Dir = repoRoot
		buildOut, buildErr = build.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("go build: %v\n%s", buildErr, buildOut)
	}
	return bin
}

// envVarRef is an environment variable a flag reads, as --help shows it.
var envVarRef = regexp.MustCompile(`\$(SLUICE_[A-Z0-9_]+)`)

// knownEnv are the SLUICE_ environment variables the commands args…
// read, from each one's --help: a manifest or unit that sets another sets
// nothing (a typo, or a flag that is gone).
func knownEnv(t *testing.T, commands ...[]string) map[string]bool {
	t.Helper()
	bin := sluiceBinary(t)
	out := map[string]bool{}
	for _, args := range commands {
		help, err := exec.Command(bin, append(args, "--help")...).CombinedOutput()
		if err != nil {
			t.Fatalf("sluice %v --help: %v\n%s", args, err, help)
		}
		for _, m := range envVarRef.FindAllStringSubmatch(string(help), -1) {
			out[m[1]] = true
		}
	}
	if len(out) < 10 {
		t.Fatalf("sluice %v --help name %d environment variables: the help's format changed", commands, len(out))
	}
	return out
}

// unknownEnv are the SLUICE_ names of names that known lacks, sorted.
func unknownEnv(names []string, known map[string]bool) []string {
	var out []string
	for _, n := range names {
		if envVarRef.MatchString("$"+n) && !known[n] {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
