package sluicetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/sluice-io/sluice/api"
)

// Response is a REST answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v (numbers as json.Number), failing the test
// on error.
func (r Response) JSON(t interface{ Fatalf(string, ...any) }, v any) {
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Message is the "message" of an error or message body.
func (r Response) Message() string {
	var m struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(r.Body, &m)
	return m.Message
}

// String renders the answer for failure messages.
func (r Response) String() string { return fmt.Sprintf("%d %s", r.Status, r.Body) }

// Do sends a request to the coordinator. body may be nil, a string or []byte
// (sent as is), or any value (sent as JSON).
func (c *Cluster) Do(method, path string, body any) Response {
	c.T.Helper()
	return DoWith(c.T, c.URL, method, path, body, c.Headers...)
}

// Do sends a request to baseURL and returns the answer.
func Do(t interface {
	Helper()
	Fatalf(string, ...any)
}, baseURL, method, path string, body any) Response {
	t.Helper()
	return DoWith(t, baseURL, method, path, body)
}

// DoWith is Do with request headers: name, value, name, value…
func DoWith(t interface {
	Helper()
	Fatalf(string, ...any)
}, baseURL, method, path string, body any, headers ...string) Response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("encode body: %v", err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, baseURL+path, rd)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := (&http.Client{Timeout: 90 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// Must sends a request and fails the test unless the status is want.
func (c *Cluster) Must(want int, method, path string, body any) Response {
	c.T.Helper()
	r := c.Do(method, path, body)
	if r.Status != want {
		c.T.Fatalf("%s %s: got %s, want status %d", method, path, r, want)
	}
	return r
}

// Status is a connector's status as GET …/status shows it.
type Status struct {
	Name      string `json:"name"`
	Connector struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
		Version  string `json:"version"`
	} `json:"connector"`
	Tasks []struct {
		ID       int    `json:"id"`
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
		Version  string `json:"version"`
	} `json:"tasks"`
	Type string `json:"type"`
}

// Status reads a connector's status; ok is false on 404.
func (c *Cluster) Status(name string) (Status, bool) {
	c.T.Helper()
	r := c.Do(http.MethodGet, "/connectors/"+name+"/status", nil)
	if r.Status == http.StatusNotFound {
		return Status{}, false
	}
	if r.Status != http.StatusOK {
		c.T.Fatalf("status of %s: %s", name, r)
	}
	var s Status
	r.JSON(c.T, &s)
	return s, true
}

// WaitState waits until the connector shows state and exactly tasks tasks,
// all in taskState.
func (c *Cluster) WaitState(name, state string, tasks int, taskState string) Status {
	c.T.Helper()
	var last Status
	Eventually(c.T, 30*time.Second, func() (bool, string) {
		s, ok := c.Status(name)
		last = s
		if !ok {
			return false, "no status yet"
		}
		if s.Connector.State != state || len(s.Tasks) != tasks {
			return false, fmt.Sprintf("connector %s with %d tasks: %+v", s.Connector.State, len(s.Tasks), s)
		}
		for _, ts := range s.Tasks {
			if ts.State != taskState {
				return false, fmt.Sprintf("task %d is %s (%s)", ts.ID, ts.State, ts.Trace)
			}
		}
		return true, ""
	})
	return last
}

// WaitKnowsLeader waits until the coordinator at baseURL is ready and names
// the leader it forwards writes to (its /readyz body): a coordinator is
// ready as soon as it read its topics, and learns the leader from the lease
// just after.
func WaitKnowsLeader(t interface {
	Helper()
	Fatalf(string, ...any)
}, baseURL string) {
	t.Helper()
	Eventually(t, 30*time.Second, func() (bool, string) {
		r := Do(t, baseURL, http.MethodGet, "/readyz", nil)
		var ready api.Readiness
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &ready) != nil {
			return false, r.String()
		}
		return ready.Leader != "", r.String()
	})
}

// GetHealth is GET /health of the coordinator at baseURL, through cl: an
// error unless it answers 200 with a health document.
func GetHealth(cl *http.Client, baseURL string) (api.Health, error) {
	var h api.Health
	resp, err := cl.Get(baseURL + "/health")
	if err != nil {
		return h, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return h, fmt.Errorf("GET /health: %d", resp.StatusCode)
	}
	return h, json.NewDecoder(resp.Body).Decode(&h)
}
