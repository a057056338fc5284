package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/sluice-io/sluice/sluicetest"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// leaderOptions shape a cluster of several coordinators.
type leaderOptions struct {
	Coordinators int           // default 3
	Agents       int           // default 2
	LeaderLease  time.Duration // --leader-lease, default 2s
	AgentLease   time.Duration // --agent-lease, default 3s
	// AgentLogLevel is the agents' --log-level (default info).
	AgentLogLevel string
}

// leaderCluster is several `sluice coordinator` processes of one group
// (same --group-id, NATS, Kafka and topics, distinct REST ports, listen and
// advertised addresses as deploy/k8s/coordinator.yaml sets them) and agents, all separate processes, on NATS and Kafka that live in the
// test process (or the real broker of SLUICE_TEST_KAFKA).
type leaderCluster struct {
	T       testing.TB
	Prefix  string
	NATSURL string
	Brokers string
	WorkDir string
	// Addrs[i] is coordinator i's host:port; Coords[i] its process.
	Addrs  []string
	Coords []*sluicetest.Proc
	Agents []*sluicetest.Proc
	opts   leaderOptions
	nc     *nats.Conn
	kv     jetstream.KeyValue
	client *http.Client
}

// startLeaderCluster starts NATS, Kafka, the coordinators and the agents,
// and returns once one coordinator leads and every agent registered with it.
func startLeaderCluster(t testing.TB, opts leaderOptions) *leaderCluster {
	t.Helper()
	if opts.Coordinators == 0 {
		opts.Coordinators = 3
	}
	if opts.Agents == 0 {
		opts.Agents = 2
	}
	if opts.LeaderLease == 0 {
		opts.LeaderLease = 2 * time.Second
	}
	if opts.AgentLease == 0 {
		opts.AgentLease = 3 * time.Second
	}
	if opts.AgentLogLevel == "" {
		opts.AgentLogLevel = "info"
	}
	c := &leaderCluster{T: t, Prefix: sluicetest.UniquePrefix(t), WorkDir: t.TempDir(), opts: opts,
		client: &http.Client{Timeout: 30 * time.Second}}
	be := sluicetest.StartBackends(t)
	c.NATSURL, c.Brokers = be.NATSURL, be.Brokers
	var err error
	if c.nc, err = nats.Connect(c.NATSURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.nc.Close)

	for i := range opts.Coordinators {
		// Each listens and advertises itself as the shipped manifest has a
		// pod do, with 127.0.0.1 for the pod's IP: on every interface, and
		// as <pod IP>:<port> to the other coordinators, which forward
		// writes there.
		addr := sluicetest.FreeAddr(t)
		c.Addrs = append(c.Addrs, addr)
		p := sluicetest.NewProc(t, fmt.Sprintf("coordinator-%d", i), append([]string{
			"coordinator", "--nats", c.NATSURL, "--kafka", c.Brokers,
			"--group-id", c.Prefix,
			"--config-topic", c.Prefix + "-configs",
			"--offsets-topic", c.Prefix + "-offsets",
			"--status-topic", c.Prefix + "-status",
			"--leader-lease", opts.LeaderLease.String(),
			"--agent-lease", opts.AgentLease.String(),
			"--task-shutdown-timeout", "5s",
			"--log-level", "info"}, sluicetest.SecurityFlags(c.Brokers)...)...)
		p.Env = ManifestEnv(t, addr)
		p.Start()
		c.Coords = append(c.Coords, p)
	}
	for i := range c.Coords {
		sluicetest.WaitHealthy(t, c.URL(i), 60*time.Second, c.Coords[i])
	}
	_, lease := c.WaitLeader(30*time.Second, -1)
	for i := range opts.Agents {
		c.Agents = append(c.Agents, sluicetest.StartProc(t, fmt.Sprintf("agent-%d", i+1), append([]string{
			"agent", "--nats", c.NATSURL, "--kafka", c.Brokers, "--id", fmt.Sprintf("agent-%d", i+1),
			"--work-dir", c.WorkDir,
			"--group-id", c.Prefix,
			"--offsets-topic", c.Prefix + "-offsets",
			"--offset-flush-interval", "200ms",
			"--task-shutdown-timeout", "5s",
			"--log-level", opts.AgentLogLevel}, sluicetest.SecurityFlags(c.Brokers)...)...))
	}
	c.WaitAgentsRegistered(0, lease.Term, 30*time.Second)
	return c
}

// URL is coordinator i's REST base URL.
func (c *leaderCluster) URL(i int) string { return "http://" + c.Addrs[i] }

// Name prefixes base with the cluster's unique prefix.
func (c *leaderCluster) Name(base string) string { return c.Prefix + "-" + base }

// Try sends a request to coordinator i without failing the test on a
// transport error: the error is returned instead.
func (c *leaderCluster) Try(i int, method, path string, body any) (sluicetest.Response, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return sluicetest.Response{}, err
		}
		rd = strings.NewReader(string(data))
	}
	req, err := http.NewRequest(method, c.URL(i)+path, rd)
	if err != nil {
		return sluicetest.Response{}, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return sluicetest.Response{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return sluicetest.Response{}, err
	}
	return sluicetest.Response{Status: resp.StatusCode, Header: resp.Header, Body: data}, nil
}

// Must sends a request to coordinator i and fails the test unless the
// status is want.
func (c *leaderCluster) Must(i, want int, method, path string, body any) sluicetest.Response {
	c.T.Helper()
	r := sluicetest.Do(c.T, c.URL(i), method, path, body)
	if r.Status != want {
		c.T.Fatalf("%s %s through %s: got %s, want status %d", method, path, c.Coords[i].Name(), r, want)
	}
	return r
}

// Health is coordinator i's GET /health.
func (c *leaderCluster) Health(i int) (api.Health, error) {
	return sluicetest.GetHealth(&http.Client{Timeout: 2 * time.Second}, c.URL(i))
}

// Lease reads the leader lease from the NATS key-value bucket; ok is false
// while there is none.
func (c *leaderCluster) Lease() (l wire.LeaderLease, ok bool) {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if c.kv == nil {
		js, err := jetstream.New(c.nc)
		if err != nil {
			c.T.Fatal(err)
		}
		kv, err := js.KeyValue(ctx, wire.LeaderBucket(c.Prefix))
		if err != nil {
			return l, false
		}
		c.kv = kv
	}
	e, err := c.kv.Get(ctx, wire.LeaderKey)
	if err != nil {
		return l, false
	}
	if err := json.Unmarshal(e.Value(), &l); err != nil || l.Term == 0 {
		return wire.LeaderLease{}, false
	}
	return l, true
}

// WaitLeader waits until the lease names a coordinator other than skip's
// (-1: any) and every running, unpaused coordinator agrees in GET /health:
// exactly one says role leader, and all name it as leader. It returns the
// leader's index and the lease.
func (c *leaderCluster) WaitLeader(timeout time.Duration, skip int, paused ...int) (int, wire.LeaderLease) {
	c.T.Helper()
	idx, lease := -1, wire.LeaderLease{}
	sluicetest.Eventually(c.T, timeout, func() (bool, string) {
		l, ok := c.Lease()
		if !ok {
			return false, "no lease"
		}
		leaders, views := []int{}, []string{}
		for i, p := range c.Coords {
			if !p.Running() || contains(paused, i) {
				continue
			}
			h, err := c.Health(i)
			if err != nil {
				return false, fmt.Sprintf("%s: %v", p.Name(), err)
			}
			views = append(views, fmt.Sprintf("%s=%s/%s", p.Name(), h.Role, h.Leader))
			if h.Role == "leader" {
				leaders = append(leaders, i)
			}
			if h.Leader == "" || (len(leaders) > 0 && h.Leader != c.Addrs[leaders[0]]) {
				return false, fmt.Sprintf("no agreement yet: %v, lease %+v", views, l)
			}
		}
		if len(leaders) != 1 || leaders[0] == skip || l.URL != c.URL(leaders[0]) {
			return false, fmt.Sprintf("leaders %v, health %v, lease %+v", leaders, views, l)
		}
		for i, p := range c.Coords {
			if p.Running() && !contains(paused, i) {
				if h, _ := c.Health(i); h.Leader != c.Addrs[leaders[0]] {
					return false, fmt.Sprintf("%s names leader %q, lease %+v", p.Name(), h.Leader, l)
				}
			}
		}
		idx, lease = leaders[0], l
		return true, ""
	})
	return idx, lease
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// WaitAgentsRegistered waits until every agent logged, after its byte
// offset m (0: from the start), that it registered with the leader of term.
func (c *leaderCluster) WaitAgentsRegistered(m sluicetest.Mark, term int64, timeout time.Duration) {
	c.T.Helper()
	sluicetest.Eventually(c.T, timeout, func() (bool, string) {
		var missing []string
		for _, a := range c.Agents {
			if a.CountLogSince(m, `msg="registered with coordinator"`, fmt.Sprintf("term=%d", term)) == 0 {
				missing = append(missing, a.Name())
			}
		}
		return len(missing) == 0, fmt.Sprintf("not registered with term %d yet: %v", term, missing)
	})
}

// Status reads a connector's status through coordinator i.
func (c *leaderCluster) Status(i int, name string) (sluicetest.Status, bool) {
	c.T.Helper()
	r := sluicetest.Do(c.T, c.URL(i), http.MethodGet, "/connectors/"+name+"/status", nil)
	if r.Status == http.StatusNotFound {
		return sluicetest.Status{}, false
	}
	if r.Status != http.StatusOK {
		c.T.Fatalf("status of %s through %s: %s", name, c.Coords[i].Name(), r)
	}
	var s sluicetest.Status
	r.JSON(c.T, &s)
	return s, true
}

// WaitRunning waits until the connector and its tasks tasks are RUNNING
// as coordinator i shows them, and returns the task placement.
func (c *leaderCluster) WaitRunning(i int, name string, tasks int) map[int]string {
	c.T.Helper()
	placed := map[int]string{}
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		s, ok := c.Status(i, name)
		if !ok || s.Connector.State != "RUNNING" || len(s.Tasks) != tasks {
			return false, fmt.Sprintf("%s: %+v", name, s)
		}
		for _, ts := range s.Tasks {
			if ts.State != "RUNNING" {
				return false, fmt.Sprintf("%s task %d is %s on %q", name, ts.ID, ts.State, ts.WorkerID)
			}
			placed[ts.ID] = ts.WorkerID
		}
		return true, ""
	})
	return placed
}

// Marks returns every agent's current log mark, by agent name.
func (c *leaderCluster) Marks() map[string]sluicetest.Mark {
	out := map[string]sluicetest.Mark{}
	for _, a := range c.Agents {
		out[a.Name()] = a.Mark()
	}
	return out
}

// TaskStarts sums the agents' "task started" lines after marks, per task.
func (c *leaderCluster) TaskStarts(marks map[string]sluicetest.Mark) map[string]int {
	out := map[string]int{}
	for _, a := range c.Agents {
		for id, n := range a.TaskStarts(marks[a.Name()]) {
			out[id] += n
		}
	}
	return out
}

// CreateTopic creates a topic with the given partition count.
func (c *leaderCluster) CreateTopic(topic string, partitions int32) {
	c.T.Helper()
	sluicetest.CreateTopic(c.T, c.Brokers, topic, partitions)
}

// rawRecord is a record with the producer that wrote it.
type rawRecord struct {
	Partition int32
	Offset    int64
	Key       string
	Value     []byte
	Producer  producer
	Timestamp time.Time
}

// producer is a producer id and epoch: a new leader's InitProducerID on
// the shared transactional id <group>-leader bumps the epoch (or, rarely,
// the id), so it tells which leader wrote a record.
type producer struct {
	ID    int64
	Epoch int16
}

func (p producer) String() string { return fmt.Sprintf("%d/%d", p.ID, p.Epoch) }

// ReadRaw reads every data record of topic up to its current end, in
// partition and offset order, read_uncommitted: records of aborted or open
// transactions are included, so a zombie's write shows even if it never
// committed.
func (c *leaderCluster) ReadRaw(topic string) []rawRecord {
	c.T.Helper()
	var out []rawRecord
	for _, r := range sluicetest.ReadLog(c.T, c.Brokers, c.Prefix+"-test-raw", topic, false) {
		if !r.Attrs.IsControl() {
			out = append(out, rawRecord{Partition: r.Partition, Offset: r.Offset,
				Key: string(r.Key), Value: r.Value, Producer: producer{r.ProducerID, r.ProducerEpoch}, Timestamp: r.Timestamp})
		}
	}
	return out
}

// taskGen is a task's owner and generation as the status topic says.
type taskGen struct {
	Worker     string
	Generation int64
	State      string
}

// TaskGenerations returns the last status of every task of the status
// topic (read_committed), by task id "<connector>-<n>".
func (c *leaderCluster) TaskGenerations() map[string]taskGen {
	c.T.Helper()
	out := map[string]taskGen{}
	for _, r := range (&sluicetest.Cluster{T: c.T, Brokers: c.Brokers}).ReadTopic(c.Prefix + "-status") {
		rec, err := records.DecodeStatus(string(r.Key), r.Value)
		if err != nil || rec.Kind != records.StatusTask {
			continue
		}
		id := fmt.Sprintf("%s-%d", rec.Connector, rec.Task)
		if rec.Status == nil {
			delete(out, id)
			continue
		}
		out[id] = taskGen{Worker: rec.Status.WorkerID, Generation: rec.Status.Generation, State: rec.Status.State}
	}
	return out
}

// isRefused reports whether err is a refused connection: the request never
// reached a process, so it cannot have had an effect.
func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}
