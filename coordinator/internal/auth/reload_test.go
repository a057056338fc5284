package auth

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

func fileWith(t *testing.T, password string, role string) *File {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseFile([]byte(fmt.Sprintf("principals:\n  - {name: ada, password_bcrypt: %q, grants: [{role: %s}]}\n", h, role)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func basicAs(a *Authenticator, user, pw string) (*Principal, error) {
	r := httptest.NewRequest("GET", "/connectors", nil)
	r.SetBasicAuth(user, pw)
	return a.Authenticate(r, nil)
}

// TestReloadReplacesPrincipals: after Reload, the old password is refused
// even though a check of it was cached, the new one is taken, and Lookup's
// fingerprint changes with the entry (ending console sessions) but not
// with an unchanged one.
func TestReloadReplacesPrincipals(t *testing.T) {
	a, err := NewAuthenticator(context.Background(), Config{File: fileWith(t, "old", "admin")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := basicAs(a, "ada", "old"); err != nil {
		t.Fatalf("old password before reload: %v", err)
	}
	_, before, ok := a.Lookup(ViaBasic, "ada")
	if !ok {
		t.Fatal("ada not found")
	}
	a.Reload(fileWith(t, "new", "admin"))
	if _, err := basicAs(a, "ada", "old"); err == nil {
		t.Fatal("the old password still works after the file changed it")
	}
	p, err := basicAs(a, "ada", "new")
	if err != nil || p.Name != "ada" {
		t.Fatalf("new password: %v, %v", p, err)
	}
	_, after, _ := a.Lookup(ViaBasic, "ada")
	if after == before {
		t.Error("the fingerprint did not change with the password")
	}
	f := fileWith(t, "new", "viewer")
	a.Reload(f)
	_, viewer, _ := a.Lookup(ViaBasic, "ada")
	if viewer == after {
		t.Error("the fingerprint did not change with the grants")
	}
	a.Reload(f)
	if _, again, _ := a.Lookup(ViaBasic, "ada"); again != viewer {
		t.Error("the fingerprint changed though the entry did not")
	}
	a.Reload(&File{})
	if _, _, ok := a.Lookup(ViaBasic, "ada"); ok {
		t.Error("a removed principal is still found")
	}
}
