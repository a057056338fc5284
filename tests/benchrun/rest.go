package main

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sluice-io/sluice/api"
)

// restHTTP sends every REST call; keep-alive connections, as a real client
// would use.
var restHTTP = &http.Client{
	Timeout:   90 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 16},
}

// clientAt is the typed client of the REST server at url. It sends each
// call once: what a system answers during a failover (a 409, a 503) is
// what the benchmark times and reports, not something to hide behind a
// retry.
func clientAt(url string) *api.Client {
	c, err := api.NewClient(api.Config{Address: url, HTTPClient: restHTTP, Retry: &api.NoRetry, UserAgent: "sluice-benchrun"})
	if err != nil {
		// The addresses are this program's own http://host:port.
		panic(fmt.Sprintf("the REST client of %q: %v", url, err))
	}
	return c
}

// rest is the client of the cluster's REST server (url()): the
// coordinator, or the first live worker.
func (c *cluster) rest() *api.Client { return clientAt(c.url()) }

// failed names the system and the call that failed.
func (c *cluster) failed(what string, err error) error {
	return fmt.Errorf("%s: %s: %w", c.sys, what, err)
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

// connStatus is a connector's status.
type connStatus = api.ConnectorStateInfo

// statuses reads GET /connectors?expand=status: every connector's status by
// name.
func (c *cluster) statuses() (map[string]connStatus, error) {
	all, err := c.rest().Connectors().ListExpanded(context.Background(), true, false)
	if err != nil {
		return nil, c.failed("GET /connectors?expand=status", err)
	}
	out := make(map[string]connStatus, len(all))
	for name, e := range all {
		if e.Status != nil {
			out[name] = *e.Status
		}
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
		_, err := c.rest().Connectors().Create(context.Background(), api.CreateConnectorRequest{Name: names[i], Config: cfg(i), InitialState: state})
		if err != nil {
			return c.failed("create "+names[i], err)
		}
		return nil
	})
}

// putAll stops or resumes (verb) every connector of names.
func (c *cluster) putAll(names []string, verb string) error {
	cs := c.rest().Connectors()
	var send func(context.Context, string) error
	switch verb {
	case "stop":
		send = cs.Stop
	case "resume":
		send = cs.Resume
	default:
		return fmt.Errorf("putAll: no verb %q", verb)
	}
	return parallel(len(names), bulkConc, func(i int) error {
		if err := send(context.Background(), names[i]); err != nil {
			return c.failed(verb+" "+names[i], err)
		}
		return nil
	})
}

// failure is the first line of the trace of a FAILED connector or task of
// s, "" when none failed.
func failure(s connStatus) string {
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
