package configprovider

import (
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/sluice-io/sluice/connect/allowedpaths"
	"github.com/sluice-io/sluice/shared/wire"
)

// Scope confines the placeholders of one connector's config to what its
// owner may read: the paths of ${file:…} and ${directory:…} and the
// variables of ${env:…}. A tenant's connector may so name only the
// tenant's secrets, never another team's credentials file — which would
// make it that team's Kafka principal. Empty lists allow nothing.
type Scope struct {
	// Owner names whose secrets these are, for errors: "tenant team-a".
	Owner string
	// Paths are absolute directories a file or directory placeholder's
	// path must lie under (cleaned, and with its symlinks resolved where
	// the path exists on this host).
	Paths []string
	// Env are path.Match patterns of the variables an env placeholder may
	// read.
	Env []string
}

// ScopeError refuses a placeholder outside its config's scope. It names
// the placeholder's provider and path or variable — never a value.
type ScopeError struct {
	Owner, Provider, Name string
	Allowed               []string
}

// Error names the path or variable refused and the scope it is outside.
func (e *ScopeError) Error() string {
	what := "path"
	if e.Provider == Env {
		what = "variable"
	}
	allowed := strings.Join(e.Allowed, ", ")
	if allowed == "" {
		allowed = "none"
	}
	return fmt.Sprintf("the %s placeholder's %s %s is not one %s may read (%s)", e.Provider, what, e.Name, e.Owner, allowed)
}

// check refuses v when it reaches outside s.
func (s *Scope) check(v variable) error {
	switch v.provider {
	case File, Directory:
		if s.allowsPath(v.path) {
			return nil
		}
		return &ScopeError{Owner: s.Owner, Provider: v.provider, Name: v.path, Allowed: s.Paths}
	case Env:
		for _, p := range s.Env {
			if ok, _ := path.Match(p, v.key); ok {
				return nil
			}
		}
		return &ScopeError{Owner: s.Owner, Provider: v.provider, Name: v.key, Allowed: s.Env}
	}
	return &ScopeError{Owner: s.Owner, Provider: v.provider, Name: v.path + ":" + v.key}
}

// allowsPath judges p lexically (a relative path or one with ".." cannot
// climb out), then, when p exists here, by where its symlinks lead.
func (s *Scope) allowsPath(p string) bool {
	if len(s.Paths) == 0 || !strings.HasPrefix(p, "/") || !allowedpaths.AllowsLexically(p, "/", s.Paths) {
		return false
	}
	if _, err := os.Lstat(p); err != nil {
		return true // nothing here to follow; the host that reads it checks again
	}
	dirs, err := allowedpaths.New(s.Paths)
	if err != nil {
		return false
	}
	_, err = dirs.Check(p, "/")
	return err == nil // outside, or a link that cannot be followed
}

// TenantScope is the scope of a connector under a tenant policy: the
// tenant's secret paths and variables; nil (no scope) without a policy.
func TenantScope(p *wire.TenantPolicy) *Scope {
	if p == nil {
		return nil
	}
	owner := "tenant " + p.Tenant
	if p.Tenant == "" {
		owner = "a connector of no tenant"
	}
	return &Scope{Owner: owner, Paths: p.SecretPaths, Env: p.SecretEnv}
}
