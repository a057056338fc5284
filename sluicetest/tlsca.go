package sluicetest

import (
	"crypto/x509"
	"testing"

	"github.com/sluice-io/sluice/shared/testca"
)

// TestCA is a certificate authority made in a test, for HTTPS with the
// coordinators' server certificates and clients' certificates.
type TestCA struct {
	ca *testca.CA
	// Cert is the CA certificate.
	Cert *x509.Certificate
	// PEM is the CA certificate, for a --rest-tls-client-ca, --rest-forward-ca
	// or --ca file.
	PEM []byte
}

// NewTestCA makes a CA for t, its files in a directory of t's.
func NewTestCA(t testing.TB) *TestCA {
	t.Helper()
	ca, err := testca.NewCA(t.TempDir(), "sluice-test-ca")
	if err != nil {
		t.Fatal(err)
	}
	return &TestCA{ca: ca, Cert: ca.Cert(), PEM: ca.PEM()}
}

// Issue makes a certificate for cn, signed by the CA: a server certificate
// for 127.0.0.1 and localhost when server, a client certificate otherwise.
// It returns the PEM certificate and key.
func (ca *TestCA) Issue(t testing.TB, cn string, server bool) (certPEM, keyPEM []byte) {
	t.Helper()
	var p testca.Pair
	var err error
	if server {
		p, err = ca.ca.Server(cn)
	} else {
		p, err = ca.ca.Client(cn, cn)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p.CertPEM, p.KeyPEM
}
