package auth

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckAdminFile: the file WriteAdminFile wrote takes its credential;
// a wrong password or token, another user, or a principal that is not an
// admin over every connector is refused, each saying which.
func TestCheckAdminFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "auth.yaml")
	cred, err := WriteAdminFile(path, "admin")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckAdminFile(path, cred); err != nil {
		t.Fatalf("the written file refuses its own credential: %v", err)
	}
	wrongPW, wrongToken, otherUser := cred, cred, cred
	wrongPW.Password += "x"
	wrongToken.Token += "x"
	otherUser.User = "root"
	for _, tc := range []struct {
		cred AdminCredential
		want string
	}{
		{wrongPW, "the password does not match"},
		{wrongToken, "the token does not match"},
		{otherUser, `no principal "root"`},
	} {
		if err := CheckAdminFile(path, tc.cred); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cred, err, tc.want)
		}
	}

	// The same secrets, granted less than admin over every connector.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, grant := range []string{"role: operator", "role: admin\n        connectors: [\"team-a-*\"]"} {
		narrowed := filepath.Join(dir, fmt.Sprintf("narrowed-%d.yaml", len(grant)))
		if err := os.WriteFile(narrowed, []byte(strings.Replace(string(data), "role: admin", grant, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := CheckAdminFile(narrowed, cred); err == nil || !strings.Contains(err.Error(), "not an admin over every connector") {
			t.Errorf("grant %q: %v, want a refusal", grant, err)
		}
	}
	if err := CheckAdminFile(filepath.Join(dir, "missing.yaml"), cred); err == nil {
		t.Error("a missing auth file takes the credential")
	}
}
