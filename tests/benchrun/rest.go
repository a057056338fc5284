package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// client is the REST client of every call; keep-alive connections, as a
// real client would use.
var client = &http.Client{
	Timeout:   90 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 16},
}

// httpDo sends a request (body nil or JSON-encoded) and returns the status
// and body.
func httpDo(method, url string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// must sends a request to the cluster and fails unless one of want is the
// status.
func (c *cluster) must(method, path string, body any, want ...int) ([]byte, error) {
	code, data, err := httpDo(method, c.url()+path, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s %s: %w", c.sys, method, path, err)
	}
	for _, w := range want {
		if code == w {
			return data, nil
		}
	}
	return nil, fmt.Errorf("%s %s %s: %d %s", c.sys, method, path, code, strings.TrimSpace(string(data)))
}

// waitFor polls cond every 50ms until it holds, and fails after timeout
// with what and cond's last explanation.
func waitFor(timeout time.Duration, what string, cond func() (bool, string)) error {
	return waitEvery(50*time.Millisecond, timeout, what, cond)
}

// waitEvery is waitFor polling every interval.
func waitEvery(interval, timeout time.Duration, what string, cond func() (bool, string)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v waiting for %s: %s", timeout, what, why)
		}
		time.Sleep(interval)
	}
}

// parallel calls fn(i) for i in [0, n) on conc goroutines and returns the
// first error.
func parallel(n, conc int, fn func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan int)
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// bulkConc is how many REST calls bulk operations (create, stop, resume of
// many connectors) keep in flight, for both systems alike.
const bulkConc = 8

// taskState is one task in a status.
type taskState struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

// connStatus is a connector's status.
type connStatus struct {
	Name      string `json:"name"`
	Connector struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace,omitempty"`
	} `json:"connector"`
	Tasks []taskState `json:"tasks"`
}

// statuses reads GET /connectors?expand=status: every connector's status by
// name.
func (c *cluster) statuses() (map[string]connStatus, error) {
	data, err := c.must(http.MethodGet, "/connectors?expand=status", nil, http.StatusOK)
	if err != nil {
		return nil, err
	}
	var raw map[string]struct {
		Status connStatus `json:"status"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("decode statuses: %w", err)
	}
	out := make(map[string]connStatus, len(raw))
	for name, r := range raw {
		out[name] = r.Status
	}
	return out, nil
}

// statusPoll is how often waitAll reads the expanded status of n
// connectors: often enough that a wall time of a few hundred milliseconds
// is not rounded up by much of a poll, and for thousands of connectors
// seldom enough that encoding their status does not load the system
// measured.
func statusPoll(n int) time.Duration {
	if n <= 500 {
		return 20 * time.Millisecond
	}
	return 100 * time.Millisecond
}

// waitAll waits until every one of names satisfies ok, polling the expanded
// status (statusPoll), and returns the last statuses.
func (c *cluster) waitAll(names []string, timeout time.Duration, what string, ok func(connStatus) bool) (map[string]connStatus, error) {
	var last map[string]connStatus
	deadline := time.Now().Add(timeout)
	for {
		st, err := c.statuses()
		if err == nil {
			last = st
			var bad []string
			for _, n := range names {
				s, found := st[n]
				if !found || !ok(s) {
					bad = append(bad, n)
				}
			}
			if len(bad) == 0 {
				return st, nil
			}
			if time.Now().After(deadline) {
				sort.Strings(bad)
				s := st[bad[0]]
				return last, fmt.Errorf("%s: timed out after %v waiting until %s: %d of %d not yet, e.g. %s: %+v",
					c.sys, timeout, what, len(bad), len(names), bad[0], s)
			}
		} else if time.Now().After(deadline) {
			return last, fmt.Errorf("%s: timed out after %v waiting until %s: %v", c.sys, timeout, what, err)
		}
		time.Sleep(statusPoll(len(names)))
	}
}

// allRunning holds when the connector and exactly tasks tasks are RUNNING.
func allRunning(tasks int) func(connStatus) bool {
	return func(s connStatus) bool {
		if s.Connector.State != "RUNNING" || len(s.Tasks) != tasks {
			return false
		}
		for _, t := range s.Tasks {
			if t.State != "RUNNING" {
				return false
			}
		}
		return true
	}
}

// isStopped holds when the connector is STOPPED with no tasks.
func isStopped(s connStatus) bool { return s.Connector.State == "STOPPED" && len(s.Tasks) == 0 }

// createAll creates connectors names[i] with config cfg(i) and the given
// initial state ("" for the default, RUNNING).
func (c *cluster) createAll(names []string, state string, cfg func(i int) map[string]string) error {
	return parallel(len(names), bulkConc, func(i int) error {
		body := map[string]any{"name": names[i], "config": cfg(i)}
		if state != "" {
			body["initial_state"] = state
		}
		_, err := c.must(http.MethodPost, "/connectors", body, http.StatusCreated)
		return err
	})
}

// putAll sends PUT /connectors/<name>/<verb> (stop, resume) for every name.
func (c *cluster) putAll(names []string, verb string) error {
	return parallel(len(names), bulkConc, func(i int) error {
		_, err := c.must(http.MethodPut, "/connectors/"+names[i]+"/"+verb, nil, http.StatusOK, http.StatusAccepted, http.StatusNoContent)
		return err
	})
}

// failure is the first line of the trace of a FAILED connector or task of
// s, "" when none failed.
func (s connStatus) failure() string {
	first := func(trace string) string { l, _, _ := strings.Cut(trace, "\n"); return l }
	if s.Connector.State == "FAILED" {
		return "connector FAILED: " + first(s.Connector.Trace)
	}
	for _, t := range s.Tasks {
		if t.State == "FAILED" {
			return fmt.Sprintf("task %d FAILED: %s", t.ID, first(t.Trace))
		}
	}
	return ""
}
