// Package fakeconnect is a Kafka Connect cluster's REST API as a test
// double: an HTTP server that answers the calls a migration from Kafka
// Connect makes — list, config, status, stop, pause, resume, offsets,
// delete — in Kafka Connect's JSON, over connectors a test puts in it.
// It runs no connector: a stop is STOPPED with no tasks at once (or after
// StopAfter more status reads), and positions are what the test set.
//
// It stands for a remote peer Sluice reads over HTTP, not for NATS or
// Kafka, which tests run for real.
package fakeconnect

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-io/sluice/api"
)

// Connector is one connector of the fake cluster.
type Connector struct {
	Config map[string]string
	// State is RUNNING, PAUSED or STOPPED; Type source or sink.
	State, Type string
	// Tasks is how many tasks it runs while not STOPPED.
	Tasks   int
	Offsets []api.ConnectorOffset
}

// Server is a fake Kafka Connect REST API. Its URL is the cluster's.
type Server struct {
	*httptest.Server
	// User and Password, when User is set, are the HTTP Basic credentials
	// it requires: any other request is a 401.
	User, Password string
	// StopAfter is how many status reads a stopping connector still shows
	// RUNNING with its tasks.
	StopAfter int

	mu       sync.Mutex
	conns    map[string]*Connector
	stopping map[string]int
	seen     []string
}

// Start starts a server, stopped at the test's end.
func Start(t testing.TB) *Server {
	s := &Server{conns: map[string]*Connector{}, stopping: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Add puts a connector in the cluster; its config gets its "name", as
// Kafka Connect's always has.
func (s *Server) Add(name string, c Connector) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.Config = maps.Clone(c.Config)
	if c.Config == nil {
		c.Config = map[string]string{}
	}
	c.Config["name"] = name
	s.conns[name] = &c
}

// State is a connector's state, "" when it does not exist.
func (s *Server) State(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.conns[name]; ok {
		return c.State
	}
	return ""
}

// Requests are the requests it got, as "METHOD path" and, when one came,
// " auth=<Authorization header>".
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	line := r.Method + " " + r.URL.Path
	if h := r.Header.Get("Authorization"); h != "" {
		line += " auth=" + h
	}
	s.seen = append(s.seen, line)
	if s.User != "" && r.Header.Get("Authorization") != "Basic "+base64.StdEncoding.EncodeToString([]byte(s.User+":"+s.Password)) {
		fail(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/connectors")
	if !ok {
		fail(w, http.StatusNotFound, "HTTP 404 Not Found")
		return
	}
	if rest == "" && r.Method == http.MethodGet {
		names := make([]string, 0, len(s.conns))
		for n := range s.conns {
			names = append(names, n)
		}
		slices.Sort(names)
		answer(w, http.StatusOK, names)
		return
	}
	name, verb, _ := strings.Cut(strings.TrimPrefix(rest, "/"), "/")
	c, ok := s.conns[name]
	if !ok {
		fail(w, http.StatusNotFound, "Connector "+name+" not found")
		return
	}
	switch r.Method + " " + verb {
	case "GET config":
		answer(w, http.StatusOK, c.Config)
	case "GET status":
		answer(w, http.StatusOK, s.status(name, c))
	case "GET offsets":
		answer(w, http.StatusOK, api.ConnectorOffsets{Offsets: c.Offsets})
	case "PUT stop":
		c.State = api.StateStopped
		s.stopping[name] = s.StopAfter
		w.WriteHeader(http.StatusNoContent)
	case "PUT pause":
		c.State = api.StatePaused
		w.WriteHeader(http.StatusAccepted)
	case "PUT resume":
		c.State = api.StateRunning
		w.WriteHeader(http.StatusAccepted)
	case "DELETE ":
		delete(s.conns, name)
		w.WriteHeader(http.StatusNoContent)
	default:
		fail(w, http.StatusNotFound, "HTTP 404 Not Found")
	}
}

// status is the connector's status as Kafka Connect shows it: a stopping
// one RUNNING with its tasks until StopAfter reads passed.
func (s *Server) status(name string, c *Connector) api.ConnectorStateInfo {
	state, tasks := c.State, c.Tasks
	if state == api.StateStopped {
		tasks = 0
		if s.stopping[name] > 0 {
			s.stopping[name]--
			state, tasks = api.StateRunning, c.Tasks
		}
	}
	st := api.ConnectorStateInfo{Name: name, Type: c.Type, Connector: api.ConnectorState{State: state, WorkerID: "connect-1:8083"}, Tasks: []api.TaskState{}}
	for i := 0; i < tasks; i++ {
		st.Tasks = append(st.Tasks, api.TaskState{ID: i, State: state, WorkerID: "connect-1:8083"})
	}
	return st
}

func answer(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// fail answers status with Kafka Connect's error body.
func fail(w http.ResponseWriter, status int, message string) {
	answer(w, status, map[string]any{"error_code": status, "message": message})
}
