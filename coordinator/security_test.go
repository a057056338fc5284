package coordinator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBadSecurityInputStopsStartUp: a malformed auth file, an unknown role,
// a bad hash, an unreadable key file or an invalid TLS pair stops New with
// a message naming the file and the line or flag.
func TestBadSecurityInputStopsStartUp(t *testing.T) {
	dir := t.TempDir()
	const hash = "$2a$04$1rRFr0sFMsm6YD3brRIVf.QqjyH8Cw0QIh3zNb0YcyPLNeIxmbk9W" // bcrypt of "pw", cost 4
	good := write(t, dir, "good.yaml", "principals:\n  - name: a\n    password_bcrypt: \""+hash+"\"\n    grants: [{role: admin}]\n")
	cert := write(t, dir, "cert.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	tests := []struct {
		name string
		sec  RESTSecurity
		want []string
	}{
		{"malformed YAML", RESTSecurity{AuthFile: write(t, dir, "bad.yaml", "principals:\n  - name: a\n    grants: x: y\n")},
			[]string{"bad.yaml", "line 3"}},
		{"unknown role", RESTSecurity{AuthFile: write(t, dir, "role.yaml", "principals:\n  - name: a\n    token_sha256: "+strings.Repeat("ab", 32)+"\n    grants:\n      - role: superuser\n")},
			[]string{"role.yaml", "line 5", `unknown role "superuser"`}},
		{"bad bcrypt hash", RESTSecurity{AuthFile: write(t, dir, "hash.yaml", "principals:\n  - name: a\n    password_bcrypt: plain\n    grants: [{role: viewer}]\n")},
			[]string{"hash.yaml", "line 3", "not a bcrypt hash"}},
		{"bad token hash", RESTSecurity{AuthFile: write(t, dir, "tok.yaml", "principals:\n  - name: a\n    token_sha256: xyz\n    grants: [{role: viewer}]\n")},
			[]string{"tok.yaml", "line 3", "64 hex digits"}},
		{"unknown field", RESTSecurity{AuthFile: write(t, dir, "field.yaml", "principals:\n  - name: a\n    pasword: x\n")},
			[]string{"field.yaml", "line 3", `unknown field "pasword"`}},
		{"bad pattern", RESTSecurity{AuthFile: write(t, dir, "pat.yaml", "principals:\n  - name: a\n    client_certificate: true\n    grants:\n      - role: viewer\n        connectors: [\"team-[\"]\n")},
			[]string{"pat.yaml", "line 6", "team-["}},
		{"missing auth file", RESTSecurity{AuthFile: filepath.Join(dir, "nope.yaml")}, []string{"nope.yaml", "no such file"}},
		{"unreadable forward key", RESTSecurity{AuthFile: good, ForwardKeyFile: filepath.Join(dir, "nokey")}, []string{"forward key file", "nokey"}},
		{"short forward key", RESTSecurity{AuthFile: good, ForwardKeyFile: write(t, dir, "short.key", "abc\n")}, []string{"short.key", "fewer than 32"}},
		{"invalid TLS pair", RESTSecurity{TLSCert: cert, TLSKey: write(t, dir, "key.pem", "not a key")}, []string{"--rest-tls-cert", "cert.pem", "key.pem"}},
		{"TLS cert without key", RESTSecurity{TLSCert: cert}, []string{"--rest-tls-key"}},
		{"client CA without TLS", RESTSecurity{AuthFile: good, TLSClientCA: write(t, dir, "ca.pem", "junk")}, []string{"--rest-tls-client-ca", "ca.pem", "no PEM certificate"}},
		{"missing JWKS file", RESTSecurity{JWKS: filepath.Join(dir, "jwks.json")}, []string{"--rest-jwt-jwks", "jwks.json"}},
		{"JWKS without keys", RESTSecurity{JWKS: write(t, dir, "empty.json", `{"keys":[]}`)}, []string{"empty.json", "no RSA or EC signing key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := validConfig()
			cfg.RESTSecurity = tt.sec
			_, err := New(cfg)
			if err == nil {
				t.Fatal("New took it")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	cfg := validConfig()
	cfg.RESTSecurity = RESTSecurity{AuthFile: good}
	if _, err := New(cfg); err != nil {
		t.Fatalf("a good auth file: %v", err)
	}
}
