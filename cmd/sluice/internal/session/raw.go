package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/sluice-io/sluice/api"
)

// Raw sends a request the typed client cannot express, with the same
// address, credentials and TLS, its errors in the CLI's words. Two calls
// need it: an audit query with a relative --since ("1h", "7d", which the
// server reads and api.AuditQuery, a time, cannot carry), and a create
// whose initial_offsets is an empty list (api.CreateConnectorRequest omits
// an empty list, which the server reads as "keep what positions the name
// has" rather than "none").
type Raw struct {
	base string
	cfg  api.Config
}

// RawDo sends one request with Raw, its body (nil: none) as JSON, and
// returns the answer's body.
func (s *Session) RawDo(method, path string, query url.Values, body []byte) ([]byte, error) {
	r := s.Raw
	target := r.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(s.C.Context, method, target, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if s.reason != "" {
		req.Header.Set(api.ReasonHeader, s.reason)
	}
	switch {
	case r.cfg.Username != "":
		req.SetBasicAuth(r.cfg.Username, r.cfg.Password)
	case r.cfg.Token != "":
		req.Header.Set("Authorization", "Bearer "+r.cfg.Token)
	}
	resp, err := r.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, Err(&api.ConnError{Address: r.base, Method: method, Path: path, Err: unwrapURL(err)})
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read the answer to %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		return nil, &HTTPError{Status: resp.StatusCode, Message: message(data)}
	}
	return data, nil
}

// unwrapURL drops net/http's *url.Error, whose text repeats the method
// and URL.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
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
