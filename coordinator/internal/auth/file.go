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
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/crypto/bcrypt"
	"gopkg.in/yaml.v3"
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
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth file: %w", err)
	}
	f, err := ParseFile(data)
	if err != nil {
		return nil, fmt.Errorf("auth file %s: %w", path, err)
	}
	f.Path = path
	return f, nil
}

// lineError is an error at a line of the file.
func lineError(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("line %d: %s", n.Line, fmt.Sprintf(format, args...))
}

// ParseFile parses an auth file's contents.
func ParseFile(data []byte) (*File, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		// yaml.v3's messages start "yaml: line N: …".
		return nil, errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil, errors.New("the file is empty: it must have a principals list")
	}
	root := doc.Content[0]
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

// mapping checks that n is a mapping with no key but allowed, and returns
// its values by key.
func mapping(n *yaml.Node, allowed ...string) (map[string]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, lineError(n, "expected a mapping with the fields %s", strings.Join(allowed, ", "))
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		known := false
		for _, a := range allowed {
			known = known || k.Value == a
		}
		if !known {
			return nil, lineError(k, "unknown field %q (the fields are %s)", k.Value, strings.Join(allowed, ", "))
		}
		if _, dup := out[k.Value]; dup {
			return nil, lineError(k, "field %q given twice", k.Value)
		}
		out[k.Value] = v
	}
	return out, nil
}

// scalar decodes a scalar field into dst.
func scalar(n *yaml.Node, field string, dst any) error {
	if n.Kind != yaml.ScalarNode {
		return lineError(n, "%s must be a single value", field)
	}
	if err := n.Decode(dst); err != nil {
		return lineError(n, "%s: %v", field, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return nil
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
		return nil, lineError(n, "grants must be a non-empty list of {role, connectors}")
	}
	var out []Grant
	for _, gn := range n.Content {
		fields, err := mapping(gn, "role", "connectors")
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
			if cn.Kind != yaml.SequenceNode || len(cn.Content) == 0 {
				return nil, lineError(cn, "connectors must be a non-empty list of name patterns")
			}
			for _, pn := range cn.Content {
				var p string
				if err := scalar(pn, "a connector pattern", &p); err != nil {
					return nil, err
				}
				if err := CheckPattern(p); err != nil {
					return nil, lineError(pn, "%v", err)
				}
				g.Connectors = append(g.Connectors, p)
			}
		}
		out = append(out, g)
	}
	return out, nil
}
