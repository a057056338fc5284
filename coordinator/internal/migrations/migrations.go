// Package migrations answers POST /sluice/migrations: the coordinator
// reads a Kafka Connect cluster itself — a browser cannot, another origin
// without CORS — and moves its connectors into Sluice with their
// positions, one at a time, through shared/migrate, the same steps as
// `sluice migrate`.
//
// It reads only the URLs an operator allowed (--migrate-allow-url): the
// coordinator sits inside a network a caller may not reach, and must not
// be a way to make requests to anywhere in it. It sends Kafka Connect
// only the credentials the request body gives, never the caller's, and
// follows no redirect. The connectors are created through the connectors
// service's own create (POST /connectors's validation, tenancy checks,
// initial state and offsets), on the leader: the route is a write, which
// a follower forwards.
package migrations

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/migrate"
)

// The bounds of a migration's waits.
const (
	// DefaultStopTimeout and MaxStopTimeout bound how long one connector
	// may take to stop on Kafka Connect.
	DefaultStopTimeout = 2 * time.Minute
	MaxStopTimeout     = 10 * time.Minute
	// RequestTimeout bounds each request to Kafka Connect.
	RequestTimeout = 30 * time.Second
	// poll is how often a stopping connector's status is read.
	poll = 500 * time.Millisecond
)

// Connectors is what a migration asks of Sluice's connectors service.
type Connectors interface {
	CreateConnector(ctx context.Context, req api.CreateConnectorRequest) (api.CreatedConnector, error)
	ListConnectors(ctx context.Context) ([]string, error)
}

// Plugins are Sluice's plugins and their validation.
type Plugins interface {
	ListPlugins(ctx context.Context, connectorsOnly bool) ([]api.PluginInfo, error)
	ValidateConfig(ctx context.Context, plugin string, config map[string]string) (api.ConfigInfos, error)
}

// Config is what a Service needs.
type Config struct {
	// AllowURLs are the Kafka Connect URLs a migration may read
	// (--migrate-allow-url); none: migrations are off.
	AllowURLs  []string
	Connectors Connectors
	Plugins    Plugins
	// Transport sends the requests to Kafka Connect (nil: Go's default,
	// with the system's CAs).
	Transport http.RoundTripper
}

// Service runs migrations.
type Service struct {
	cfg   Config
	allow map[string]bool
}

// New makes a Service. An allowed URL CheckAllowURLs refuses allows
// nothing.
func New(cfg Config) *Service {
	allow := map[string]bool{}
	for _, u := range cfg.AllowURLs {
		if n, err := Normalize(u); err == nil {
			allow[n] = true
		}
	}
	return &Service{cfg: cfg, allow: allow}
}

// CheckAllowURLs checks the allowed URLs of a Config: each an http or
// https URL with a host and no user, query or fragment.
func CheckAllowURLs(urls []string) error {
	for _, u := range urls {
		if _, err := Normalize(u); err != nil {
			return fmt.Errorf("--migrate-allow-url %q: %w", u, err)
		}
	}
	return nil
}

// Normalize is the form URLs are compared in: scheme and host in lower
// case, the scheme's default port left out, no trailing slash, and no
// user, query or fragment (which an allowed URL may not have).
func Normalize(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", err
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return "", fmt.Errorf("not an http:// or https:// URL")
	case u.Host == "":
		return "", fmt.Errorf("no host")
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("a Kafka Connect URL has no user, query or fragment")
	}
	host := strings.ToLower(u.Host)
	if p := u.Port(); (scheme == "http" && p == "80") || (scheme == "https" && p == "443") {
		host = strings.TrimSuffix(host, ":"+p)
	}
	return scheme + "://" + host + strings.TrimRight(u.EscapedPath(), "/"), nil
}

// forbidden is a 403 of a URL the coordinator may not read.
func (s *Service) forbidden(raw string) error {
	if len(s.allow) == 0 {
		return api.Errorf(api.CodeForbidden, "Migrations from Kafka Connect are off on this coordinator: it reads only the URLs its --migrate-allow-url flags name, and none is set")
	}
	return api.Errorf(api.CodeForbidden, "Kafka Connect URL %s is not allowed: the coordinator reads only the URLs its --migrate-allow-url flags name", raw)
}

// Migrate answers POST /sluice/migrations: each connector of req.URL that
// req.Connectors matches, by name, migrated (dryRun: checked and planned
// only). allow is the caller's grant check of a connector's name; a
// connector it refuses is not migrated, its refusal the detail.
func (s *Service) Migrate(ctx context.Context, req api.MigrationRequest, dryRun bool, allow func(connector string) error) (api.MigrationResult, error) {
	norm, err := Normalize(req.URL)
	if err != nil {
		return api.MigrationResult{}, api.Errorf(api.CodeBadRequest, "Invalid \"url\" '%s': %v", req.URL, err)
	}
	if !s.allow[norm] {
		return api.MigrationResult{}, s.forbidden(req.URL)
	}
	glob := req.Connectors
	if glob == "" {
		glob = "*"
	}
	if _, err := path.Match(glob, ""); err != nil {
		return api.MigrationResult{}, api.Errorf(api.CodeBadRequest, "Invalid \"connectors\" '%s': %v", glob, err)
	}
	stopTimeout, err := stopTimeoutOf(req.StopTimeout)
	if err != nil {
		return api.MigrationResult{}, err
	}
	from, err := api.NewClient(api.Config{Address: norm, Username: req.User, Password: req.Password,
		HTTPClient: &http.Client{Transport: s.cfg.Transport, Timeout: RequestTimeout, CheckRedirect: noRedirect},
		Retry:      &api.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		return api.MigrationResult{}, api.Errorf(api.CodeBadRequest, "Invalid \"url\" '%s': %v", req.URL, err)
	}
	all, err := from.Connectors().List(ctx)
	if err != nil {
		return api.MigrationResult{}, api.Errorf(api.Code(http.StatusBadGateway), "Failed to list the connectors of Kafka Connect at %s: %v", norm, sourceError(err))
	}
	var names []string
	for _, n := range all {
		if ok, _ := path.Match(glob, n); ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		return api.MigrationResult{}, api.Errorf(api.CodeNotFound, "No connector of Kafka Connect at %s matches '%s'", norm, glob)
	}
	to, err := s.target(ctx)
	if err != nil {
		return api.MigrationResult{}, err
	}
	opts := migrate.Options{DryRun: dryRun, LeaveStopped: req.LeaveStopped, DeleteSource: req.DeleteSource, StopTimeout: stopTimeout, Poll: poll,
		SourceError: sourceError}
	out := api.MigrationResult{DryRun: dryRun, URL: norm, Connectors: make([]api.MigratedConnector, 0, len(names))}
	for _, n := range names {
		if err := allow(n); err != nil {
			out.Connectors = append(out.Connectors, api.MigratedConnector{Name: n, Type: api.TypeUnknown, Result: api.MigrationNotMigrated, Detail: err.Error()})
			continue
		}
		r, c := migrate.One(ctx, from, to, n, opts)
		mc := api.MigratedConnector{Name: r.Name, Type: r.Type, Class: r.Class, State: r.State, Result: r.Result, Step: r.Step,
			Detail: r.Detail, OffsetsCount: r.Partitions}
		if dryRun && r.Result == migrate.WouldMigrate {
			mc.Config, mc.Offsets = c.Config, c.Offsets
		}
		out.Connectors = append(out.Connectors, mc)
	}
	return out, nil
}

// stopTimeoutOf reads a request's stop_timeout.
func stopTimeoutOf(s string) (time.Duration, error) {
	if s == "" {
		return DefaultStopTimeout, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 || d > MaxStopTimeout {
		return 0, api.Errorf(api.CodeBadRequest, "Invalid \"stop_timeout\" '%s': a duration above 0 and at most %s (e.g. 90s)", s, MaxStopTimeout)
	}
	return d, nil
}

// sourceError is an error of the Kafka Connect client that says what
// Kafka Connect answered, its status first.
func sourceError(err error) error {
	var ae *api.Error
	if errors.As(err, &ae) {
		return fmt.Errorf("status %d from Kafka Connect: %s", ae.Code, ae.Message)
	}
	return err
}

// noRedirect follows no redirect: an allowed URL must not lead the
// coordinator to one that is not.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
