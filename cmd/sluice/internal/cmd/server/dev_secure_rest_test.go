package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/coordinator"
)

// devSecureConfig is a coordinator config that New takes, but for the
// auth file secureDevREST adds.
func devSecureConfig() coordinator.Config {
	return coordinator.Config{NATSURL: "nats://127.0.0.1:1", Brokers: "127.0.0.1:1", GroupID: "g", ConfigTopic: "c", OffsetsTopic: "o", StatusTopic: "s",
		AgentLease: time.Second, TaskShutdownTimeout: time.Second}
}

// TestSecureDevREST checks the REST half of dev --secure writes an auth
// file the coordinator loads, and the secrets beside it.
func TestSecureDevREST(t *testing.T) {
	dir := t.TempDir()
	cfg := devSecureConfig()
	var out strings.Builder
	cred, err := secureDevREST(dir, &cfg, &out)
	if err != nil {
		t.Fatal(err)
	}
	if cred.User != devAdminUser || cred.Password == "" || !strings.HasPrefix(cred.Token, "sluice_") {
		t.Fatalf("credential %+v", cred)
	}
	if _, err := coordinator.New(cfg); err != nil {
		t.Fatalf("the coordinator does not take the generated auth file: %v", err)
	}
	pw, err := os.ReadFile(filepath.Join(dir, "rest-auth", "admin.password"))
	if err != nil || strings.TrimSpace(string(pw)) != cred.Password {
		t.Fatalf("password file: %q, %v", pw, err)
	}
	if !strings.Contains(out.String(), cred.Password) {
		t.Errorf("the credential is not printed: %s", out.String())
	}
}

// TestSecureDevRESTKeepsItsCredential: a second start on the same data dir
// keeps the first start's credential (password, token and auth file);
// a credential whose files no longer agree, or are gone, is replaced.
func TestSecureDevRESTKeepsItsCredential(t *testing.T) {
	dir := t.TempDir()
	restDir := filepath.Join(dir, "rest-auth")
	start := func() (coordinator.AdminCredential, string) {
		t.Helper()
		cfg := devSecureConfig()
		var out strings.Builder
		cred, err := secureDevREST(dir, &cfg, &out)
		if err != nil {
			t.Fatal(err)
		}
		if err := coordinator.CheckAdminAuthFile(cfg.RESTSecurity.AuthFile, cred); err != nil {
			t.Fatalf("the auth file does not take the printed credential: %v", err)
		}
		return cred, out.String()
	}
	first, _ := start()
	authFile := readFile(t, filepath.Join(restDir, "auth.yaml"))

	again, out := start()
	if again != first || readFile(t, filepath.Join(restDir, "auth.yaml")) != authFile {
		t.Fatalf("restart: credential %+v, want the first start's %+v (and its auth file unchanged)", again, first)
	}
	if !strings.Contains(out, "kept from an earlier run") {
		t.Errorf("a restart does not say the credential was kept: %s", out)
	}

	// A principal the user added to the auth file is kept with it.
	added := authFile + "  - name: \"ci\"\n    token_sha256: \"" + strings.Repeat("ab", 32) + "\"\n    grants:\n      - role: viewer\n"
	if err := os.WriteFile(filepath.Join(restDir, "auth.yaml"), []byte(added), 0o600); err != nil {
		t.Fatal(err)
	}
	if kept, _ := start(); kept != first || readFile(t, filepath.Join(restDir, "auth.yaml")) != added {
		t.Fatalf("after a principal was added: credential %+v, want %+v, and the file as the user left it", kept, first)
	}

	// A token file that no longer matches the auth file: a new credential,
	// and the reason printed.
	if err := os.WriteFile(filepath.Join(restDir, "admin.token"), []byte("sluice_not-it\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	replaced, out := start()
	if replaced.Password == first.Password || replaced.Token == first.Token {
		t.Fatalf("a mismatched token kept the old credential: %+v", replaced)
	}
	if !strings.Contains(out, "the token does not match") || !strings.Contains(out, "making a new one") {
		t.Errorf("the replacement does not say why: %s", out)
	}

	// A removed password file: a new credential, without a complaint.
	if err := os.Remove(filepath.Join(restDir, "admin.password")); err != nil {
		t.Fatal(err)
	}
	fresh, out := start()
	if fresh.Password == replaced.Password || strings.Contains(out, "cannot be kept") {
		t.Fatalf("after the password file was removed: %+v, %s", fresh, out)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
