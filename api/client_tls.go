package api

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"
)

// TLSConfig is how a Client speaks HTTPS: the CAs that verify the
// coordinator's certificate and, for mutual TLS, the client certificate
// the coordinator authenticates (its --rest-tls-client-ca). Files and PEM
// bytes are alternatives; a file is read once, by NewClient.
type TLSConfig struct {
	// CAFile or CAPEM holds the PEM CA certificates that verify the
	// coordinator (neither: the system's roots).
	CAFile string
	CAPEM  []byte
	// CertFile and KeyFile, or CertPEM and KeyPEM, are the client
	// certificate and its key.
	CertFile, KeyFile string
	CertPEM, KeyPEM   []byte
	// ServerName is the name the coordinator's certificate must carry
	// (empty: the address's host).
	ServerName string
	// Insecure skips verifying the coordinator's certificate: for a test
	// only, as anyone in between can then read the credentials.
	Insecure bool
}

// config is t as a *tls.Config.
func (t *TLSConfig) config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName, InsecureSkipVerify: t.Insecure} //nolint:gosec // Insecure is the caller's explicit choice
	caPEM := t.CAPEM
	if t.CAFile != "" {
		if len(caPEM) > 0 {
			return nil, errors.New("TLS: give CAFile or CAPEM, not both")
		}
		data, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("TLS: read the CA file: %w", err)
		}
		caPEM = data
	}
	if len(caPEM) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, fmt.Errorf("TLS: no PEM certificate in the CA %s", orPEM(t.CAFile))
		}
		cfg.RootCAs = pool
	}
	certPEM, keyPEM := t.CertPEM, t.KeyPEM
	if t.CertFile != "" || t.KeyFile != "" {
		if len(certPEM) > 0 || len(keyPEM) > 0 {
			return nil, errors.New("TLS: give CertFile and KeyFile or CertPEM and KeyPEM, not both")
		}
		var err error
		if certPEM, err = os.ReadFile(t.CertFile); err != nil {
			return nil, fmt.Errorf("TLS: read the client certificate: %w", err)
		}
		if keyPEM, err = os.ReadFile(t.KeyFile); err != nil {
			return nil, fmt.Errorf("TLS: read the client key: %w", err)
		}
	}
	if len(certPEM) > 0 || len(keyPEM) > 0 {
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("TLS: the client certificate %s and its key: %w", orPEM(t.CertFile), err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// orPEM names a file, or the PEM given in its place.
func orPEM(file string) string {
	if file == "" {
		return "(PEM)"
	}
	return file
}

// httpClient is the *http.Client of cfg: cfg.HTTPClient, or a client of
// its own, with cfg.TLS on its transport.
func httpClient(cfg Config) (*http.Client, error) {
	if cfg.TLS == nil {
		if cfg.HTTPClient != nil {
			return cfg.HTTPClient, nil
		}
		return &http.Client{Timeout: 2 * time.Minute}, nil
	}
	tlsCfg, err := cfg.TLS.config()
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Timeout: 2 * time.Minute}
	var base *http.Transport
	if cfg.HTTPClient != nil {
		copied := *cfg.HTTPClient
		hc = &copied
		switch tr := cfg.HTTPClient.Transport.(type) {
		case nil:
		case *http.Transport:
			base = tr
		default:
			return nil, fmt.Errorf("TLS: HTTPClient's transport is a %T; with TLS set it must be nil or an *http.Transport", tr)
		}
	}
	if base == nil {
		base = http.DefaultTransport.(*http.Transport)
	}
	tr := base.Clone()
	tr.TLSClientConfig = tlsCfg
	hc.Transport = tr
	return hc, nil
}
