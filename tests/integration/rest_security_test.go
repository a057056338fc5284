package integration

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"github.com/sluice-io/sluice/api"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/sluicetest"
)

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func bcryptOf(t *testing.T, pw string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

// secureClient sends REST requests over HTTPS trusting ca, with a client
// certificate when cert is set.
type secureClient struct {
	t      *testing.T
	client *http.Client
}

func newSecureClient(t *testing.T, ca *sluicetest.TestCA, cert *tls.Certificate) *secureClient {
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	cfg := &tls.Config{RootCAs: pool}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	return &secureClient{t: t, client: &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}}
}

// do sends method base+path with body (JSON) and headers (name, value…).
func (s *secureClient) do(base, method, path string, body any, headers ...string) sluicetest.Response {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return sluicetest.Response{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

func basicAuth(user, pw string) []string {
	r, _ := http.NewRequest("GET", "/", nil)
	r.SetBasicAuth(user, pw)
	return []string{"Authorization", r.Header.Get("Authorization")}
}

// TestRESTSecurityThroughFollower runs two coordinators over HTTPS with an
// auth file and a forward key: a write through the follower keeps the
// caller's identity (a pattern-limited operator still gets 403 on another
// team's connector; a client-certificate caller may write through it), a
// forged forwarded identity is ignored, and plain HTTP is refused.
func TestRESTSecurityThroughFollower(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := sluicetest.NewTestCA(t)
	srvCert, srvKey := ca.Issue(t, "coordinator", true)
	robotCert, robotKey := ca.Issue(t, "robot", false)
	authFile := writeFile(t, dir, "auth.yaml", []byte(fmt.Sprintf(`principals:
  - name: ada
    password_bcrypt: %q
    grants: [{role: admin}]
  - name: tom
    password_bcrypt: %q
    grants:
      - role: operator
        connectors: ["team-a-*"]
  - name: robot
    client_certificate: true
    grants:
      - role: operator
        connectors: ["team-a-*"]
`, bcryptOf(t, "ada-pw"), bcryptOf(t, "tom-pw"))))
	sec := coordinator.RESTSecurity{
		TLSCert:        writeFile(t, dir, "server.pem", srvCert),
		TLSKey:         writeFile(t, dir, "server-key.pem", srvKey),
		TLSClientCA:    writeFile(t, dir, "ca.pem", ca.PEM),
		ForwardCA:      filepath.Join(dir, "ca.pem"),
		AuthFile:       authFile,
		ForwardKeyFile: writeFile(t, dir, "forward.key", []byte("0123456789abcdef0123456789abcdef0123456789abcdef\n")),
	}
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, RESTSecurity: sec})
	_, followerURL := c.StartExtraCoordinator()
	if !strings.HasPrefix(c.URL, "https://") || !strings.HasPrefix(followerURL, "https://") {
		t.Fatalf("URLs %s %s are not https", c.URL, followerURL)
	}
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		leading, lease := c.Coordinator.Leader()
		return leading && lease.URL == c.URL, fmt.Sprintf("leading %v, lease %s", leading, lease.URL)
	})
	cl := newSecureClient(t, ca, nil)
	tom, ada := basicAuth("tom", "tom-pw"), basicAuth("ada", "ada-pw")
	topic := c.Name("t")
	mine, theirs := "team-a-"+c.Name("src"), "team-b-"+c.Name("src")

	// Wait for the follower to see the leader, then create through it.
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		r := cl.do(followerURL, "POST", "/connectors", map[string]any{"name": mine, "config": generatorCfg(topic)}, tom...)
		return r.Status == http.StatusCreated, r.String()
	})
	r := cl.do(followerURL, "POST", "/connectors", map[string]any{"name": theirs, "config": generatorCfg(topic)}, tom...)
	if r.Status != http.StatusForbidden || !strings.Contains(r.Message(), "User tom may not POST /connectors") {
		t.Fatalf("tom creating another team's connector through the follower: %s", r)
	}
	if r := cl.do(followerURL, "POST", "/connectors", map[string]any{"name": theirs, "config": generatorCfg(topic)}, ada...); r.Status != http.StatusCreated ||
		!strings.HasPrefix(r.Header.Get("Location"), "https://") {
		t.Fatalf("ada creating through the follower: %s (Location %q)", r, r.Header.Get("Location"))
	}
	if r := cl.do(followerURL, "DELETE", "/connectors/"+mine, nil, tom...); r.Status != http.StatusForbidden {
		t.Fatalf("tom deleting through the follower: %s", r)
	}

	// A client known by its certificate writes through the follower: its
	// identity reaches the leader signed.
	pair, err := tls.X509KeyPair(robotCert, robotKey)
	if err != nil {
		t.Fatal(err)
	}
	robot := newSecureClient(t, ca, &pair)
	if r := robot.do(followerURL, "PUT", "/connectors/"+mine+"/pause", nil); r.Status != http.StatusAccepted {
		t.Fatalf("robot pausing its connector through the follower: %s", r)
	}
	if r := robot.do(followerURL, "PUT", "/connectors/"+theirs+"/pause", nil); r.Status != http.StatusForbidden ||
		!strings.Contains(r.Message(), "Certificate robot may not PUT") {
		t.Fatalf("robot pausing another team's connector: %s", r)
	}

	// Forged identities: a header claiming ada, signed with another key,
	// sent to the leader directly, is ignored.
	forged := "eyJwIjp7Im5hbWUiOiJhZGEiLCJ2aWEiOiJiYXNpYyIsImdyYW50cyI6W3sicm9sZSI6M31dfX0.bm90LWEtc2lnbmF0dXJl"
	if r := cl.do(c.URL, "DELETE", "/connectors/"+theirs, nil, "X-Sluice-Forwarded-Identity", forged, "X-Sluice-Forwarded", "1"); r.Status != http.StatusUnauthorized {
		t.Fatalf("anonymous with a forged identity: %s", r)
	}
	if r := cl.do(c.URL, "DELETE", "/connectors/"+theirs, nil, append(tom, "X-Sluice-Forwarded-Identity", forged)...); r.Status != http.StatusForbidden {
		t.Fatalf("tom with a forged admin identity: %s", r)
	}
	if r := cl.do(followerURL, "DELETE", "/connectors/"+theirs, nil, ada...); r.Status != http.StatusNoContent {
		t.Fatalf("ada deleting through the follower: %s", r)
	}

	// Each write is recorded once, by the coordinator the client sent it
	// to, naming the caller the leader authorized; the forged ones sent to
	// the leader directly are recorded too (a forged forward marker hides
	// nothing).
	var trail struct {
		Records []api.AuditRecord `json:"records"`
	}
	cl.do(c.URL, "GET", "/sluice/audit?limit=10000", nil, ada...).JSON(t, &trail)
	type write struct {
		principal, method, path string
		status                  int
		follower                bool
	}
	got := map[write]int{}
	for _, rec := range trail.Records {
		got[write{rec.Principal, rec.Method, rec.Path, rec.Status, strings.HasSuffix(followerURL, rec.Coordinator)}]++
	}
	for _, w := range []write{
		{"tom", "POST", "/connectors", http.StatusCreated, true},
		{"tom", "POST", "/connectors", http.StatusForbidden, true},
		{"ada", "POST", "/connectors", http.StatusCreated, true},
		{"tom", "DELETE", "/connectors/" + mine, http.StatusForbidden, true},
		{"robot", "PUT", "/connectors/" + mine + "/pause", http.StatusAccepted, true},
		{"robot", "PUT", "/connectors/" + theirs + "/pause", http.StatusForbidden, true},
		{"anonymous", "DELETE", "/connectors/" + theirs, http.StatusUnauthorized, false},
		{"tom", "DELETE", "/connectors/" + theirs, http.StatusForbidden, false},
		{"ada", "DELETE", "/connectors/" + theirs, http.StatusNoContent, true},
	} {
		if got[w] != 1 {
			t.Errorf("%+v: %d audit records, want 1 (all: %v)", w, got[w], got)
		}
	}

	// Plain HTTP to the HTTPS port is refused, with the JSON error body.
	resp, err := http.Get("http://" + strings.TrimPrefix(c.URL, "https://") + "/connectors")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "HTTPS only") {
		t.Fatalf("plain HTTP: %d %s", resp.StatusCode, body)
	}
}
