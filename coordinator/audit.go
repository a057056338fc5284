package coordinator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/audit"
	"github.com/sluice-io/sluice/coordinator/internal/health"
	"github.com/sluice-io/sluice/coordinator/internal/httpapi"
	"github.com/sluice-io/sluice/coordinator/internal/loglevels"
	"github.com/sluice-io/sluice/shared/logging"
)

// The defaults of AuditConfig.
const (
	DefaultAuditTopic     = audit.DefaultTopic
	DefaultAuditRetention = audit.DefaultRetention
	DefaultAuditTimeout   = audit.DefaultTimeout
)

// AuditConfig configures the audit trail: every REST write is recorded in
// the audit topic by the coordinator that received it (docs/security.md).
type AuditConfig struct {
	// Topic is the audit topic, created if missing with one partition,
	// cleanup.policy=delete and retention.ms=Retention (default
	// DefaultAuditTopic).
	Topic string
	// Retention is the topic's retention when Sluice creates it (default
	// DefaultAuditRetention, 90 days).
	Retention time.Duration
	// Timeout bounds how long a write's answer waits for its record to be
	// written (default DefaultAuditTimeout); a record not written by then
	// is still delivered later, or counted and logged as lost.
	Timeout time.Duration
	// Principal names the caller of a request (nil: "anonymous").
	Principal func(*http.Request) string
	// Forwarded reports whether another coordinator forwarded a request,
	// and recorded it already (nil: it carries the X-Sluice-Forwarded
	// header).
	Forwarded func(*http.Request) bool
	// Mask hides secrets of the configs recorded (nil: the values of the
	// keys the connector plugin's ConfigDef declares PASSWORD read
	// "[hidden]").
	Mask func(connectorClass string, config map[string]string) map[string]string
}

func (a AuditConfig) validate() error {
	if a.Retention < 0 || a.Timeout < 0 {
		return errors.New("audit retention and timeout must not be negative")
	}
	return nil
}

// adminService is the REST API's httpapi.Admin: server info, health and
// readiness (health), the loggers (loglevels), the audit topic's reader,
// and the process's metrics.
type adminService struct {
	*health.Monitor
	*loglevels.Service
	audit   *audit.Log
	metrics prometheus.Gatherer
}

// AuditLog implements httpapi.Admin.
func (s adminService) AuditLog(ctx context.Context, q audit.Query) (api.AuditLog, error) {
	log, err := s.audit.Read(ctx, q)
	if err != nil {
		return api.AuditLog{}, api.Errorf(api.CodeInternal, "Failed to read the audit topic: %v", err)
	}
	return log, nil
}

// newAuditLog makes the audit topic's writer and reader over the
// coordinator's Kafka options.
func (c *Coordinator) newAuditLog(kafkaOpts []kgo.Opt) (*audit.Log, error) {
	l, err := audit.New(audit.Config{
		Topic:     c.cfg.Audit.Topic,
		Retention: c.cfg.Audit.Retention,
		Timeout:   c.cfg.Audit.Timeout,
		KafkaOpts: kafkaOpts,
		Logger:    c.cfg.Loggers.Logger(logging.REST),
		Gate:      c.signing,
	})
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return l, nil
}

// startAudit creates the audit topic if it is missing, before the
// coordinator takes any write.
func (c *Coordinator) startAudit(ctx context.Context) error {
	if err := c.audit.EnsureTopic(ctx); err != nil {
		return fmt.Errorf("audit topic: %w", err)
	}
	return nil
}

// auditOption records the REST writes this coordinator (at workerID)
// receives.
func (c *Coordinator) auditOption(workerID string) httpapi.Option {
	mask := c.cfg.Audit.Mask
	if mask == nil {
		mask = audit.PasswordMask(c.plugins())
	}
	return httpapi.WithAudit(httpapi.Audit{
		Recorder:    c.audit,
		States:      c.herder,
		Principal:   c.cfg.Audit.Principal,
		Forwarded:   c.cfg.Audit.Forwarded,
		Mask:        mask,
		Coordinator: workerID,
	})
}
