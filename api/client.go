package api

// The typed Go client of the REST API (docs/client.md): one Client per
// cluster, its calls in groups by resource (Connectors, Offsets, Plugins,
// Fleet, Audit, Admin), each taking a context whose deadline bounds the
// call and its retries.
//
//	call ─► encode ─► send to the current address ─┬─ 2xx ─► decode the body
//	                      ▲                         ├─ non-2xx ─► *Error (or retry)
//	                      │                         └─ no answer ─► *ConnError (or retry)
//	                      └── backoff, next address on a refused connection,
//	                          while the policy and the context allow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultAddress is the coordinator a Config without an address reaches:
// `sluice dev`'s.
const DefaultAddress = "http://127.0.0.1:8083"

// DefaultUserAgent is the User-Agent of a Client whose Config sets none.
const DefaultUserAgent = "sluice-go-client"

// ReasonHeader is the header that carries why an offsets change was made
// into its offsets history entry (see WithReason).
const ReasonHeader = "X-Sluice-Reason"

// Config configures a Client. Its zero value reaches DefaultAddress over
// plain HTTP without credentials, with DefaultRetryPolicy.
type Config struct {
	// Address is the coordinator's REST address: host:port or
	// http[s]://host:port[/prefix]. Without a scheme it is https when TLS
	// is set, http otherwise.
	Address string
	// Addresses are more coordinators of the same cluster, tried in order
	// after Address when one refuses connections (any coordinator answers
	// every call: followers forward writes to the leader).
	Addresses []string

	// TLS, when set, configures HTTPS: the CAs that verify the
	// coordinator, the client certificate, the server name.
	TLS *TLSConfig

	// Username and Password send HTTP Basic credentials; Token sends
	// "Authorization: Bearer <Token>" (an API token or a JWT). Give one of
	// the two, or neither. A client certificate (TLS.CertFile/CertPEM) is
	// the third kind and may go with either.
	Username string
	Password string
	Token    string

	// HTTPClient sends the requests (nil: a client of its own with a 2
	// minute timeout). With TLS set, its Transport must be nil or an
	// *http.Transport, which is cloned and given the TLS settings.
	HTTPClient *http.Client
	// UserAgent is sent with every request (empty: DefaultUserAgent).
	UserAgent string
	// Retry is the retry policy (nil: DefaultRetryPolicy; MaxAttempts 1:
	// no retries).
	Retry *RetryPolicy
}

// Client calls one Sluice cluster's REST API. It is safe for concurrent
// use. Make it with NewClient.
type Client struct {
	bases     []string
	current   atomic.Int64 // index into bases of the address in use
	http      *http.Client
	userAgent string
	authorize func(*http.Request)
	retry     RetryPolicy
	// sleep waits between attempts (a test seam); it returns early with
	// ctx's error.
	sleep func(ctx context.Context, d time.Duration) error
}

// NewClient checks cfg and makes a Client. It sends nothing: a coordinator
// that cannot be reached fails the first call, not NewClient.
func NewClient(cfg Config) (*Client, error) {
	if cfg.Username != "" && cfg.Token != "" {
		return nil, errors.New("sluice client: give Username/Password or Token, not both")
	}
	if cfg.Password != "" && cfg.Username == "" {
		return nil, errors.New("sluice client: Password needs a Username")
	}
	addrs := append([]string{cfg.Address}, cfg.Addresses...)
	if cfg.Address == "" {
		if len(cfg.Addresses) > 0 {
			addrs = addrs[1:]
		} else {
			addrs = []string{DefaultAddress}
		}
	}
	c := &Client{userAgent: cfg.UserAgent, sleep: sleepCtx}
	for _, a := range addrs {
		base, err := NormalizeAddress(a, cfg.TLS != nil)
		if err != nil {
			return nil, fmt.Errorf("sluice client: %w", err)
		}
		c.bases = append(c.bases, base)
	}
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent
	}
	var err error
	if c.http, err = httpClient(cfg); err != nil {
		return nil, fmt.Errorf("sluice client: %w", err)
	}
	c.retry = DefaultRetryPolicy
	if cfg.Retry != nil {
		c.retry = cfg.Retry.withDefaults()
	}
	switch {
	case cfg.Username != "":
		user, pw := cfg.Username, cfg.Password
		c.authorize = func(r *http.Request) { r.SetBasicAuth(user, pw) }
	case cfg.Token != "":
		bearer := "Bearer " + cfg.Token
		c.authorize = func(r *http.Request) { r.Header.Set("Authorization", bearer) }
	}
	return c, nil
}

// NormalizeAddress turns an address as a user types it into a base URL:
// "127.0.0.1:8083" and "localhost:8083/" become "http://127.0.0.1:8083"
// and "http://localhost:8083"; without a scheme it is https when tls is
// set. A path is kept as a prefix (a coordinator behind a proxy).
func NormalizeAddress(raw string, tls bool) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", errors.New("the address is empty")
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
		return "", fmt.Errorf("address %q is not a URL (want host:port or http[s]://host:port): %w", raw, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("address %q: the scheme must be http or https", raw)
	case u.Host == "":
		return "", fmt.Errorf("address %q has no host (want host:port or http[s]://host:port)", raw)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return "", fmt.Errorf("address %q: a base address has no query, fragment or user", raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// Address is the base URL the client sends its next request to: the first
// address until one refuses a connection, then the next that answered.
func (c *Client) Address() string { return c.bases[c.current.Load()] }

// reasonKey carries WithReason's reason in a context.
type reasonKey struct{}

// WithReason returns a context under which every request the client sends
// carries reason in the X-Sluice-Reason header: an offsets change records
// it in its history entry (GET …/offsets/history shows it). Kafka
// Connect ignores the header.
func WithReason(ctx context.Context, reason string) context.Context {
	return context.WithValue(ctx, reasonKey{}, reason)
}

// call is one REST call as a group method describes it.
type call struct {
	method string
	// path is escaped already (see pathf).
	path  string
	query url.Values
	// body, when not nil, is sent as JSON.
	body any
	// safe marks a call that may be sent again when its outcome is
	// unknown (the request may have been applied): reads, and writes whose
	// repetition changes nothing more (see RetryPolicy).
	safe bool
	// noRetry marks a probe, whose answer is the point: it is sent once.
	noRetry bool
	// errOut, when not nil, receives the JSON body of a non-2xx answer
	// too: a probe's document.
	errOut any
}

// answer is a call's successful answer.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// pathf formats a path, escaping each argument as one path segment (a
// connector named "a/b" is sent as a%2Fb).
func pathf(format string, segs ...any) string {
	esc := make([]any, len(segs))
	for i, s := range segs {
		esc[i] = url.PathEscape(fmt.Sprint(s))
	}
	return fmt.Sprintf(format, esc...)
}

// do sends cl, retrying as the policy allows, and decodes a 2xx body
// into out (when out is not nil and the body is not empty).
func (c *Client) do(ctx context.Context, cl call, out any) (answer, error) {
	var body []byte
	if raw, ok := cl.body.(json.RawMessage); ok {
		body = raw // sent as the caller wrote it (Raw)
	} else if cl.body != nil {
		var err error
		if body, err = json.Marshal(cl.body); err != nil {
			return answer{}, fmt.Errorf("sluice: %s %s: encode the request: %w", cl.method, cl.path, err)
		}
	}
	attempts := c.retry.MaxAttempts
	if cl.noRetry {
		attempts = 1
	}
	var last error // the last failure the context did not cause
	for attempt := 1; ; attempt++ {
		idx := c.current.Load()
		ans, err := c.send(ctx, idx, cl, body)
		if err == nil {
			return ans, decodeAnswer(cl, ans, out)
		}
		if se := (*statusError)(nil); cl.errOut != nil && errors.As(err, &se) {
			_ = json.Unmarshal(se.body, cl.errOut) // best effort: the *Error says what failed
		}
		if ctx.Err() != nil {
			return answer{}, ctxError(ctx, cl, attempt, last, err)
		}
		last = finalError(err)
		verdict := classify(cl, err)
		if verdict == refused && len(c.bases) > 1 {
			// Another coordinator may answer: move on at once.
			c.current.CompareAndSwap(idx, (idx+1)%int64(len(c.bases)))
		}
		if verdict == final || attempt >= attempts {
			return answer{}, last
		}
		if verdict != refused || len(c.bases) == 1 || (attempt%len(c.bases)) == 0 {
			if err := c.sleep(ctx, c.retry.backoff(attempt, retryAfter(err))); err != nil {
				return answer{}, ctxError(ctx, cl, attempt, last, err)
			}
		}
	}
}

// ctxError is the error of a call whose context ended, cause the failure
// it ended with: both the context's error and the last answer (or
// failure) before it are in its chain, the answer being what says why the
// call did not succeed in time.
func ctxError(ctx context.Context, cl call, attempts int, last, cause error) error {
	if last == nil || !errors.Is(cause, ctx.Err()) {
		last = finalError(cause)
	}
	if errors.Is(last, ctx.Err()) {
		return last
	}
	return fmt.Errorf("sluice: %s %s: %w after %d attempt(s); the last: %w", cl.method, cl.path, ctx.Err(), attempts, last)
}

// send sends cl once to the address at idx.
func (c *Client) send(ctx context.Context, idx int64, cl call, body []byte) (answer, error) {
	base := c.bases[idx]
	target := base + cl.path
	if len(cl.query) > 0 {
		target += "?" + cl.query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, target, rd)
	if err != nil {
		return answer{}, fmt.Errorf("sluice: %s %s: %w", cl.method, cl.path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if reason, ok := ctx.Value(reasonKey{}).(string); ok && reason != "" {
		req.Header.Set(ReasonHeader, reason)
	}
	if c.authorize != nil {
		c.authorize(req)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{}, &ConnError{Address: base, Method: cl.method, Path: cl.path, Err: unwrapURLError(err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, &ConnError{Address: base, Method: cl.method, Path: cl.path, Err: fmt.Errorf("read the answer: %w", err), sent: true}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return answer{}, &statusError{err: errorFromBody(resp.StatusCode, data), header: resp.Header, body: data, base: base, cl: cl}
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// decodeAnswer decodes a 2xx body into out, numbers as json.Number (an
// offset may not fit a float64), unknown fields ignored.
func decodeAnswer(cl call, ans answer, out any) error {
	if out == nil || len(bytes.TrimSpace(ans.body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(ans.body))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("sluice: %s %s: read the answer (%d): %w", cl.method, cl.path, ans.status, err)
	}
	return nil
}

// sleepCtx waits d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Group accessors: each group is a view of the client, free to make.

// Connectors is the connectors' lifecycle, config, status and tasks.
func (c *Client) Connectors() *Connectors { return &Connectors{c} }

// Offsets is the connectors' offsets: Kafka Connect's and Sluice's
// operations on them.
func (c *Client) Offsets() *Offsets { return &Offsets{c} }

// Plugins is the connector plugins and config validation.
func (c *Client) Plugins() *Plugins { return &Plugins{c} }

// Fleet is the agents and the operations over many connectors: bulk
// actions, maintenance windows, rebalances and rollouts.
func (c *Client) Fleet() *Fleet { return &Fleet{c} }

// Audit is the audit trail of REST writes.
func (c *Client) Audit() *Audit { return &Audit{c} }

// Admin is the coordinator itself: server info, health, readiness,
// metrics and log levels.
func (c *Client) Admin() *Admin { return &Admin{c} }
