package leasetrust

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/shared/wire"
)

func TestSignedLeasesAndRotation(t *testing.T) {
	dir := t.TempDir()
	oldKey, err := WriteKey(filepath.Join(dir, "old.key"))
	if err != nil {
		t.Fatal(err)
	}
	newKey, err := WriteKey(filepath.Join(dir, "new.key"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteKey(filepath.Join(dir, "old.key")); err == nil {
		t.Fatal("WriteKey overwrote an existing key")
	}
	read, err := ReadSigner(filepath.Join(dir, "old.key"))
	if err != nil || read.Public() != oldKey.Public() {
		t.Fatalf("ReadSigner: %v, %v", read, err)
	}
	// During a rotation both keys are trusted.
	trusted := filepath.Join(dir, "trusted.keys")
	if err := WriteTrusted(trusted, oldKey, newKey); err != nil {
		t.Fatal(err)
	}
	trust, err := ReadTrust(trusted)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Signer{oldKey, newKey} {
		l := wire.LeaderLease{ID: "c1", URL: "http://c1:8083", Term: 7, Key: "k", Nonce: "n"}
		s.Sign("prod", &l)
		if err := trust.Verify("prod", l); err != nil {
			t.Fatalf("a lease of a trusted key: %v", err)
		}
		// Every field is covered, and the cluster too.
		for name, change := range map[string]func(*wire.LeaderLease){
			"url":   func(l *wire.LeaderLease) { l.URL = "http://evil:8083" },
			"term":  func(l *wire.LeaderLease) { l.Term = 999999 },
			"key":   func(l *wire.LeaderLease) { l.Key = "other" },
			"id":    func(l *wire.LeaderLease) { l.ID = "c2" },
			"nonce": func(l *wire.LeaderLease) { l.Nonce = "m" },
		} {
			forged := l
			change(&forged)
			if err := trust.Verify("prod", forged); !errors.Is(err, ErrUntrusted) {
				t.Errorf("a lease with its %s changed: %v", name, err)
			}
		}
		if err := trust.Verify("staging", l); !errors.Is(err, ErrUntrusted) {
			t.Errorf("a lease of another cluster: %v", err)
		}
	}
	// After the rotation only the new key is.
	onlyNew, err := NewTrust(newKey.Public())
	if err != nil {
		t.Fatal(err)
	}
	l := wire.LeaderLease{ID: "c1", Term: 8}
	oldKey.Sign("prod", &l)
	if err := onlyNew.Verify("prod", l); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("a lease of a key no longer trusted: %v", err)
	}
	unsigned := wire.LeaderLease{ID: "attacker", Term: 9}
	if err := onlyNew.Verify("prod", unsigned); err == nil || !strings.Contains(err.Error(), "no signature") {
		t.Fatalf("an unsigned lease: %v", err)
	}
	// Without pinned keys every lease is followed.
	var none *Trust
	if none.Pinned() || none.Verify("prod", unsigned) != nil {
		t.Fatal("no trust should accept every lease")
	}
	if !none.With(oldKey).Pinned() {
		t.Fatal("a coordinator trusts its own key")
	}
}

func TestBadKeyFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, text, want string
		trust            bool
	}{
		{"short.key", "abc\n", "fewer than 32", false},
		{"empty.keys", "# nothing\n\n", "no key in it", true},
		{"bad.keys", "# a comment\nnot-a-key\n", "line 2", true},
	} {
		var err error
		if tc.trust {
			_, err = ReadTrust(write(tc.name, tc.text))
		} else {
			_, err = ReadSigner(write(tc.name, tc.text))
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%s: %v, want an error naming the file and %q", tc.name, err, tc.want)
		}
	}
}
