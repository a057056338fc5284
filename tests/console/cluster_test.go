package console

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/sluice-io/sluice/sluicetest"
)

// user is a principal of the test cluster's auth file.
type user struct {
	name, password string
	// role and connectors are the principal's one grant.
	role       string
	connectors []string
}

// The users of every console cluster: one per role, and an operator of
// team a's connectors only.
var (
	viewer   = user{name: "vera", password: "vera-pw", role: "viewer"}
	operator = user{name: "otto", password: "otto-pw", role: "operator"}
	admin    = user{name: "ada", password: "ada-pw", role: "admin"}
	teamA    = user{name: "tom", password: "tom-pw", role: "operator", connectors: []string{"team-a-*"}}
)

// consoleCluster is a test cluster with REST authentication on, its auth
// file holding the users above and a bearer token of an operator.
type consoleCluster struct {
	*sluicetest.Cluster
	// token is the operator "ci"'s bearer token.
	token string
}

// startCluster starts a cluster of agents agents whose REST API asks for
// credentials; the kit's own REST calls go as the admin.
func startCluster(t testing.TB, agents int) *consoleCluster {
	t.Helper()
	return startClusterWith(t, sluicetest.Options{Agents: agents})
}

// startClusterWith is startCluster with the kit's options (its
// RESTSecurity's auth file is the console's). Without a browser to drive it, the test
// ends here, before a cluster is started for nothing.
func startClusterWith(t testing.TB, opts sluicetest.Options) *consoleCluster {
	t.Helper()
	needBrowser(t)
	token := randomToken(t)
	var b strings.Builder
	b.WriteString("principals:\n")
	for _, u := range []user{viewer, operator, admin, teamA} {
		hash, err := bcrypt.GenerateFromPassword([]byte(u.password), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "  - {name: %s, password_bcrypt: %q, grants: [{role: %s%s}]}\n", u.name, hash, u.role, patterns(u.connectors))
	}
	sum := sha256.Sum256([]byte(token))
	fmt.Fprintf(&b, "  - {name: ci, token_sha256: %q, grants: [{role: operator}]}\n", hex.EncodeToString(sum[:]))
	file := filepath.Join(t.TempDir(), "auth.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	opts.RESTSecurity.AuthFile = file
	c := sluicetest.Start(t, opts)
	c.Headers = basicAuth(admin)
	return &consoleCluster{Cluster: c, token: token}
}

func patterns(connectors []string) string {
	if len(connectors) == 0 {
		return ""
	}
	return fmt.Sprintf(", connectors: [%q]", strings.Join(connectors, `", "`))
}

// basicAuth is the Authorization header of u, for the kit's REST calls.
func basicAuth(u user) []string {
	return []string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(u.name+":"+u.password))}
}

func randomToken(t testing.TB) string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "sluice_" + base64.RawURLEncoding.EncodeToString(b)
}

// fileSource is the config of a FileStreamSource reading file (relative to
// the agents' working directory) into topic.
func fileSource(file, topic string) map[string]string {
	return map[string]string{
		"connector.class": "FileStreamSource",
		"file":            file,
		"topic":           topic,
		"tasks.max":       "1",
	}
}

// create creates a connector through the REST API (as the admin), in
// state ("" for RUNNING; PAUSED or STOPPED: created so), failing the test
// on anything but 201.
func (c *consoleCluster) create(t testing.TB, name string, config map[string]string, state string) {
	t.Helper()
	body := map[string]any{"name": name, "config": config}
	if state != "" {
		body["initial_state"] = state
	}
	if r := c.Do("POST", "/connectors", body); r.Status != 201 {
		t.Fatalf("creating %s: %s", name, r)
	}
}

// needFleet fails the test, saying why, when the coordinator does not
// serve the fleet list the home page reads.
func (c *consoleCluster) needFleet(t testing.TB) {
	t.Helper()
	if r := c.Do("GET", "/sluice/fleet/connectors?limit=1", nil); r.Status == 404 {
		t.Fatalf("this coordinator does not have GET /sluice/fleet/connectors, which the fleet home reads: %s", r)
	}
}

// writeLines writes a file of lines in the agents' working directory, for
// a file source to read.
func (c *consoleCluster) writeLines(t testing.TB, file string, lines ...string) {
	t.Helper()
	data := strings.Join(lines, "\n")
	if len(lines) > 0 {
		data += "\n"
	}
	if err := os.WriteFile(filepath.Join(c.WorkDir, file), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// signIn signs u in on the sign-in page with their password and waits
// until the console shows who is signed in.
func (p *tab) signIn(u user) {
	p.t.Helper()
	p.open("/ui/signin")
	p.typeInto("input[name=user]", u.name)
	p.typeInto("input[name=password]", u.password)
	p.clickButton("form", "Sign in")
	p.waitText("#who .user", u.name)
}
