// Package tlsfiles reads the PEM files that TLS settings name, for every
// TLS client and server of a Sluice process (Kafka, NATS, REST, the CLI),
// so that each refuses a bad file with the same clear error.
package tlsfiles

import (
	"crypto/x509"
	"errors"
	"os"
)

// ErrNoCertificate is the error of a CA file that holds no PEM
// certificate.
var ErrNoCertificate = errors.New("no PEM certificate in the file")

// CertPool reads a PEM file of CA certificates into a pool. Its errors are
// the read's (which name path) or ErrNoCertificate; callers add the setting
// the file came from.
func CertPool(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, ErrNoCertificate
	}
	return pool, nil
}
