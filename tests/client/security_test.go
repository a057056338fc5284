package client_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/sluicetest"
)

// writeFile writes data to a file of dir and returns its path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	must(t, "write "+name, os.WriteFile(p, data, 0o600))
	return p
}

// TestCredentials: the three kinds of credentials a coordinator takes —
// HTTP Basic, a bearer token and a client certificate — over HTTPS
// verified with the cluster's CA, each reaching its principal's role.
func TestCredentials(t *testing.T) {
	dir := t.TempDir()
	ca := sluicetest.NewTestCA(t)
	srvCert, srvKey := ca.Issue(t, "coordinator", true)
	botCert, botKey := ca.Issue(t, "ops-bot", false)
	hash, err := bcrypt.GenerateFromPassword([]byte("ada-pw"), bcrypt.MinCost)
	must(t, "bcrypt", err)
	token := "ci-token-0123456789"
	sum := sha256.Sum256([]byte(token))
	authFile := writeFile(t, dir, "auth.yaml", []byte(fmt.Sprintf(`principals:
  - {name: ada, password_bcrypt: %q, grants: [{role: admin}]}
  - {name: ci, token_sha256: %q, grants: [{role: viewer}]}
  - {name: ops-bot, client_certificate: true, grants: [{role: operator}]}
`, hash, hex.EncodeToString(sum[:]))))
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, RESTSecurity: coordinator.RESTSecurity{
		TLSCert:     writeFile(t, dir, "server.pem", srvCert),
		TLSKey:      writeFile(t, dir, "server-key.pem", srvKey),
		TLSClientCA: writeFile(t, dir, "ca.pem", ca.PEM),
		AuthFile:    authFile,
	}})
	if !strings.HasPrefix(c.URL, "https://") {
		t.Fatalf("URL %s is not https", c.URL)
	}
	ctx := ctxFor(t)
	client := func(cfg api.Config) *api.Client {
		t.Helper()
		cfg.Address = strings.TrimPrefix(c.URL, "https://") // with TLS set, https is the default
		if cfg.TLS == nil {
			cfg.TLS = &api.TLSConfig{CAPEM: ca.PEM}
		}
		cl, err := api.NewClient(cfg)
		must(t, "client", err)
		return cl
	}
	name := c.Name("secured")
	create := func(cl *api.Client) error {
		_, err := cl.Connectors().Create(ctx, api.CreateConnectorRequest{Name: name, InitialState: api.StateStopped,
			Config: map[string]string{"connector.class": "GeneratorSource", "topic": c.Name("gen")}})
		return err
	}

	// Without credentials: 401, at once.
	anonymous := client(api.Config{})
	if _, err := anonymous.Connectors().List(ctx); !api.IsCode(err, 401) {
		t.Fatalf("anonymous: %v, want a 401", err)
	}
	if _, err := client(api.Config{Username: "ada", Password: "wrong"}).Connectors().List(ctx); !api.IsCode(err, 401) {
		t.Fatalf("a wrong password: %v, want a 401", err)
	}

	// Basic: ada, an admin, creates and audits.
	ada := client(api.Config{Username: "ada", Password: "ada-pw"})
	must(t, "ada creates", create(ada))

	// A bearer token: ci, a viewer, reads but may not write.
	ci := client(api.Config{Token: token})
	if _, err := ci.Connectors().Get(ctx, name); err != nil {
		t.Fatalf("ci reads: %v", err)
	}
	if err := ci.Connectors().Resume(ctx, name); !api.IsCode(err, 403) {
		t.Fatalf("ci resumes: %v, want a 403", err)
	}

	// A client certificate: ops-bot, an operator, resumes and stops.
	bot := client(api.Config{TLS: &api.TLSConfig{CAPEM: ca.PEM, CertPEM: botCert, KeyPEM: botKey}})
	must(t, "ops-bot resumes", bot.Connectors().Resume(ctx, name))
	must(t, "ops-bot stops", bot.Connectors().Stop(ctx, name))
	if err := bot.Connectors().Delete(ctx, name); !api.IsCode(err, 403) {
		t.Fatalf("ops-bot deletes: %v, want a 403 (deleting takes an admin)", err)
	}

	// The audit trail names each principal.
	sluicetest.Eventually(t, wait, func() (bool, string) {
		log, err := ada.Audit().Log(ctx, api.AuditQuery{Connector: name})
		if err != nil {
			return false, err.Error()
		}
		seen := map[string]bool{}
		for _, r := range log.Records {
			seen[r.Principal] = true
		}
		return seen["ada"] && seen["ops-bot"], fmt.Sprintf("principals %v", seen)
	})
	must(t, "ada deletes", ada.Connectors().Delete(ctx, name))

	// A CA that does not know the server: a ConnError, not retried.
	other := sluicetest.NewTestCA(t)
	_, err = client(api.Config{Username: "ada", Password: "ada-pw", TLS: &api.TLSConfig{CAPEM: other.PEM}}).Connectors().List(context.Background())
	var ce *api.ConnError
	if !errors.As(err, &ce) || ce.Refused() {
		t.Fatalf("an unknown CA: %T %v, want a ConnError of the handshake", err, err)
	}
}
