package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// System is one REST server under test and the names it uses, so that two
// systems on one broker never see each other's connectors, groups, topics
// or files.
type System struct {
	// Label names the system in reports: "upstream" or "sluice".
	Label string
	// URL is the REST base URL, e.g. http://127.0.0.1:18083.
	URL string
	// ConnPrefix starts every connector name (${c} in the scenarios).
	ConnPrefix string
	// TopicPrefix starts every topic name (${t}).
	TopicPrefix string
	// Dir is an absolute directory for the file connectors' files (${dir}).
	Dir string
	// Brokers are the Kafka bootstrap servers the system uses, which steps
	// that read a topic read from.
	Brokers string
}

// Record is one step's answer as recorded.
type Record struct {
	Step     Step
	Request  string // method and path after substitution
	Status   int
	Body     []byte
	Location string // path of the Location header, if any
	// Polls is how many times the request was sent; TimedOut is set when a
	// poll never matched (the last answer is recorded).
	Polls    int
	TimedOut bool
	Err      string // transport error, if any
}

// expand fills the scenario placeholders in with this system's names.
func (s System) expand(text string) string {
	return strings.NewReplacer("${c}", s.ConnPrefix, "${t}", s.TopicPrefix, "${dir}", s.Dir).Replace(text)
}

// client is the HTTP client of the runner; requests are bounded, as upstream
// answers a slow request with 500 after 90 s.
var client = &http.Client{Timeout: 100 * time.Second}

// RunScenario writes the scenario's files and runs its steps in order.
func (s System) RunScenario(ctx context.Context, sc Scenario) []Record {
	for name, content := range sc.Files {
		path := filepath.Join(s.Dir, name)
		if err := os.WriteFile(path, []byte(s.expand(content)), 0o644); err != nil {
			return []Record{{Err: "write " + path + ": " + err.Error()}}
		}
	}
	var recs []Record
	for _, st := range sc.Steps {
		recs = append(recs, s.runStep(ctx, st))
	}
	return recs
}

// runStep sends one step's request, polling when the step says so.
func (s System) runStep(ctx context.Context, st Step) Record {
	if st.Sleep > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(st.Sleep) * time.Millisecond):
		}
	}
	var deadline time.Time
	if st.Poll != nil {
		deadline = time.Now().Add(st.Poll.timeout())
	}
	polls := 0
	transientUntil := time.Now().Add(transientRetry)
	for {
		rec := s.send(ctx, st)
		polls++
		rec.Polls = polls
		if transient(rec) && time.Now().Before(transientUntil) && ctx.Err() == nil {
			// Kafka Connect's answer while its worker is between
			// assignments: the same request succeeds moments later.
			time.Sleep(300 * time.Millisecond)
			continue
		}
		if st.Poll == nil || st.Poll.Until.matches(rec, s) {
			return rec
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			rec.TimedOut = true
			return rec
		}
		select {
		case <-ctx.Done():
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// transientRetry bounds how long a request answered with a transient
// rebalance error is sent again.
const transientRetry = 15 * time.Second

// msgRebalanceExpected is the message of a Kafka Connect worker that has
// not yet joined the group's current assignment. It is transient, and not
// part of what the scenarios compare: the request is sent again.
const msgRebalanceExpected = "Request cannot be completed because a rebalance is expected"

// transient reports whether rec is an answer worth sending the request
// again for (see msgRebalanceExpected), or a connection the server closed
// while the request was still being written: a server refusing a large
// request (headers past its limit) answers and closes at once, and the
// client, still writing, may lose the answer to a broken pipe — a race,
// which the next attempt usually wins.
func transient(rec Record) bool {
	if rec.Err != "" {
		return strings.Contains(rec.Err, "broken pipe") || strings.Contains(rec.Err, "connection reset by peer")
	}
	return rec.Status >= 500 && bytes.Contains(rec.Body, []byte(msgRebalanceExpected))
}

// send sends a step's request once.
func (s System) send(ctx context.Context, st Step) Record {
	if st.Topic != "" {
		return s.readTopic(ctx, st)
	}
	if st.File != "" {
		return s.readFile(st)
	}
	path := s.expand(st.Path)
	rec := Record{Step: st, Request: st.Method + " " + path}
	pad := func(text string) string {
		if st.Pad > 0 {
			text = strings.Replace(text, "@PAD@", strings.Repeat("x", st.Pad), 1)
		}
		return text
	}
	var body io.Reader
	switch {
	case st.Raw != nil:
		body = strings.NewReader(pad(s.expand(*st.Raw)))
	case st.Body != nil:
		body = strings.NewReader(s.expand(string(st.Body)))
	}
	target := s.URL + path
	if st.RawTarget {
		target = s.URL + "/"
	}
	req, err := http.NewRequestWithContext(ctx, st.Method, target, body)
	if err != nil {
		rec.Err = err.Error()
		return rec
	}
	if st.RawTarget {
		// An opaque URL is written into the request line as it is.
		req.URL.Opaque = path
	}
	if (body != nil || st.ContentType != "") && !st.NoContentType {
		ct := st.ContentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	req.Header.Set("Accept", "application/json")
	for k, v := range st.Headers {
		req.Header.Set(k, pad(s.expand(v)))
	}
	resp, err := client.Do(req)
	if err != nil {
		rec.Err = err.Error()
		return rec
	}
	defer resp.Body.Close()
	rec.Status = resp.StatusCode
	rec.Body, err = io.ReadAll(resp.Body)
	if err != nil {
		rec.Err = err.Error()
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		if u, err := url.Parse(loc); err == nil {
			rec.Location = u.EscapedPath()
		} else {
			rec.Location = loc
		}
	}
	return rec
}

// matches reports whether an answer meets the condition.
func (m Match) matches(rec Record, s System) bool {
	if rec.Err != "" {
		return false
	}
	if m.Status != 0 && rec.Status != m.Status {
		return false
	}
	if len(m.Fields) == 0 {
		return true
	}
	v, ok := decode(rec.Body)
	if !ok {
		return false
	}
	for path, want := range m.Fields {
		if w, ok := want.(string); ok {
			want = s.expand(w)
		}
		got, ok := lookup(v, s.expand(path))
		if !ok || canonical(got) != canonical(want) {
			return false
		}
	}
	return true
}

// decode parses a JSON body keeping numbers as written.
func decode(body []byte) (any, bool) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

// lookup finds the value at a dot-separated path (see Match).
func lookup(v any, path string) (any, bool) {
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			if part == "#" {
				v = json.Number(strconv.Itoa(len(x)))
				continue
			}
			var ok bool
			if v, ok = x[part]; !ok {
				return nil, false
			}
		case []any:
			if part == "#" {
				v = json.Number(strconv.Itoa(len(x)))
				continue
			}
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// canonical is a value's JSON text with object keys sorted (encoding/json
// sorts map keys), so that equal values compare equal as strings.
func canonical(v any) string {
	if n, ok := v.(float64); ok && n == float64(int64(n)) {
		v = json.Number(strconv.FormatInt(int64(n), 10))
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(data)
}
