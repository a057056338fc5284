// Package testca makes throw-away TLS material for tests: a CA, and server
// and client certificates it signs, written as PEM files, so that tests can
// run a TLS Kafka broker (kfake.TLS), NATS server or REST API, present
// client certificates or an untrusted CA, without shelling out to openssl.
package testca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA is a certificate authority made for one test.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// CertFile is the CA certificate as a PEM file.
	CertFile string
	dir      string
}

// Pair is a certificate signed by a CA, with its key, as files, as PEM and
// as a tls.Certificate.
type Pair struct {
	CertFile, KeyFile string
	CertPEM, KeyPEM   []byte
	TLS               tls.Certificate
}

// NewCA makes a CA named name and writes its certificate to dir/<name>.pem.
func NewCA(dir, name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	ca := &CA{cert: cert, key: key, dir: dir, CertFile: filepath.Join(dir, name+".pem")}
	if err := writeFile(ca.CertFile, ca.PEM()); err != nil {
		return nil, err
	}
	return ca, nil
}

// Server issues a server certificate for 127.0.0.1 and localhost, written
// to dir/<name>.pem and dir/<name>-key.pem.
func (ca *CA) Server(name string) (Pair, error) {
	return ca.issue(name, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "localhost"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// Client issues a client certificate with common name cn.
func (ca *CA) Client(name, cn string) (Pair, error) {
	return ca.issue(name, &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

// Cert is the CA's certificate.
func (ca *CA) Cert() *x509.Certificate { return ca.cert }

// PEM is the CA's certificate in PEM.
func (ca *CA) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}

// Pool is a cert pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

func (ca *CA) issue(name string, tmpl *x509.Certificate) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, fmt.Errorf("%s key: %w", name, err)
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return Pair{}, fmt.Errorf("%s certificate: %w", name, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Pair{}, fmt.Errorf("%s key: %w", name, err)
	}
	p := Pair{CertFile: filepath.Join(ca.dir, name+".pem"), KeyFile: filepath.Join(ca.dir, name+"-key.pem"),
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})}
	if err := writeFile(p.CertFile, p.CertPEM); err != nil {
		return Pair{}, err
	}
	if err := writeFile(p.KeyFile, p.KeyPEM); err != nil {
		return Pair{}, err
	}
	p.TLS = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return p, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

func writeFile(file string, data []byte) error {
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}
