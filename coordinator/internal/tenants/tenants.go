// Package tenants reads the tenants file (--tenants-file) and finds the
// tenant of a connector: the teams of a cluster, each a connector-name
// pattern with the topics, consumer groups and secrets its connectors may
// use (docs/security.md, "Multi-tenant setup").
//
//	strict: true                      # a connector of no tenant may touch nothing
//	tenants:
//	  - name: team-a
//	    connectors: ["team-a-*"]      # which connectors are the tenant's, by name
//	    topics: ["team-a.*"]          # what they may produce to and consume from
//	    groups: ["connect-team-a-*"]  # the consumer groups their sinks may use
//	    secrets:
//	      paths: ["/etc/sluice/secrets/team-a"]   # ${file:…}, ${directory:…}
//	      env: ["TEAM_A_*"]                       # ${env:…}
//	    kafka_principal: team-a       # the one SASL user its clients may override to
//
// What a connector may touch follows from its name's tenant, never from
// who wrote its config.
package tenants

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sluice-io/sluice/coordinator/internal/yamlfile"
	"github.com/sluice-io/sluice/shared/wire"
)

// Tenant is one team's rules.
type Tenant struct {
	Name string
	// Connectors are the name patterns (path.Match) of its connectors.
	Connectors []string
	// Topics and Groups are the patterns of the topics and consumer groups
	// its connectors may use.
	Topics, Groups []string
	// SecretPaths and SecretEnv confine its config placeholders.
	SecretPaths, SecretEnv []string
	// KafkaPrincipal, when set, is the SASL user its connectors' clients
	// may authenticate as (sasl.jaas.config overrides): no other.
	KafkaPrincipal string
}

// Tenants is a parsed tenants file. A nil *Tenants has no tenants: every
// connector may touch what it names (Sluice's own topics aside).
type Tenants struct {
	Path string
	// Strict: a connector whose name matches no tenant may touch nothing.
	Strict bool
	List   []Tenant
}

// Load reads and checks the tenants file at file.
func Load(file string) (*Tenants, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("tenants file: %w", err)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("tenants file %s: %w", file, err)
	}
	t.Path = file
	return t, nil
}

// Parse parses a tenants file's contents.
func Parse(data []byte) (*Tenants, error) {
	root, err := yamlfile.Root(data, "a tenants list")
	if err != nil {
		return nil, err
	}
	fields, err := yamlfile.Mapping(root, "strict", "tenants")
	if err != nil {
		return nil, err
	}
	t := &Tenants{}
	if n, ok := fields["strict"]; ok {
		if err := yamlfile.Scalar(n, "strict", &t.Strict); err != nil {
			return nil, err
		}
	}
	list, ok := fields["tenants"]
	if !ok || list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		return nil, yamlfile.LineError(root, "tenants must be a non-empty list")
	}
	seen := map[string]int{}
	for _, n := range list.Content {
		tn, err := parseTenant(n)
		if err != nil {
			return nil, err
		}
		if line, dup := seen[tn.Name]; dup {
			return nil, yamlfile.LineError(n, "tenant %q is listed twice (first at line %d)", tn.Name, line)
		}
		seen[tn.Name] = n.Line
		t.List = append(t.List, tn)
	}
	return t, nil
}

func checkPattern(p string) error {
	if _, err := path.Match(p, ""); err != nil {
		return fmt.Errorf("pattern %q: %w", p, err)
	}
	return nil
}

func checkDir(d string) error {
	if !filepath.IsAbs(d) {
		return fmt.Errorf("secret path %s is not absolute", d)
	}
	return nil
}

func parseTenant(n *yaml.Node) (Tenant, error) {
	var t Tenant
	fields, err := yamlfile.Mapping(n, "name", "connectors", "topics", "groups", "secrets", "kafka_principal")
	if err != nil {
		return t, err
	}
	v, ok := fields["name"]
	if !ok {
		return t, yamlfile.LineError(n, "a tenant needs a name")
	}
	if err := yamlfile.Scalar(v, "name", &t.Name); err != nil {
		return t, err
	}
	if t.Name == "" {
		return t, yamlfile.LineError(v, "name must not be empty")
	}
	c, ok := fields["connectors"]
	if !ok {
		return t, yamlfile.LineError(n, "tenant %q needs connectors: the name patterns of its connectors", t.Name)
	}
	if t.Connectors, err = yamlfile.Strings(c, "connectors", "a name pattern", false, checkPattern); err != nil {
		return t, err
	}
	// Topics and groups may be empty: such a tenant's connectors use none.
	for key, dst := range map[string]*[]string{"topics": &t.Topics, "groups": &t.Groups} {
		*dst = []string{}
		if v, ok := fields[key]; ok {
			if *dst, err = yamlfile.Strings(v, key, "a pattern", true, checkPattern); err != nil {
				return t, err
			}
		}
	}
	if v, ok := fields["kafka_principal"]; ok {
		if err := yamlfile.Scalar(v, "kafka_principal", &t.KafkaPrincipal); err != nil {
			return t, err
		}
		// Kafka's ACLs spell it User:<name>; the SASL user is <name>.
		t.KafkaPrincipal = strings.TrimPrefix(t.KafkaPrincipal, "User:")
	}
	if s, ok := fields["secrets"]; ok {
		sf, err := yamlfile.Mapping(s, "paths", "env")
		if err != nil {
			return t, err
		}
		if v, ok := sf["paths"]; ok {
			if t.SecretPaths, err = yamlfile.Strings(v, "paths", "a directory", true, checkDir); err != nil {
				return t, err
			}
		}
		if v, ok := sf["env"]; ok {
			if t.SecretEnv, err = yamlfile.Strings(v, "env", "a variable pattern", true, checkPattern); err != nil {
				return t, err
			}
		}
	}
	return t, nil
}

// Of returns the tenant of a connector: the first, in the file's order,
// whose connector patterns match its name.
func (t *Tenants) Of(connector string) (*Tenant, bool) {
	if t == nil {
		return nil, false
	}
	for i := range t.List {
		for _, p := range t.List[i].Connectors {
			if ok, _ := path.Match(p, connector); ok {
				return &t.List[i], true
			}
		}
	}
	return nil, false
}

// Policy is what a connector may touch, as its tasks are told: its
// tenant's rules; under strict tenancy, for a connector of no tenant,
// nothing; nil without tenants, or for a connector of no tenant when they
// are not strict.
func (t *Tenants) Policy(connector string) *wire.TenantPolicy {
	if t == nil {
		return nil
	}
	tn, ok := t.Of(connector)
	if !ok {
		if t.Strict {
			return &wire.TenantPolicy{Topics: []string{}, Groups: []string{}}
		}
		return nil
	}
	return &wire.TenantPolicy{Tenant: tn.Name, Topics: slices.Clone(tn.Topics), Groups: slices.Clone(tn.Groups),
		SecretPaths: slices.Clone(tn.SecretPaths), SecretEnv: slices.Clone(tn.SecretEnv), KafkaPrincipal: tn.KafkaPrincipal}
}

// ConnectorPatterns returns a tenant's connector patterns, for a grant
// over the tenant.
func (t *Tenants) ConnectorPatterns(tenant string) ([]string, bool) {
	if t == nil {
		return nil, false
	}
	for _, tn := range t.List {
		if tn.Name == tenant {
			return slices.Clone(tn.Connectors), true
		}
	}
	return nil, false
}
