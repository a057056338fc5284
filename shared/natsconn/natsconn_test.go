package natsconn

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/sluice-io/sluice/shared/embedded"
	"github.com/sluice-io/sluice/shared/natsperm"
	"github.com/sluice-io/sluice/shared/testca"
)

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// creds returns the text of a credentials file for a new user, its JWT
// issued by a new account and expiring at exp (0: never).
func creds(t *testing.T, exp int64) (string, nkeys.KeyPair) {
	t.Helper()
	acct, _ := nkeys.CreateAccount()
	user, _ := nkeys.CreateUser()
	pub, _ := user.PublicKey()
	c := jwt.NewUserClaims(pub)
	c.Expires = exp
	token, err := c.Encode(acct)
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := user.Seed()
	text, err := jwt.FormatUserConfig(token, seed)
	if err != nil {
		t.Fatal(err)
	}
	return string(text), user
}

// TestBadInputNamesFileAndField: every setting that cannot work stops
// Options with a message naming the file, and the field where one is wrong.
func TestBadInputNamesFileAndField(t *testing.T) {
	good, _ := creds(t, 0)
	expired, _ := creds(t, time.Now().Add(-time.Hour).Unix())
	other, _ := creds(t, 0)
	// A JWT with another user's seed.
	mixed := good[:strings.Index(good, "-----BEGIN USER NKEY SEED-----")] + other[strings.Index(other, "-----BEGIN USER NKEY SEED-----"):]
	acct, _ := nkeys.CreateAccount()
	acctSeed, _ := acct.Seed()
	missing := filepath.Join(t.TempDir(), "missing")
	for _, tc := range []struct {
		name string
		auth Auth
		want []string
	}{
		{"two ways", Auth{CredsFile: "a", TokenFile: "b"}, []string{"use one of --nats-creds, --nats-token-file"}},
		{"user without password", Auth{User: "u"}, []string{"--nats-user and --nats-password-file go together"}},
		{"cert without key", Auth{TLSCert: "c"}, []string{"--nats-tls-cert and --nats-tls-key go together"}},
		{"unreadable creds", Auth{CredsFile: missing}, []string{"credentials file " + missing, "no such file"}},
		{"creds without a JWT", Auth{CredsFile: write(t, "c", "hello")}, []string{"credentials file", "field user JWT: not found"}},
		{"expired creds", Auth{CredsFile: write(t, "c", expired)}, []string{"credentials file", "field user JWT: expired at"}},
		{"creds of two users", Auth{CredsFile: write(t, "c", mixed)}, []string{"credentials file", "field user nkey seed: it is not the key of the JWT's user"}},
		{"unreadable seed", Auth{NkeySeedFile: missing}, []string{"nkey seed file " + missing}},
		{"garbage seed", Auth{NkeySeedFile: write(t, "s", "SUnot-a-seed")}, []string{"nkey seed file", "field seed: not a user nkey seed"}},
		{"account seed", Auth{NkeySeedFile: write(t, "s", string(acctSeed))}, []string{"nkey seed file", "field seed: not a user nkey seed"}},
		{"empty password", Auth{User: "u", PasswordFile: write(t, "p", "\n")}, []string{"password file", "field password: empty"}},
		{"two-line token", Auth{TokenFile: write(t, "t", "a\nb\n")}, []string{"token file", "field token: more than one line"}},
		{"unreadable CA", Auth{TLSCA: missing}, []string{"TLS CA file " + missing}},
		{"CA without certificates", Auth{TLSCA: write(t, "ca.pem", "nothing")}, []string{"TLS CA file", "field certificate: no PEM certificate"}},
		{"bad key pair", Auth{TLSCert: write(t, "c.pem", "x"), TLSKey: write(t, "k.pem", "y")}, []string{"TLS certificate", "and key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.auth.Options()
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if _, err := (Auth{CredsFile: write(t, "c", good)}).Options(); err != nil {
		t.Fatalf("good creds refused: %v", err)
	}
}

// startServer starts a NATS server on a free loopback port, set up by set.
func startServer(t *testing.T, set func(o *server.Options)) string {
	t.Helper()
	ns, err := embedded.NATS("", "", func(o *server.Options) error { set(o); return nil })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	return ns.ClientURL()
}

// TestConnectEachWay connects with each way of authenticating to a server
// that takes it, and is refused at once, saying so, with a wrong secret.
func TestConnectEachWay(t *testing.T) {
	user, _ := nkeys.CreateUser()
	pub, _ := user.PublicKey()
	seed, _ := user.Seed()
	url := startServer(t, func(o *server.Options) {
		o.Users = []*server.User{{Username: "u", Password: "right"}}
		o.Nkeys = []*server.NkeyUser{{Nkey: pub}}
	})
	tokenURL := startServer(t, func(o *server.Options) { o.Authorization = "tok" })
	for _, tc := range []struct {
		name, url string
		auth      Auth
		refused   bool
	}{
		{"password", url, Auth{User: "u", PasswordFile: write(t, "p", "right\n")}, false},
		{"wrong password", url, Auth{User: "u", PasswordFile: write(t, "p", "wrong")}, true},
		{"nkey", url, Auth{NkeySeedFile: write(t, "s", string(seed)+"\n")}, false},
		{"token", tokenURL, Auth{TokenFile: write(t, "t", "tok")}, false},
		{"wrong token", tokenURL, Auth{TokenFile: write(t, "t", "bad")}, true},
		{"anonymous", url, Auth{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			nc, err := Connect(tc.url, "test", tc.auth, nil)
			if !tc.refused {
				if err != nil {
					t.Fatal(err)
				}
				nc.Close()
				return
			}
			if err == nil {
				nc.Close()
				t.Fatal("connected")
			}
			if !strings.Contains(err.Error(), "refused authentication with "+tc.auth.Describe()) {
				t.Fatalf("error %q does not say the authentication was refused", err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("refused after %v", d)
			}
		})
	}
}

// TestConnectTLS connects over TLS to a NATS server started with the
// shipped configuration's TLS block (deploy/nats, rendered with a server
// certificate a test CA signed and that CA for client certificates),
// trusting that CA, with a client certificate and an agent's nkey. Without
// the CA the server's certificate is refused; without a client
// certificate the server refuses the client.
func TestConnectTLS(t *testing.T) {
	dir := t.TempDir()
	ca, err := testca.NewCA(dir, "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.Server("srv")
	if err != nil {
		t.Fatal(err)
	}
	cli, err := ca.Client("cli", "agent-1")
	if err != nil {
		t.Fatal(err)
	}
	caFile := ca.CertFile
	cfg := natsperm.Config{GroupID: "g", TLS: &natsperm.TLS{Cert: srv.CertFile, Key: srv.KeyFile, CA: caFile, Verify: true}}
	files, err := natsperm.Generate(dir, cfg, nil, []string{"agent-1"})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := embedded.NATS("", "", embedded.ConfigFile(files.Config))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	url := ns.ClientURL()
	client := Auth{NkeySeedFile: files.Agents["agent-1"], TLSCA: caFile, TLSCert: cli.CertFile, TLSKey: cli.KeyFile}
	nc, err := Connect(url, "tls", client, nil)
	if err != nil {
		t.Fatalf("TLS connect: %v", err)
	}
	if _, err := nc.TLSConnectionState(); err != nil {
		t.Fatalf("not TLS: %v", err)
	}
	nc.Close()
	noCA, noCert := client, client
	noCA.TLSCA = ""
	noCert.TLSCert, noCert.TLSKey = "", ""
	for name, a := range map[string]Auth{"without the CA": noCA, "without a client certificate": noCert} {
		nc, err := Connect(url, "tls", a, nil)
		if err == nil {
			nc.Close()
			t.Errorf("%s: connected", name)
			continue
		}
		t.Logf("%s: %v", name, err)
	}
}
