package server

import (
	"testing"
	"time"
)

// The audit flags take SLUICE_AUDIT_* variables and reach the coordinator.
func TestAuditFlags(t *testing.T) {
	t.Setenv("SLUICE_AUDIT_TOPIC", "team-audit")
	t.Setenv("SLUICE_AUDIT_TIMEOUT", "750ms")
	c := flagContext(t, coordinatorFlags()...)
	cfg, err := coordinatorConfig(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := cfg.Audit; a.Topic != "team-audit" || a.Timeout != 750*time.Millisecond || a.Retention != 90*24*time.Hour {
		t.Fatalf("audit config %+v", a)
	}
}

// TestRESTSecurityFlags checks the REST security flags reach the
// coordinator's config, from the environment too.
func TestRESTSecurityFlags(t *testing.T) {
	t.Setenv("SLUICE_REST_AUTH_FILE", "/etc/sluice/auth.yaml")
	t.Setenv("SLUICE_REST_AUTH_OPEN_PROBES", "true")
	t.Setenv("SLUICE_REST_TLS_CERT", "c.pem")
	c := flagContext(t, coordinatorFlags()...)
	cfg, err := coordinatorConfig(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.RESTSecurity
	if s.AuthFile != "/etc/sluice/auth.yaml" || !s.OpenProbes || s.TLSCert != "c.pem" || s.JWTRolesClaim != "roles" {
		t.Fatalf("REST security %+v", s)
	}
}
