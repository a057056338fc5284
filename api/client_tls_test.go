package api

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testCA is a CA made in the test, to issue client certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// client issues a client certificate for cn: its PEM and its key's.
func (ca *testCA) client(t *testing.T, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// mtlsServer is an HTTPS server that requires a client certificate of ca
// and answers with its common name; serverCA is the PEM of its own
// certificate.
func mtlsServer(t *testing.T, ca *testCA) (s *httptest.Server, serverCA []byte) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	s = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"version":"`+r.TLS.PeerCertificates[0].Subject.CommonName+`","commit":"c","kafka_cluster_id":"k"}`)
	}))
	s.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	s.StartTLS()
	t.Cleanup(s.Close)
	return s, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
}

// TestTLS: the CA verifies the server; without it the handshake fails,
// once, naming the address; Insecure skips the check.
func TestTLS(t *testing.T) {
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"version":"4.4.0","commit":"abc","kafka_cluster_id":"k"}`)
	}))
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.StartTLS()
	defer s.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, cfg := range map[string]*TLSConfig{"CA PEM": {CAPEM: caPEM}, "CA file": {CAFile: caFile}, "insecure": {Insecure: true}} {
		c := newTestClient(t, Config{Address: s.URL, TLS: cfg}, nil)
		if info, err := c.Admin().ServerInfo(ctx); err != nil || info.Version != "4.4.0" {
			t.Fatalf("%s: %+v %v", name, info, err)
		}
	}
	var waits []time.Duration
	c := newTestClient(t, Config{Address: s.URL, TLS: &TLSConfig{}}, &waits)
	_, err := c.Admin().ServerInfo(ctx)
	var ce *ConnError
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &ce) || ce.Address != s.URL || !errors.As(err, &unknown) {
		t.Fatalf("error %T %v, want a ConnError of an unknown authority", err, err)
	}
	if len(waits) != 0 {
		t.Fatalf("waited %v: a certificate that does not verify is not retried", waits)
	}
	// Without a scheme, an address with TLS is https.
	c = newTestClient(t, Config{Address: s.Listener.Addr().String(), TLS: &TLSConfig{CAPEM: caPEM}}, nil)
	if _, err := c.Admin().ServerInfo(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestClientCertificate: the third kind of credential, from PEM or files;
// a server that requires one refuses a client without it.
func TestClientCertificate(t *testing.T) {
	ca := newTestCA(t)
	s, serverCA := mtlsServer(t, ca)
	certPEM, keyPEM := ca.client(t, "ops-bot")
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, cfg := range map[string]*TLSConfig{
		"PEM":   {CAPEM: serverCA, CertPEM: certPEM, KeyPEM: keyPEM},
		"files": {CAPEM: serverCA, CertFile: certFile, KeyFile: keyFile},
	} {
		c := newTestClient(t, Config{Address: s.URL, TLS: cfg}, nil)
		if info, err := c.Admin().ServerInfo(ctx); err != nil || info.Version != "ops-bot" {
			t.Fatalf("%s: %+v %v, want the certificate's name back", name, info, err)
		}
	}
	var waits []time.Duration
	c := newTestClient(t, Config{Address: s.URL, TLS: &TLSConfig{CAPEM: serverCA}}, &waits)
	var ce *ConnError
	if _, err := c.Admin().ServerInfo(ctx); !errors.As(err, &ce) || len(waits) != 0 {
		t.Fatalf("error %T %v without a certificate after %d waits, want a ConnError at once", err, err, len(waits))
	}
}

// TestTLSConfigErrors: a bad TLS setting fails NewClient, saying which.
func TestTLSConfigErrors(t *testing.T) {
	ca := newTestCA(t)
	certPEM, keyPEM := ca.client(t, "x")
	for name, cfg := range map[string]Config{
		"CA not PEM":       {TLS: &TLSConfig{CAPEM: []byte("nope")}},
		"CA file missing":  {TLS: &TLSConfig{CAFile: "/nonexistent/ca.pem"}},
		"CA twice":         {TLS: &TLSConfig{CAFile: "x", CAPEM: ca.pem}},
		"key mismatch":     {TLS: &TLSConfig{CertPEM: certPEM, KeyPEM: []byte("bad")}},
		"cert without key": {TLS: &TLSConfig{CertPEM: certPEM}},
		"file and PEM":     {TLS: &TLSConfig{CertFile: "c", KeyFile: "k", KeyPEM: keyPEM}},
		"odd transport":    {TLS: &TLSConfig{}, HTTPClient: &http.Client{Transport: roundTripper(nil)}},
	} {
		if _, err := NewClient(cfg); err == nil {
			t.Errorf("%s: NewClient took it", name)
		}
	}
	// A given client keeps its settings and gets the TLS ones.
	hc := &http.Client{Timeout: 7 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 3}}
	c, err := NewClient(Config{HTTPClient: hc, TLS: &TLSConfig{CAPEM: ca.pem}})
	if err != nil {
		t.Fatal(err)
	}
	tr := c.http.Transport.(*http.Transport)
	if c.http.Timeout != 7*time.Second || tr.MaxIdleConnsPerHost != 3 || tr.TLSClientConfig.RootCAs == nil || hc.Transport.(*http.Transport).TLSClientConfig.RootCAs != nil {
		t.Fatal("the given client's settings were lost, or it was changed")
	}
}

// roundTripper is an http.RoundTripper that is no *http.Transport.
type roundTripper func(*http.Request) (*http.Response, error)

// RoundTrip implements http.RoundTripper.
func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
