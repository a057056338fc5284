package procs

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluice-io/sluice/shared/embedded"
	"github.com/sluice-io/sluice/shared/natsperm"

	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/internal/defaults"
)

// Options shape a cluster of sluice processes.
type Options struct {
	// Coordinators is the number of coordinators (default 1), named as
	// CoordinatorName says. Several lead by the leader lease; Start
	// returns once one leads and every agent registered with it.
	Coordinators int
	// Agents is the number of agents started with the cluster (default 2),
	// with ids agent-1, agent-2, …
	Agents int
	// Labels, when set, gives agent i the --labels value Labels[i].
	Labels []string
	// Lease (default 3s), ShutdownTimeout (default 5s) and FlushInterval
	// (default 200ms) are sluicetest.Options' knobs of the same names,
	// given to the processes as --agent-lease, --task-shutdown-timeout
	// and --offset-flush-interval.
	Lease           time.Duration
	ShutdownTimeout time.Duration
	FlushInterval   time.Duration
	// LeaderLease is the coordinators' --leader-lease (default: the
	// binary's with one coordinator, 2s with several).
	LeaderLease time.Duration
	// AgentLogLevel is the agents' --log-level (default info).
	AgentLogLevel string
	// CoordinatorEnv, when set, gives the coordinator called name,
	// listening on addr (host:port), its environment, which then says
	// where it listens (no --listen flag): e.g. the addresses a deployment
	// manifest sets. AgentEnv gives agent id extra environment variables.
	CoordinatorEnv func(name, addr string) []string
	AgentEnv       func(id string) []string
	// Prefix, when set, is the cluster's Prefix (default UniquePrefix):
	// for a test that must name the group before it starts (NATSCreds).
	Prefix string
	// NATSURL and Brokers, when both set, are the NATS server (or
	// comma-separated servers) and Kafka brokers the cluster runs on,
	// instead of its own (SecureNATS then does nothing: NATSCreds says the
	// processes' credentials).
	NATSURL string
	Brokers string
	// NATSCreds are the processes' nkey seed files: a coordinator's by its
	// name or, for every coordinator, by sluicetest.CoordinatorUser; an
	// agent's by its id. SecureNATS fills them.
	NATSCreds natsperm.Files
	// AgentConnect, when set, says where agent id reaches NATS and Kafka
	// (e.g. through a proxy a test can cut); "" for the cluster's own.
	AgentConnect func(id string) (natsURL, brokers string)
	// CoordinatorArgs and AgentArgs are appended to every coordinator's and
	// agent's flags (e.g. --exactly-once-source-support=enabled).
	CoordinatorArgs []string
	AgentArgs       []string
	// SecureNATS starts NATS with deploy/nats's configuration for the
	// coordinator and agents agent-1 … agent-<Agents>, and runs each
	// process with --nats-nkey-seed of its own user (Cluster.NATSCreds).
	SecureNATS bool
}

// Cluster is one or several coordinators and agents running as separate
// sluice processes, on NATS and Kafka that live in the test process (or a
// real Kafka broker, see sluicetest.KafkaEnv, or the test's own,
// Options.NATSURL and Brokers).
type Cluster struct {
	T testing.TB
	// Prefix is unique to this cluster: the group id, and the prefix of its
	// topic and connector names.
	Prefix  string
	NATSURL string
	Brokers string
	// WorkDir is every agent's --work-dir.
	WorkDir string
	// URL is coordinator 0's REST base URL; it stays the same across
	// coordinator restarts.
	URL string
	// Coordinator is coordinator 0, Coordinators all of them; Addrs[i] is
	// coordinator i's REST host:port.
	Coordinator  *Proc
	Coordinators []*Proc
	Addrs        []string
	Agents       []*Proc
	// NATSCreds are the nkey seed files of Options.SecureNATS.
	NATSCreds natsperm.Files

	opts    Options
	natsMu  sync.Mutex
	nc      *nats.Conn
	leaseKV jetstream.KeyValue
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9]+`)

// UniquePrefix is a name for t's cluster, unique across runs so that tests
// can share one real broker: "e2e-<test name>-<random>".
func UniquePrefix(t testing.TB) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	name := strings.Trim(unsafeChars.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(name) > 40 {
		name = strings.TrimRight(name[:40], "-")
	}
	return "e2e-" + name + "-" + hex.EncodeToString(b)
}

// Start starts NATS and Kafka (embedded, or the real broker of
// SLUICE_TEST_KAFKA), opts.Coordinators coordinators and opts.Agents
// agents, and returns once the coordinator is healthy and every agent
// registered (several coordinators: once every one is healthy, one leads
// and every agent registered with it). Everything stops at test cleanup.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	defaults.Fill(&opts.Agents, &opts.Lease, &opts.ShutdownTimeout, &opts.FlushInterval)
	if opts.Coordinators == 0 {
		opts.Coordinators = 1
	}
	if opts.Coordinators > 1 && opts.LeaderLease == 0 {
		opts.LeaderLease = 2 * time.Second
	}
	if opts.AgentLogLevel == "" {
		opts.AgentLogLevel = "info"
	}
	if opts.Prefix == "" {
		opts.Prefix = UniquePrefix(t)
	}
	c := &Cluster{T: t, Prefix: opts.Prefix, WorkDir: t.TempDir(), opts: opts,
		NATSURL: opts.NATSURL, Brokers: opts.Brokers, NATSCreds: opts.NATSCreds}
	if c.NATSURL == "" || c.Brokers == "" {
		// Registered before any process, so these cleanups run after
		// every process was killed.
		var nopts []embedded.NATSOption
		if opts.SecureNATS {
			nopts = append(nopts, c.secureNATS())
		}
		be := sluicetest.StartBackends(t, nopts...)
		c.NATSURL, c.Brokers = be.NATSURL, be.Brokers
	}

	for i := range opts.Coordinators {
		c.startCoordinator(i)
	}
	c.Coordinator, c.URL = c.Coordinators[0], c.CoordinatorURL(0)
	var ids []string
	for i := 0; i < opts.Agents; i++ {
		ids = append(ids, fmt.Sprintf("agent-%d", i+1))
	}
	addAgents := func() {
		for i, id := range ids {
			var lbls string
			if i < len(opts.Labels) {
				lbls = opts.Labels[i]
			}
			c.AddAgent(id, lbls)
		}
	}
	if opts.Coordinators == 1 {
		c.WaitHealthy()
		mark := c.Coordinator.Mark()
		addAgents()
		c.WaitRegistered(mark, ids...)
		return c
	}
	for i, p := range c.Coordinators {
		WaitHealthy(t, c.CoordinatorURL(i), 60*time.Second, p)
	}
	_, lease := c.WaitLeader(30*time.Second, -1)
	addAgents()
	c.WaitAgentsRegistered(0, lease.Term, 30*time.Second)
	return c
}

// secureNATS makes the nkeys of the coordinator and of the cluster's agents
// and the NATS server's configuration from deploy/nats, and returns the
// option that starts the server with it.
func (c *Cluster) secureNATS() embedded.NATSOption {
	c.T.Helper()
	ids := make([]string, c.opts.Agents)
	for i := range ids {
		ids[i] = fmt.Sprintf("agent-%d", i+1)
	}
	files, err := natsperm.Generate(c.T.TempDir(), natsperm.Config{GroupID: c.Prefix}, []string{sluicetest.CoordinatorUser}, ids)
	if err != nil {
		c.T.Fatal(err)
	}
	c.NATSCreds = files
	return embedded.ConfigFile(files.Config)
}

// AddAgent starts another agent with the given id and labels (may be "").
// It does not wait for the agent to register; see WaitRegistered.
func (c *Cluster) AddAgent(id, labels string) *Proc {
	c.T.Helper()
	natsURL, brokers := c.NATSURL, c.Brokers
	if c.opts.AgentConnect != nil {
		if n, b := c.opts.AgentConnect(id); n != "" {
			natsURL, brokers = n, b
		}
	}
	args := []string{"agent",
		"--nats", natsURL, "--kafka", brokers, "--id", id,
		"--work-dir", c.WorkDir,
		"--group-id", c.Prefix,
		"--offsets-topic", c.Prefix + "-offsets",
		"--offset-flush-interval", c.opts.FlushInterval.String(),
		"--task-shutdown-timeout", c.opts.ShutdownTimeout.String(),
		"--log-level", c.opts.AgentLogLevel,
	}
	args = append(args, sluicetest.SecurityFlags(c.Brokers)...)
	if labels != "" {
		args = append(args, "--labels", labels)
	}
	if seed := c.NATSCreds.Agents[id]; seed != "" {
		args = append(args, "--nats-nkey-seed", seed)
	}
	p := NewProc(c.T, id, append(args, c.opts.AgentArgs...)...)
	if c.opts.AgentEnv != nil {
		p.Env = c.opts.AgentEnv(id)
	}
	p.Start()
	c.Agents = append(c.Agents, p)
	return p
}

// Agent returns the agent process with the given id, failing the test if
// there is none.
func (c *Cluster) Agent(id string) *Proc {
	c.T.Helper()
	for _, a := range c.Agents {
		if a.Name() == id {
			return a
		}
	}
	c.T.Fatalf("no agent %q", id)
	return nil
}

// Name returns base prefixed with the cluster's unique prefix, for topics,
// connectors (their sink groups are connect-<name>) and other names that
// must not collide on a shared broker.
func (c *Cluster) Name(base string) string { return c.Prefix + "-" + base }

// WaitHealthy waits until GET /health answers 200, failing at once if the
// coordinator process exits meanwhile.
func (c *Cluster) WaitHealthy() {
	c.T.Helper()
	WaitHealthy(c.T, c.URL, 30*time.Second, c.Coordinator)
}

// WaitHealthy waits until baseURL's GET /health answers 200, treating
// connection errors as "not yet"; it fails at once if one of procs (those
// that must stay up meanwhile) exits.
func WaitHealthy(t testing.TB, baseURL string, timeout time.Duration, procs ...*Proc) {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	sluicetest.Eventually(t, timeout, func() (bool, string) {
		for _, p := range procs {
			if !p.Running() {
				code, _ := p.Wait(0)
				t.Fatalf("%s exited with code %d before GET /health answered 200", p.Name(), code)
			}
		}
		resp, err := client.Get(baseURL + "/health")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, fmt.Sprintf("GET /health: %d", resp.StatusCode)
	})
}

// WaitRegistered waits until the coordinator has logged, after m, that each
// of the agents registered. The coordinator logs every registration, so
// this sees re-registrations after an agent or coordinator restart.
func (c *Cluster) WaitRegistered(m Mark, agentIDs ...string) {
	c.T.Helper()
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		var missing []string
		for _, p := range append([]*Proc{c.Coordinator}, c.Agents...) {
			if !p.Running() && (p == c.Coordinator || slices.Contains(agentIDs, p.Name())) {
				code, _ := p.Wait(0)
				c.T.Fatalf("%s exited with code %d while waiting for registrations", p.Name(), code)
			}
		}
		for _, id := range agentIDs {
			if c.Coordinator.CountLogSince(m, `msg="agent registered"`, "agent="+id+" ") == 0 {
				missing = append(missing, id)
			}
		}
		return len(missing) == 0, fmt.Sprintf("not registered yet: %v", missing)
	})
}

// Do sends a request to the coordinator (see Do).
func (c *Cluster) Do(method, path string, body any) sluicetest.Response {
	c.T.Helper()
	return sluicetest.Do(c.T, c.URL, method, path, body)
}

// Must sends a request and fails the test unless the status is want.
func (c *Cluster) Must(want int, method, path string, body any) sluicetest.Response {
	c.T.Helper()
	r := c.Do(method, path, body)
	if r.Status != want {
		c.T.Fatalf("%s %s: got %s, want status %d", method, path, r, want)
	}
	return r
}

// Status reads a connector's status; ok is false on 404.
func (c *Cluster) Status(name string) (s sluicetest.Status, ok bool) {
	c.T.Helper()
	r := c.Do(http.MethodGet, "/connectors/"+name+"/status", nil)
	if r.Status == http.StatusNotFound {
		return s, false
	}
	if r.Status != http.StatusOK {
		c.T.Fatalf("status of %s: %s", name, r)
	}
	r.JSON(c.T, &s)
	return s, true
}

// WaitRunning waits until the connector and exactly tasks tasks are
// RUNNING, and returns that status.
func (c *Cluster) WaitRunning(name string, tasks int) sluicetest.Status {
	c.T.Helper()
	var last sluicetest.Status
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		s, ok := c.Status(name)
		if !ok {
			return false, "no status yet"
		}
		last = s
		if s.Connector.State != "RUNNING" || len(s.Tasks) != tasks {
			return false, fmt.Sprintf("connector %s with %d tasks: %+v", s.Connector.State, len(s.Tasks), s)
		}
		for _, ts := range s.Tasks {
			if ts.State != "RUNNING" {
				return false, fmt.Sprintf("task %d is %s on %q (%s)", ts.ID, ts.State, ts.WorkerID, ts.Trace)
			}
		}
		return true, ""
	})
	return last
}

// ConnectorNames returns GET /connectors, sorted.
func (c *Cluster) ConnectorNames() []string {
	c.T.Helper()
	var names []string
	c.Must(http.StatusOK, http.MethodGet, "/connectors", nil).JSON(c.T, &names)
	sort.Strings(names)
	return names
}

// TaskStarts sums the "task started" lines of every agent after its mark in
// marks (from Marks; agents without one count from the beginning), per
// task id.
func (c *Cluster) TaskStarts(marks map[string]Mark) map[string]int {
	out := map[string]int{}
	for _, a := range c.Agents {
		for id, n := range a.TaskStarts(marks[a.Name()]) {
			out[id] += n
		}
	}
	return out
}

// Marks returns every agent's current log mark, by agent id.
func (c *Cluster) Marks() map[string]Mark {
	out := map[string]Mark{}
	for _, a := range c.Agents {
		out[a.Name()] = a.Mark()
	}
	return out
}

// CreateTopic creates topic with the given partition count.
func (c *Cluster) CreateTopic(topic string, partitions int32) {
	c.T.Helper()
	sluicetest.CreateTopic(c.T, c.Brokers, topic, partitions)
}

// ReadTopic reads every committed record of topic (read_committed), in
// partition and offset order.
func (c *Cluster) ReadTopic(topic string) []sluicetest.Record {
	c.T.Helper()
	// sluicetest.Cluster's reader needs only the test and the brokers.
	return (&sluicetest.Cluster{T: c.T, Brokers: c.Brokers}).ReadTopic(topic)
}

// WaitTask waits until task 0 of connector name satisfies ok (by state and
// worker id); what describes the wait.
func (c *Cluster) WaitTask(name string, ok func(state, worker string) bool, what string) {
	c.T.Helper()
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		s, found := c.Status(name)
		if !found || len(s.Tasks) == 0 {
			return false, fmt.Sprintf("%s has no task status yet", name)
		}
		ts := s.Tasks[0]
		return ok(ts.State, ts.WorkerID), fmt.Sprintf("%s-0 is %s on %q, want %s (%s)", name, ts.State, ts.WorkerID, what, ts.Trace)
	})
}

// StartLines returns the "task started" lines of every agent after marks,
// as evidence for a failure message.
func (c *Cluster) StartLines(marks map[string]Mark) string {
	var s string
	for _, a := range c.Agents {
		for _, l := range a.LogLinesSince(marks[a.Name()], `msg="task started"`) {
			s += a.Name() + ": " + l + "\n"
		}
	}
	return s
}
