package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// silentServer accepts connections and never answers on them, as a hung
// process does; it returns its address.
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// A server that accepts and never answers: a read ends after
// --connect-timeout, a write after --timeout, each with exit code 3 and
// a message that says which and what to check.
func TestServerNeverAnswers(t *testing.T) {
	t.Setenv("SLUICE_CONFIG", filepath.Join(t.TempDir(), "config.yaml"))
	addr := silentServer(t)
	_, errOut, code := runCLI(t, "get", "connectors", "--url", addr, "--connect-timeout", "300ms")
	want := "sluice: cannot reach Sluice at http://" + addr + ": no answer to GET /connectors within 300ms (--connect-timeout) — is it the URL of Sluice's REST API, and is the server up?\n"
	if code != exitNoServer || errOut != want {
		t.Fatalf("a read: exit %d, %q; want %d, %q", code, errOut, exitNoServer, want)
	}
	_, errOut, code = runCLI(t, "pause", "orders-src", "--url", addr, "--timeout", "500ms")
	want = "sluice: cannot reach Sluice at http://" + addr + ": no answer to PUT /connectors/orders-src/pause before --timeout ran out: context deadline exceeded — is the server up? --timeout gives it longer\n"
	if code != exitNoServer || !strings.HasSuffix(errOut, want) {
		t.Fatalf("a write: exit %d, %q; want %d, %q", code, errOut, exitNoServer, want)
	}
}

// HTTPS spoken to a plain HTTP server, plain HTTP to an HTTPS one, and a
// certificate no CA given vouches for: exit 3, each said with the --url or
// --ca that fixes it.
func TestTLSMismatch(t *testing.T) {
	t.Setenv("SLUICE_CONFIG", filepath.Join(t.TempDir(), "config.yaml"))
	answer := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[]`))
	})
	plain := httptest.NewServer(answer)
	t.Cleanup(plain.Close)
	secure := httptest.NewTLSServer(answer)
	t.Cleanup(secure.Close)
	plainAddr := strings.TrimPrefix(plain.URL, "http://")
	secureAddr := strings.TrimPrefix(secure.URL, "https://")

	for _, c := range []struct {
		url, want string
	}{
		{"https://" + plainAddr, "sluice: cannot reach Sluice at https://" + plainAddr + ": it answers plain HTTP, not HTTPS — use --url http://" + plainAddr + "\n"},
		{"http://" + secureAddr, "sluice: cannot reach Sluice at http://" + secureAddr + ": it answers HTTPS only — use --url https://" + secureAddr + " (and --ca if its certificate is not from a CA this machine trusts)\n"},
	} {
		if _, errOut, code := runCLI(t, "get", "connectors", "--url", c.url); code != exitNoServer || errOut != c.want {
			t.Errorf("--url %s: exit %d, %q; want %d, %q", c.url, code, errOut, exitNoServer, c.want)
		}
	}
	_, errOut, code := runCLI(t, "get", "connectors", "--url", "https://"+secureAddr)
	if code != exitNoServer || !strings.Contains(errOut, "its certificate is not trusted") || !strings.HasSuffix(errOut, "— give --ca with the PEM of the CA that signed it\n") {
		t.Errorf("an untrusted certificate: exit %d, %q", code, errOut)
	}
	// The right scheme works.
	if out := mustCLI(t, "connectors", "list", "--url", plainAddr); strings.TrimSpace(out) != "[]" {
		t.Errorf("plain HTTP: %q", out)
	}
}

// An unknown command or flag is exit 2 with the close ones, if any.
func TestDidYouMeanCommandsAndFlags(t *testing.T) {
	t.Setenv("SLUICE_CONFIG", filepath.Join(t.TempDir(), "config.yaml"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"paus", "x"}, "sluice: unknown command 'paus' (--help lists the commands); did you mean pause?\n"},
		{[]string{"get", "conectors"}, "sluice: unknown command 'conectors' (--help lists the commands); did you mean connectors?\n"},
		{[]string{"get", "connectors", "--urll", "x"}, "sluice: flag provided but not defined: -urll; did you mean --url?\n"},
		{[]string{"xyzzy"}, "sluice: unknown command 'xyzzy' (--help lists the commands)\n"},
	} {
		if _, errOut, code := runCLI(t, c.args...); code != exitUsage || errOut != c.want {
			t.Errorf("sluice %q: exit %d, %q; want %d, %q", c.args, code, errOut, exitUsage, c.want)
		}
	}
}
