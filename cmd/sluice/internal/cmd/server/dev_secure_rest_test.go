package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/coordinator"
)

// TestSecureDevREST checks the REST half of dev --secure writes an auth
// file the coordinator loads, and the secrets beside it.
func TestSecureDevREST(t *testing.T) {
	dir := t.TempDir()
	cfg := coordinator.Config{NATSURL: "nats://127.0.0.1:1", Brokers: "127.0.0.1:1", GroupID: "g", ConfigTopic: "c", OffsetsTopic: "o", StatusTopic: "s",
		AgentLease: time.Second, TaskShutdownTimeout: time.Second}
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
