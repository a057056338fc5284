package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
)

// TestRESTSecurityCLI makes credentials with `sluice auth`, starts `sluice
// dev` over HTTPS with an auth file of them, and drives it with the CLI's
// --url https://…, --ca, --user/--password-file and --token-file.
func TestRESTSecurityCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hashCmd := exec.Command(procs.Binary(), "auth", "hash-password")
	hashCmd.Env, hashCmd.Stdin = procs.ChildEnv(), strings.NewReader("s3cret\n")
	hash, err := hashCmd.Output()
	if err != nil || !bytes.HasPrefix(hash, []byte("$2a$")) {
		t.Fatalf("auth hash-password: %q, %v", hash, err)
	}
	out, _, code := sluiceCLI(t, "auth", "new-token")
	var token, tokenHash string
	if _, err := fmt.Sscanf(out, "token: %s\ntoken_sha256: %s\n", &token, &tokenHash); code != 0 || err != nil {
		t.Fatalf("auth new-token: %q, %v", out, err)
	}
	authFile := write("auth.yaml", fmt.Appendf(nil, "principals:\n  - name: ada\n    password_bcrypt: %q\n    grants: [{role: admin}]\n  - name: ci\n    token_sha256: %s\n    grants: [{role: viewer}]\n",
		strings.TrimSpace(string(hash)), tokenHash))
	ca := sluicetest.NewTestCA(t)
	cert, key := ca.Issue(t, "coordinator", true)
	listen := sluicetest.FreeAddr(t)
	dev := procs.StartProc(t, "dev", "dev", "--data-dir", filepath.Join(dir, "data"), "--listen", listen, "--agents", "1",
		"--rest-auth-file", authFile, "--rest-tls-cert", write("cert.pem", cert), "--rest-tls-key", write("key.pem", key))
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		if !dev.Running() {
			t.Fatalf("sluice dev exited before it was ready")
		}
		return len(dev.StdoutLines()) > 0, "no ready line yet"
	})
	base := []string{"connectors", "--url", "https://" + listen, "--ca", write("ca.pem", ca.PEM)}
	pw, tok := write("pw", []byte("s3cret\n")), write("token", []byte(token+"\n"))
	spec := write("c.json", []byte(`{"name":"gen","config":{"connector.class":"GeneratorSource","topic":"gen"},"initial_state":"STOPPED"}`))
	if out, errOut, code := sluiceCLI(t, append(base, "--user", "ada", "--password-file", pw, "create", "-f", spec)...); code != 0 || !strings.Contains(out, `"name": "gen"`) {
		t.Fatalf("create as ada: %s %s", out, errOut)
	}
	// list asks for ?expand=status, which (as Kafka Connect's) leaves out
	// a connector whose status is not written yet.
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		out, errOut, code := sluiceCLI(t, append(base, "--token-file", tok, "list")...)
		if code != 0 {
			t.Fatalf("list with the token: %s %s", out, errOut)
		}
		return strings.Contains(out, `"gen"`), "list with the token: " + out
	})
	if _, errOut, code := sluiceCLI(t, append(base, "--token-file", tok, "delete", "gen")...); code == 0 || !strings.Contains(errOut, "403: Token ci may not DELETE /connectors/gen") {
		t.Fatalf("delete with the viewer token: %s", errOut)
	}
	if _, errOut, code := sluiceCLI(t, append(base, "list")...); code == 0 || !strings.Contains(errOut, "401: Authentication required") {
		t.Fatalf("list without credentials: %s", errOut)
	}
	plain := []string{"connectors", "--url", "http://" + listen, "--user", "ada", "--password-file", pw, "list"}
	if _, errOut, code := sluiceCLI(t, plain...); code == 0 || !strings.Contains(errOut, "HTTPS only") {
		t.Fatalf("list over plain HTTP: %s", errOut)
	}
}
