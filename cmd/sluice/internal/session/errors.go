package session

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/suggest"
)

// HTTPError is a request the server refused, in the CLI's words:
// "<status>: <the server's message>" — a missing connector, task or
// plugin always in one form (NotFound).
type HTTPError struct {
	Status  int
	Message string
	err     error
}

// Error is "<status>: <message>".
func (e *HTTPError) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Message) }

// Unwrap is the client's error (an *api.Error, or an
// *api.UnsupportedError around one).
func (e *HTTPError) Unwrap() error { return e.err }

// ConnectError is a request that reached no server, or none that speaks
// to it: main exits with code 3 for it.
type ConnectError struct {
	URL string
	Err error
	// Advice says what to do; empty: check that Sluice runs.
	Advice string
}

// defaultAdvice is what a ConnectError without advice suggests.
const defaultAdvice = "is it running? (sluice dev / make run)"

// Error names the URL, why, and what to do about it.
func (e *ConnectError) Error() string {
	why := e.Err.Error()
	var d *net.DNSError
	switch {
	case errors.Is(e.Err, syscall.ECONNREFUSED):
		why = "connection refused"
	case errors.As(e.Err, &d):
		why = "no such host"
	}
	advice := e.Advice
	if advice == "" {
		advice = defaultAdvice
	}
	return fmt.Sprintf("cannot reach Sluice at %s: %s — %s", e.URL, why, advice)
}

// Unwrap is the transport's error.
func (e *ConnectError) Unwrap() error { return e.Err }

// plainToTLS is the answer of Go's HTTPS server to a request in plain HTTP.
const plainToTLS = "Client sent an HTTP request to an HTTPS server."

// Err is a typed client's error in the CLI's words: a refused request an
// *HTTPError, a server never reached (or one that answered in another
// protocol) a *ConnectError (exit code 3); any other error as it is.
func Err(err error) error {
	var he *HTTPError
	var cle *ConnectError
	switch {
	case err == nil, errors.As(err, &he):
		return err // in the CLI's words already
	case errors.As(err, &cle):
		return cle // the client's wrapping repeats the call, not why
	}
	var ae *api.Error
	if errors.As(err, &ae) {
		return &HTTPError{Status: int(ae.Code), Message: NotFound(int(ae.Code), ae.Message), err: err}
	}
	var ce *api.ConnError
	var d *net.DNSError
	if errors.As(err, &ce) && (ce.Refused() || errors.As(ce.Err, &d)) && !errors.Is(err, context.Canceled) {
		return &ConnectError{URL: ce.Address, Err: ce.Err}
	}
	return err
}

// Err is the package's Err, with what the session knows: its URL, for a
// server that answers HTTPS only; and for a connector not found, the
// names of the server's connectors close to it ("did you mean").
func (s *Session) Err(err error) error {
	err = Err(err)
	var he *HTTPError
	if !errors.As(err, &he) {
		return err
	}
	if he.Status == http.StatusBadRequest && strings.TrimSpace(he.Message) == plainToTLS {
		secure := "https" + strings.TrimPrefix(s.API.Address(), "http")
		return &ConnectError{URL: s.API.Address(), Err: errors.New("it answers HTTPS only"),
			Advice: "use --url " + secure + " (and --ca if its certificate is not from a CA this machine trusts)"}
	}
	if m := noStatus.FindStringSubmatch(he.Message); m != nil && he.Status == http.StatusNotFound {
		// A connector without a status is one just created, or none at
		// all: its list tells which.
		if s.readConnectors() && !slices.Contains(s.connectors, m[1]) {
			he.Message = "Connector " + m[1] + " not found"
		}
	}
	if name, ok := MissingConnector(err); ok {
		he.Message += s.suggestConnector(name)
	}
	if m := notFoundPlugin.FindStringSubmatch(he.Message); m != nil && he.Status == http.StatusNotFound {
		if plugins, err := s.API.Plugins().ListAll(s.Ctx()); err == nil {
			he.Message += suggest.DidYouMean(m[1], PluginNames(plugins))
		}
	}
	return err
}

// noStatus is the status endpoint's 404, for a connector unknown or just
// created.
var noStatus = regexp.MustCompile(`^No status found for connector (.+)$`)

// notFoundPlugin is the CLI's form of a missing plugin (NotFound).
var notFoundPlugin = regexp.MustCompile(`^Plugin (.+) not found$`)

// PluginNames are the names a plugin is known by: each class, and its
// short name (the class after its last dot) with and without "Connector".
func PluginNames(plugins []api.PluginInfo) []string {
	var out []string
	for _, p := range plugins {
		short := p.Class[strings.LastIndexByte(p.Class, '.')+1:]
		out = append(out, p.Class, short)
		if trimmed := strings.TrimSuffix(short, "Connector"); trimmed != short && trimmed != "" {
			out = append(out, trimmed)
		}
	}
	return out
}

// The wordings of a missing connector, task or plugin: Kafka Connect's
// endpoints have four, which the CLI says in one form, "<Kind> <name> not
// found".
var (
	missingConnector = regexp.MustCompile(`^(?:Connector (.+) not found|Unknown connector:? (.+))$`)
	missingTask      = regexp.MustCompile(`^Unknown task: (.+)-(\d+)$`)
	missingPlugin    = regexp.MustCompile(`^Unknown plugin (.+?)\.?$`)
)

// NotFound is a 404's message in the CLI's one form for a missing
// connector ("Connector X not found"), task ("Task N of connector X not
// found") or plugin ("Plugin X not found"); any other message as it is.
func NotFound(status int, msg string) string {
	if status != http.StatusNotFound {
		return msg
	}
	if m := missingConnector.FindStringSubmatch(msg); m != nil {
		return "Connector " + m[1] + m[2] + " not found"
	}
	if m := missingTask.FindStringSubmatch(msg); m != nil {
		return "Task " + m[2] + " of connector " + m[1] + " not found"
	}
	if m := missingPlugin.FindStringSubmatch(msg); m != nil {
		return "Plugin " + m[1] + " not found"
	}
	return msg
}

// MissingConnector reports whether err is the CLI's "Connector X not
// found", and X.
func MissingConnector(err error) (string, bool) {
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusNotFound {
		return "", false
	}
	msg, _, _ := strings.Cut(he.Message, "; did you mean")
	if m := missingConnector.FindStringSubmatch(msg); m != nil {
		return m[1] + m[2], true
	}
	return "", false
}

// IsStatus reports whether err is a refused request with that status.
func IsStatus(err error, status int) bool {
	var he *HTTPError
	return errors.As(err, &he) && he.Status == status
}
