package coordinator

import (
	"strings"
	"testing"
	"time"
)

// TestValidateAudit: a negative audit retention or timeout is refused at
// start; zero takes the default.
func TestValidateAudit(t *testing.T) {
	for _, tt := range []struct {
		audit AuditConfig
		ok    bool
	}{
		{AuditConfig{}, true},
		{AuditConfig{Topic: "a", Retention: time.Hour, Timeout: time.Second}, true},
		{AuditConfig{Retention: -time.Hour}, false},
		{AuditConfig{Timeout: -time.Second}, false},
	} {
		cfg := validConfig()
		cfg.Audit = tt.audit
		err := cfg.Validate()
		if tt.ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), "audit retention and timeout")) {
			t.Errorf("audit %+v: %v, want ok %v", tt.audit, err, tt.ok)
		}
	}
}

// validConfig is a config that passes Validate, for tests to change one
// thing of.
func validConfig() Config {
	return Config{NATSURL: "nats://127.0.0.1:4222", Brokers: "127.0.0.1:9092", GroupID: "g", ConfigTopic: "c",
		OffsetsTopic: "o", StatusTopic: "s", AgentLease: time.Second, TaskShutdownTimeout: time.Second}
}
