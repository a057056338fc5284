package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Audit is GET /sluice/audit: the audit trail of REST writes
// (docs/security.md). Sluice only; admins only. Get one from Client.Audit.
type Audit struct{ c *Client }

// AuditQuery selects audit records.
type AuditQuery struct {
	// Connector keeps the records of one connector ("": all).
	Connector string
	// Principal keeps the records of one caller ("": all).
	Principal string
	// Operation keeps the records of one operation, or of those a glob
	// matches, such as "offsets.*" ("": all).
	Operation string
	// Since keeps the records from this time on (zero: no bound).
	Since time.Time
	// Until keeps the records from before this time (zero: no bound): the
	// oldest record's time of one page is the next page's Until.
	Until time.Time
	// Limit bounds the records returned (0: the server's default).
	Limit int
}

// Log is GET /sluice/audit: the records q selects, newest first.
func (g *Audit) Log(ctx context.Context, q AuditQuery) (AuditLog, error) {
	params := url.Values{}
	for name, v := range map[string]string{"connector": q.Connector, "principal": q.Principal, "operation": q.Operation} {
		if v != "" {
			params.Set(name, v)
		}
	}
	for name, t := range map[string]time.Time{"since": q.Since, "until": q.Until} {
		if !t.IsZero() {
			params.Set(name, t.UTC().Format(time.RFC3339Nano))
		}
	}
	if q.Limit > 0 {
		params.Set("limit", strconv.Itoa(q.Limit))
	}
	var out AuditLog
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: "/sluice/audit", query: params, safe: true}, &out)
	return out, err
}

// Admin is the coordinator itself: GET /, /health, /readyz, /metrics,
// /openapi.json and /admin/loggers (KIP-495, KIP-976). Get one from
// Client.Admin.
type Admin struct{ c *Client }

// LoggerLevel is one logger's level as /admin/loggers shows it.
type LoggerLevel struct {
	Level string `json:"level"`
	// LastModified is when the level was last set (epoch milliseconds);
	// nil when never.
	LastModified *int64 `json:"last_modified"`
}

// ServerInfo is GET /: the server's version, commit and Kafka cluster id,
// and Sluice's own version from the X-Sluice-Version header.
func (g *Admin) ServerInfo(ctx context.Context) (ServerInfo, error) {
	var out ServerInfo
	a, err := g.c.do(ctx, call{method: http.MethodGet, path: "/", safe: true}, &out)
	if err == nil {
		out.SluiceVersion = a.header.Get(VersionHeader)
	}
	return out, err
}

// Health is GET /health (KIP-1017). It is sent once, as a probe is: a
// coordinator that is starting or unhealthy answers 503 or 500 with a
// health document, returned together with an *Error carrying its status
// and message.
func (g *Admin) Health(ctx context.Context) (Health, error) {
	var out Health
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: "/health", safe: true, noRetry: true, errOut: &out}, &out)
	return out, err
}

// Readiness is GET /readyz: ready once the coordinator read its topics; an
// *Error (503) says why not. Sent once, as a probe is.
func (g *Admin) Readiness(ctx context.Context) (Readiness, error) {
	var out Readiness
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: "/readyz", safe: true, noRetry: true}, &out)
	return out, err
}

// Metrics is GET /metrics: the coordinator's metrics in Prometheus's text
// exposition format.
func (g *Admin) Metrics(ctx context.Context) (string, error) {
	ans, err := g.c.do(ctx, call{method: http.MethodGet, path: "/metrics", safe: true}, nil)
	return string(ans.body), err
}

// OpenAPIDocument is GET /openapi.json: the OpenAPI 3.1 document of the
// REST API the coordinator serves (OpenAPI is this module's own copy).
func (g *Admin) OpenAPIDocument(ctx context.Context) ([]byte, error) {
	ans, err := g.c.do(ctx, call{method: http.MethodGet, path: "/openapi.json", safe: true}, nil)
	return ans.body, err
}

// Loggers is GET /admin/loggers: the levels of the coordinator's loggers
// that are not OFF, by name.
func (g *Admin) Loggers(ctx context.Context) (map[string]LoggerLevel, error) {
	var out map[string]LoggerLevel
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: "/admin/loggers", safe: true}, &out)
	return out, err
}

// Logger is GET /admin/loggers/{name}.
func (g *Admin) Logger(ctx context.Context, name string) (LoggerLevel, error) {
	var out LoggerLevel
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/admin/loggers/%s", name), safe: true}, &out)
	return out, err
}

// SetLoggerLevel is PUT /admin/loggers/{name}: level (log4j's names: INFO,
// DEBUG…) on the logger and those below it, in the coordinator the call
// reaches. It returns the names of the loggers whose level changed.
func (g *Admin) SetLoggerLevel(ctx context.Context, name, level string) ([]string, error) {
	var out []string
	_, err := g.c.do(ctx, call{method: http.MethodPut, path: pathf("/admin/loggers/%s", name), body: map[string]string{"level": level}, safe: true}, &out)
	return out, err
}

// SetClusterLoggerLevel is PUT /admin/loggers/{name}?scope=cluster: level
// on the logger in every coordinator and agent of the cluster.
func (g *Admin) SetClusterLoggerLevel(ctx context.Context, name, level string) error {
	q := url.Values{"scope": {"cluster"}}
	_, err := g.c.do(ctx, call{method: http.MethodPut, path: pathf("/admin/loggers/%s", name), query: q, body: map[string]string{"level": level}, safe: true}, nil)
	return err
}
