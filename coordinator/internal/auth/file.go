package auth

// The auth file (docs/security.md):
//
//	principals:
//	  - name: alice
//	    password_bcrypt: "$2a$10$…"        # HTTP Basic
//	    grants:
//	      - role: operator
//	        connectors: ["team-a-*"]
//	  - name: ci
//	    token_sha256: "9f86d0…"            # Authorization: Bearer <token>
//	    grants: [{role: viewer}]
//	  - name: coordinator-2.example.com
//	    client_certificate: true           # a verified client certificate's CN or SAN
//	    grants: [{role: admin}]
//
// Every error names the file and the line of what was wrong.

import (
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"golang.org/x/crypto/bcrypt"
	"gopkg.in/yaml.v3"

	"github.com/sluice-io/sluice/coordinator/internal/yamlfile"
)

// The file's readers, by their yamlfile names.
var (
	lineError = yamlfile.LineError
	mapping   = yamlfile.Mapping
	scalar    = yamlfile.Scalar
)

// Entry is one principal of the auth file: a name and the ways it may
// prove it is that principal, with its grants.
type Entry struct {
	Name string
	// PasswordHash is a bcrypt hash: the principal is an HTTP Basic user.
	PasswordHash []byte
	// TokenHash is the SHA-256 of a bearer token, lower-case hex.
	TokenHash string
	// ClientCertificate: a verified client certificate whose subject CN or
	// a SAN is Name authenticates as this principal.
	ClientCertificate bool
	Grants            []Grant
}

// File is a parsed auth file.
type File struct {
	Path    string
	Entries []Entry
}

// LoadFile reads and checks the auth file at path.
func LoadFile(path string) (*File, error) {
	f, _, err := ReadFile(path)
	return f, err
}

// ReadFile is LoadFile that also returns the bytes it parsed, against
// which a watcher of the file compares what it reads later.
func ReadFile(path string) (*File, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("auth file: %w", err)
	}
	f, err := ParseFile(data)
	if err != nil {
		return nil, data, fmt.Errorf("auth file %s: %w", path, err)
	}
	f.Path = path
	return f, data, nil
}

// ParseFile parses an auth file's contents.
func ParseFile(data []byte) (*File, error) {
	root, err := yamlfile.Root(data, "a principals list")
	if err != nil {
		return nil, err
	}
	fields, err := mapping(root, "principals")
	if err != nil {
		return nil, err
	}
	list, ok := fields["principals"]
	if !ok {
		return nil, lineError(root, "no principals list")
	}
	if list.Kind != yaml.SequenceNode {
		return nil, lineError(list, "principals must be a list")
	}
	f := &File{}
	seen := map[string]int{}
	tokens := map[string]string{}
	for _, n := range list.Content {
		e, err := parseEntry(n)
		if err != nil {
			return nil, err
		}
		if line, dup := seen[e.Name]; dup {
			return nil, lineError(n, "principal %q is listed twice (first at line %d)", e.Name, line)
		}
		seen[e.Name] = n.Line
		if e.TokenHash != "" {
			if other, dup := tokens[e.TokenHash]; dup {
				return nil, lineError(n, "principal %q has the same token_sha256 as %q", e.Name, other)
			}
			tokens[e.TokenHash] = e.Name
		}
		f.Entries = append(f.Entries, e)
	}
	return f, nil
}

func parseEntry(n *yaml.Node) (Entry, error) {
	var e Entry
	fields, err := mapping(n, "name", "password_bcrypt", "token_sha256", "client_certificate", "grants")
	if err != nil {
		return e, err
	}
	v, ok := fields["name"]
	if !ok {
		return e, lineError(n, "a principal needs a name")
	}
	if err := scalar(v, "name", &e.Name); err != nil {
		return e, err
	}
	if e.Name == "" {
		return e, lineError(v, "name must not be empty")
	}
	if v, ok := fields["password_bcrypt"]; ok {
		var h string
		if err := scalar(v, "password_bcrypt", &h); err != nil {
			return e, err
		}
		if _, err := bcrypt.Cost([]byte(h)); err != nil {
			return e, lineError(v, "password_bcrypt of %q is not a bcrypt hash (%v); make one with `sluice auth hash-password`", e.Name, err)
		}
		e.PasswordHash = []byte(h)
	}
	if v, ok := fields["token_sha256"]; ok {
		if err := scalar(v, "token_sha256", &e.TokenHash); err != nil {
			return e, err
		}
		e.TokenHash = strings.ToLower(e.TokenHash)
		if b, err := hex.DecodeString(e.TokenHash); err != nil || len(b) != 32 {
			return e, lineError(v, "token_sha256 of %q must be 64 hex digits, a SHA-256; make one with `sluice auth new-token`", e.Name)
		}
	}
	if v, ok := fields["client_certificate"]; ok {
		if err := scalar(v, "client_certificate", &e.ClientCertificate); err != nil {
			return e, err
		}
	}
	if e.PasswordHash == nil && e.TokenHash == "" && !e.ClientCertificate {
		return e, lineError(n, "principal %q has no credential: give password_bcrypt, token_sha256 or client_certificate: true", e.Name)
	}
	g, ok := fields["grants"]
	if !ok {
		return e, lineError(n, "principal %q has no grants", e.Name)
	}
	if e.Grants, err = parseGrants(g); err != nil {
		return e, err
	}
	return e, nil
}

func parseGrants(n *yaml.Node) ([]Grant, error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, lineError(n, "grants must be a non-empty list of {role, connectors} or {role, tenants}")
	}
	var out []Grant
	for _, gn := range n.Content {
		fields, err := mapping(gn, "role", "connectors", "tenants")
		if err != nil {
			return nil, err
		}
		rn, ok := fields["role"]
		if !ok {
			return nil, lineError(gn, "a grant needs a role")
		}
		var name string
		if err := scalar(rn, "role", &name); err != nil {
			return nil, err
		}
		var g Grant
		if g.Role, err = ParseRole(name); err != nil {
			return nil, lineError(rn, "%v", err)
		}
		if cn, ok := fields["connectors"]; ok {
			if g.Connectors, err = yamlfile.Strings(cn, "connectors", "a name pattern", false, CheckPattern); err != nil {
				return nil, err
			}
		}
		if tn, ok := fields["tenants"]; ok {
			if g.Connectors != nil {
				return nil, lineError(tn, "a grant is over connectors or over tenants, not both: give two grants")
			}
			if g.Tenants, err = yamlfile.Strings(tn, "tenants", "a tenant name", false, nil); err != nil {
				return nil, err
			}
		}
		out = append(out, g)
	}
	return out, nil
}
