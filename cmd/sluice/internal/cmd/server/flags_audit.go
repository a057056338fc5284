package server

import (
	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/envflag"
	"github.com/sluice-io/sluice/coordinator"
)

// The audit trail's flags (docs/security.md).
var (
	auditTopicFlag     = envflag.String("audit-topic", coordinator.DefaultAuditTopic, "audit topic: a record of every REST write (1 partition, cleanup.policy=delete; created if it never existed, see --internal-topics-automatic-creation)")
	auditRetentionFlag = envflag.Duration("audit-retention", coordinator.DefaultAuditRetention, "retention.ms of the audit topic when Sluice creates it (an existing topic keeps its own)")
	auditTimeoutFlag   = envflag.Duration("audit-timeout", coordinator.DefaultAuditTimeout, "how long a REST write's answer waits for its audit record to be written; a record not written by then is delivered later or logged as lost")
)

// auditConfig reads the audit flags.
func auditConfig(c *cli.Context) coordinator.AuditConfig {
	return coordinator.AuditConfig{
		Topic:     c.String("audit-topic"),
		Retention: c.Duration("audit-retention"),
		Timeout:   c.Duration("audit-timeout"),
	}
}
