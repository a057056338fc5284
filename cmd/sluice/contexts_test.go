package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestContexts: set-context, use-context, get-contexts, current-context
// and delete-context, and the precedence of the connection settings: flag
// over environment over context over default.
func TestContexts(t *testing.T) {
	cl := startCluster(t)
	cfgPath := os.Getenv("SLUICE_CONFIG")
	if out := mustCLI(t, "config", "set-context", "local", "--url", strings.TrimPrefix(cl.URL, "http://")); out != "context local created\n" {
		t.Fatalf("set-context: %q", out)
	}
	mustCLI(t, "config", "set-context", "dead", "--url", "127.0.0.1:1")
	mustCLI(t, "config", "set-context", "secured", "--url", cl.URL, "--user", "ada", "--password-file", "/nonexistent/pw")
	if st, err := os.Stat(cfgPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config file: %v, %v", st, err)
	}
	// The first context made is the current one.
	if out := mustCLI(t, "config", "current-context"); out != "local\n" {
		t.Fatalf("current-context: %q", out)
	}
	// A context's credentials are used, unless a flag replaces them.
	if _, errOut, code := runCLI(t, "get", "connectors", "--context", "secured"); code == 0 || !strings.Contains(errOut, "--password-file") {
		t.Fatalf("context credentials not used: exit %d, %s", code, errOut)
	}
	mustCLI(t, "get", "connectors", "--context", "secured", "--user", "")
	// The context's URL, no flag needed.
	mustCLI(t, "get", "connectors")
	// --context picks another: nothing listens there (exit 3).
	if _, errOut, code := runCLI(t, "get", "connectors", "--context", "dead"); code != exitNoServer || !strings.Contains(errOut, "127.0.0.1:1") {
		t.Fatalf("--context dead: exit %d, %s", code, errOut)
	}
	mustCLI(t, "config", "use-context", "dead")
	if _, _, code := runCLI(t, "get", "connectors"); code != exitNoServer {
		t.Fatalf("after use-context dead: exit %d", code)
	}
	// The environment beats the context, the flag beats the environment.
	t.Setenv("SLUICE_URL", cl.URL)
	mustCLI(t, "get", "connectors")
	if _, errOut, code := runCLI(t, "get", "connectors", "--url", "127.0.0.1:1"); code != exitNoServer || !strings.Contains(errOut, "127.0.0.1:1") {
		t.Fatalf("--url over SLUICE_URL: exit %d, %s", code, errOut)
	}
	os.Unsetenv("SLUICE_URL")
	if out := mustCLI(t, "config", "delete-context", "dead"); out != "context dead deleted\n" {
		t.Fatalf("delete-context: %q", out)
	}
	if _, _, code := runCLI(t, "config", "current-context"); code != exitRefused {
		t.Fatalf("current-context after deleting it: exit %d", code)
	}
	if _, _, code := runCLI(t, "config", "use-context", "dead"); code != exitRefused {
		t.Fatalf("use-context of a deleted context: exit %d", code)
	}
	// Without a current context, the default URL.
	mustCLI(t, "config", "set-context", "local", "--url", "127.0.0.1:2")
	if out := mustCLI(t, "config", "get-contexts", "-o", "json"); !strings.Contains(out, `"url": "127.0.0.1:2"`) {
		t.Fatalf("get-contexts -o json: %s", out)
	}
}

// TestGetContextsGolden: get-contexts' table, the current context starred.
func TestGetContextsGolden(t *testing.T) {
	t.Setenv("SLUICE_CONFIG", filepath.Join(t.TempDir(), "config.yaml"))
	mustCLI(t, "config", "set-context", "dev", "--url", "127.0.0.1:8083")
	mustCLI(t, "config", "set-context", "prod", "--url", "https://sluice.example.com:8083", "--ca", "ca.pem", "--user", "ada", "--password-file", "pw")
	mustCLI(t, "config", "use-context", "prod")
	golden(t, "get-contexts", mustCLI(t, "config", "get-contexts"))
}
