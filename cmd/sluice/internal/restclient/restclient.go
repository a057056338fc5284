// Package restclient is the CLI's client of the Sluice REST API: it
// normalises the --url the user typed, sends requests with the configured
// credentials, and turns failures into errors that say what went wrong —
// the server's own message for a refused request, a hint to start Sluice
// when nothing listens.
package restclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
)

// NormalizeURL turns what the user typed into a base URL: "127.0.0.1:8083"
// and "localhost:8083/" become "http://127.0.0.1:8083" and
// "http://localhost:8083". Without a scheme it is https when tls is set
// (the user gave a CA to verify the server with), http otherwise.
func NormalizeURL(raw string, tls bool) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", errors.New("--url is empty")
	}
	if !strings.Contains(s, "://") {
		scheme := "http://"
		if tls {
			scheme = "https://"
		}
		s = scheme + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("--url %q is not a URL (want host:port or http[s]://host:port): %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("--url %q: the scheme must be http or https", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("--url %q has no host (want host:port or http[s]://host:port)", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("--url %q: a base URL has no query or fragment", raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// HTTPError is a request the server refused: its status and message.
type HTTPError struct {
	Status  int
	Message string
}

// Error is "<status>: <message>", the server's words.
func (e *HTTPError) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Message) }

// ConnectError is a request that reached no server.
type ConnectError struct {
	URL string
	Err error
}

// Error names the URL, why, and what to do about it.
func (e *ConnectError) Error() string {
	why := e.Err.Error()
	switch {
	case errors.Is(e.Err, syscall.ECONNREFUSED):
		why = "connection refused"
	case isDNS(e.Err):
		why = "no such host"
	}
	return fmt.Sprintf("cannot reach Sluice at %s: %s — is it running? (sluice dev / make run)", e.URL, why)
}

// Unwrap is the transport's error.
func (e *ConnectError) Unwrap() error { return e.Err }

func isDNS(err error) bool {
	var d *net.DNSError
	return errors.As(err, &d)
}

// Client sends requests to one Sluice.
type Client struct {
	// Base is the normalised base URL (NormalizeURL).
	Base string
	// HTTP sends the requests.
	HTTP *http.Client
	// Authorize, when set, puts credentials on each request.
	Authorize func(*http.Request) error
	// Header holds more headers for each request: the X-Sluice-Reason of
	// an offsets change.
	Header http.Header
}

// Do sends one request with a JSON body (nil: none) and returns the
// answer's body and status. A status of 300 or more is an *HTTPError; no
// answer at all is a *ConnectError.
func (c *Client) Do(ctx context.Context, method, path string, body []byte) ([]byte, int, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, rd)
	if err != nil {
		return nil, 0, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	for k, v := range c.Header {
		req.Header[k] = v
	}
	if c.Authorize != nil {
		if err := c.Authorize(req); err != nil {
			return nil, 0, err
		}
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) && (errors.Is(err, syscall.ECONNREFUSED) || isDNS(err) || isDial(err)) {
			return nil, 0, &ConnectError{URL: c.Base, Err: uerr.Err}
		}
		return nil, 0, fmt.Errorf("%s %s%s: %w", method, c.Base, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, resp.StatusCode, fmt.Errorf("read the answer to %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		return nil, resp.StatusCode, &HTTPError{Status: resp.StatusCode, Message: message(data)}
	}
	return data, resp.StatusCode, nil
}

// isDial reports whether err happened while dialling (no route, timeout of
// the connection attempt): the server was not reached.
func isDial(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// message is the "message" of a Kafka Connect error body, or the body.
func message(data []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &e) == nil && e.Message != "" {
		return e.Message
	}
	return strings.TrimSpace(string(data))
}

// Get sends a GET and decodes the JSON answer into v.
func (c *Client) Get(ctx context.Context, path string, v any) error {
	data, _, err := c.Do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("GET %s: read the answer: %w", path, err)
	}
	return nil
}
