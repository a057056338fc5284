package main

import (
	"bytes"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClientCredentials runs the CLI against an HTTPS server trusting it by
// --ca, with Basic credentials and with a bearer token, each read from a file.
func TestClientCredentials(t *testing.T) {
	var gotAuth string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		if user, pw, ok := r.BasicAuth(); ok && (user != "ada" || pw != "s3cret") {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error_code":401,"message":"The Basic credentials were refused"}`))
			return
		}
		_, _ = w.Write([]byte(`["a"]`))
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ca := write("ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))
	run := func(args ...string) (string, error) {
		app := newApp()
		var out bytes.Buffer
		app.Writer = &out
		args = append(append([]string{"sluice", "connectors", "--url", srv.URL, "--ca", ca}, args...), "list")
		err := app.Run(args)
		return out.String(), err
	}
	out, err := run("--user", "ada", "--password-file", write("pw", "s3cret\n"))
	if err != nil || !strings.Contains(out, `"a"`) || !strings.HasPrefix(gotAuth, "Basic ") {
		t.Fatalf("basic: %q, %v (Authorization %q)", out, err, gotAuth)
	}
	if _, err := run("--user", "ada", "--password-file", write("bad", "nope\n")); err == nil || !strings.Contains(err.Error(), "401: The Basic credentials were refused") {
		t.Fatalf("wrong password: %v", err)
	}
	if _, err := run("--token-file", write("token", "sluice_abc\n")); err != nil || gotAuth != "Bearer sluice_abc" {
		t.Fatalf("token: %v (Authorization %q)", err, gotAuth)
	}
	if _, err := run("--user", "ada"); err == nil || !strings.Contains(err.Error(), "--password-file") {
		t.Fatalf("user without password file: %v", err)
	}
	if _, err := run("--token-file", filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "--token-file") {
		t.Fatalf("missing token file: %v", err)
	}
}
