package conformance

import (
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

//go:embed testdata/scenarios.json testdata/deviations.json testdata/notes.md
var testdata embed.FS

// Suite is the scenario list: the topics every system needs, then the
// scenarios in the order they run.
type Suite struct {
	// Topics are created (under each system's topic prefix) before the run
	// and deleted after it.
	Topics    []Topic    `json:"topics"`
	Scenarios []Scenario `json:"scenarios"`
}

// Topic is a Kafka topic the scenarios use, named without the prefix.
type Topic struct {
	Name       string `json:"name"`
	Partitions int32  `json:"partitions"`
}

// Scenario is one request sequence.
type Scenario struct {
	Name   string `json:"name"`
	Covers string `json:"covers"`
	// Files are written under the system's file directory before the
	// scenario runs (name → content).
	Files map[string]string `json:"files,omitempty"`
	Steps []Step            `json:"steps"`
}

// Step is one request and what to compare of its answer.
type Step struct {
	ID     string `json:"id"`
	Method string `json:"method"`
	Path   string `json:"path"`
	// Body is sent as JSON text (placeholders substituted); Raw is sent as
	// is instead, for bodies that are not valid JSON. Pad appends that many
	// bytes of padding inside Raw's "@PAD@" marker.
	Body        json.RawMessage `json:"body,omitempty"`
	Raw         *string         `json:"raw,omitempty"`
	Pad         int             `json:"pad,omitempty"`
	ContentType string          `json:"content_type,omitempty"`
	// NoContentType sends the body without a Content-Type header.
	NoContentType bool `json:"no_content_type,omitempty"`
	// Headers are sent with the request; Pad fills an "@PAD@" in a value
	// too, for requests with large headers.
	Headers map[string]string `json:"headers,omitempty"`
	// RawTarget sends Path as the request target exactly as written, for
	// targets that are no valid URL (a bad escape such as %c).
	RawTarget bool `json:"raw_target,omitempty"`
	// Compare is what of the answer is compared: full (default), status,
	// message, keys (top-level key names), fields (the top-level values of
	// Keys), state (a status body's name, type and states, for polls whose
	// shape another step compares), validate, plugins, or none (run and
	// record, do not compare).
	Compare string `json:"compare,omitempty"`
	// Keys are the config keys whose errors a validate comparison checks,
	// or the body keys a fields comparison keeps.
	Keys []string `json:"keys,omitempty"`
	// Mine keeps, in arrays of strings and in object keys, only names that
	// start with this system's connector prefix (GET /connectors lists
	// everything on the worker).
	Mine bool `json:"mine,omitempty"`
	// Poll repeats the request until its answer matches, then records the
	// last answer.
	Poll *Poll `json:"poll,omitempty"`
	// Topic, when set, makes the step read this Kafka topic instead of
	// sending a request (see System.readTopic): Method and Path are unused.
	Topic string `json:"topic,omitempty"`
	// File, when set, makes the step read this file (placeholders
	// expanded; see System.readFile) instead of sending a request, to
	// compare what two sink connectors wrote.
	File string `json:"file,omitempty"`
	// Sleep waits this many milliseconds before the request.
	Sleep int `json:"sleep_ms,omitempty"`
}

// Poll repeats a request until Until matches or Timeout seconds pass.
type Poll struct {
	Timeout float64 `json:"timeout,omitempty"`
	Until   Match   `json:"until"`
}

// Match is a condition on an answer: a status and values at paths of its
// JSON body. A path is dot-separated; a number indexes an array and "#" is
// the length of the array or object before it (tasks.#, tasks.0.state).
type Match struct {
	Status int            `json:"status,omitempty"`
	Fields map[string]any `json:"fields,omitempty"`
}

// timeout is the poll's timeout, 45 s by default.
func (p *Poll) timeout() time.Duration {
	if p.Timeout <= 0 {
		return 45 * time.Second
	}
	return time.Duration(p.Timeout * float64(time.Second))
}

// LoadSuite reads the embedded scenario list and checks it.
func LoadSuite() (*Suite, error) {
	data, err := testdata.ReadFile("testdata/scenarios.json")
	if err != nil {
		return nil, err
	}
	var s Suite
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("testdata/scenarios.json: %w", err)
	}
	seen := map[string]bool{}
	for _, sc := range s.Scenarios {
		if sc.Name == "" || seen[sc.Name] {
			return nil, fmt.Errorf("scenario name %q is empty or repeated", sc.Name)
		}
		seen[sc.Name] = true
		ids := map[string]bool{}
		for i, st := range sc.Steps {
			if st.ID == "" || ids[st.ID] {
				return nil, fmt.Errorf("scenario %s: step %d: id %q is empty or repeated", sc.Name, i, st.ID)
			}
			ids[st.ID] = true
			switch st.Compare {
			case "", "full", "status", "message", "keys", "fields", "state", "validate", "plugins", "none":
			default:
				return nil, fmt.Errorf("scenario %s step %s: unknown compare %q", sc.Name, st.ID, st.Compare)
			}
			if st.Topic != "" && st.File != "" {
				return nil, fmt.Errorf("scenario %s step %s: both topic and file", sc.Name, st.ID)
			}
			if st.Body != nil && st.Raw != nil {
				return nil, fmt.Errorf("scenario %s step %s: both body and raw", sc.Name, st.ID)
			}
			if st.NoContentType && st.ContentType != "" {
				return nil, fmt.Errorf("scenario %s step %s: both content_type and no_content_type", sc.Name, st.ID)
			}
		}
	}
	return &s, nil
}

// Notes is the hand-written part of docs/conformance.md: where Kafka Connect
// 4.4 answers differently from the spec, and how the reference is built.
func Notes() string {
	data, _ := testdata.ReadFile("testdata/notes.md")
	return string(data)
}
