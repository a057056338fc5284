package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
)

// ConnectorPath is /connectors/<name><suffix>, the name escaped.
func ConnectorPath(name, suffix string) string {
	return "/connectors/" + url.PathEscape(name) + suffix
}

// SluicePath is /sluice/connectors/<name><suffix>, the name escaped.
func SluicePath(name, suffix string) string { return "/sluice" + ConnectorPath(name, suffix) }

// Do sends one request with a JSON body (nil: none) and returns the
// answer's body and status.
func (s *Session) Do(method, path string, body []byte) ([]byte, int, error) {
	return s.API.Do(s.C.Context, method, path, body)
}

// Get sends a GET and decodes its JSON answer into v.
func (s *Session) Get(path string, v any) error { return s.API.Get(s.C.Context, path, v) }

// Send sends a request (body nil: none) and decodes its JSON answer into
// v, numbers kept as they are (DecodeNumbers).
func (s *Session) Send(method, path string, body []byte, v any) error {
	data, _, err := s.Do(method, path, body)
	if err != nil {
		return err
	}
	if err := DecodeNumbers(data, v); err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	return nil
}

// SendJSON is Send with req encoded as the JSON body.
func (s *Session) SendJSON(method, path string, req, v any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("%s %s: encode the request: %w", method, path, err)
	}
	return s.Send(method, path, body, v)
}

// GetNumbers is Get keeping the answer's numbers exact (DecodeNumbers).
func (s *Session) GetNumbers(path string, v any) error {
	return s.Send(http.MethodGet, path, nil, v)
}

// Call sends one REST request and prints the answer's body as the server
// sent it (Render).
func (s *Session) Call(method, path string, body []byte) error {
	data, status, err := s.Do(method, path, body)
	if err != nil {
		return err
	}
	return s.Render(data, status)
}

// CallBusy is Call with a spinner on stderr while the request runs, for
// the requests that take a while (offsets operations fence and write).
func (s *Session) CallBusy(what, method, path string, body []byte) error {
	data, status, err := s.DoBusy(what, method, path, body)
	if err != nil {
		return err
	}
	return s.Render(data, status)
}

// DoBusy is Do with a spinner on stderr while the request runs.
func (s *Session) DoBusy(what, method, path string, body []byte) (data []byte, status int, err error) {
	err = Busy(what, func() error {
		data, status, err = s.Do(method, path, body)
		return err
	})
	return data, status, err
}

// Render prints an answer's body as the server sent it, in the session's
// format (a table: output.Generic), or its status line when it has none.
func (s *Session) Render(data []byte, status int) error {
	if len(data) == 0 {
		fmt.Fprintln(s.W, status, http.StatusText(status))
		return nil
	}
	// Numbers stay as the server wrote them (an offset may not fit a
	// float64).
	var v any
	if err := DecodeNumbers(data, &v); err != nil {
		_, err = s.W.Write(append(data, '\n'))
		return err
	}
	return s.Print(v, func() *output.Rows { return output.Generic(v) })
}

// DecodeNumbers decodes JSON into v keeping its numbers as json.Number:
// an offset may not fit a float64.
func DecodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// Read GETs path. In the answer view (a REST-mirroring alias) it prints
// the answer as the server sent it and reports true: the command has
// shown its result. Otherwise it decodes the answer into v, numbers kept
// exact, for the command to show its own way.
func (s *Session) Read(path string, v any) (printed bool, err error) {
	if s.Answer {
		return true, s.Call(http.MethodGet, path, nil)
	}
	return false, s.GetNumbers(path, v)
}
