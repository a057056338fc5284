package tlsfiles

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-io/sluice/shared/testca"
)

// TestCertPool: a CA file gives a pool that verifies what the CA signed; a
// file without a certificate and a missing file are refused, saying which.
func TestCertPool(t *testing.T) {
	dir := t.TempDir()
	ca, err := testca.NewCA(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := CertPool(ca.CertFile)
	if err != nil || !pool.Equal(ca.Pool()) {
		t.Fatalf("pool %v, %v", pool, err)
	}
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := CertPool(junk); !errors.Is(err, ErrNoCertificate) {
		t.Errorf("junk: %v", err)
	}
	if _, err := CertPool(filepath.Join(dir, "missing.pem")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}
