package faults

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/tests/e2e"
)

// sluiceBin is the sluice binary the suite runs, built by TestMain.
var sluiceBin string

// Options shape the cluster of one row.
type Options struct {
	// Coordinators (default 1) and NATSNodes (1 or 3; default 1).
	Coordinators int
	NATSNodes    int
	// OpenNATS runs NATS without authorization (the forged-lease row);
	// otherwise every process has its own nkey user with its role's
	// permissions, as deploy/nats configures production.
	OpenNATS bool
	// ProxyAgent puts agent-1's NATS and Kafka connections through
	// proxies the row can cut or reset (single NATS node only).
	ProxyAgent bool
	// OwnBroker: the row kills the broker (see broker).
	OwnBroker bool
	// ExactlyOnce turns exactly-once source support on.
	ExactlyOnce bool
}

// Cluster is one row's Sluice: NATS, a broker, coordinators and two agents,
// every one a process of its own.
type Cluster struct {
	T      testing.TB
	Prefix string
	Dir    string // shared work dir: the source file and the sink file

	NATS       *natsSet
	Broker     *broker
	Coords     []*sluicetest.Proc
	CoordAddrs []string
	Agents     []*sluicetest.Proc
	// NATSProxy and KafkaProxy carry agent-1's connections (ProxyAgent).
	NATSProxy, KafkaProxy *Proxy

	opts     Options
	keyFiles *leaderKeys
	client   *http.Client
}

// features are the flags of the sluice binary that a change in flight
// adds; the suite uses them when the binary has them.
type features struct {
	LeaderKeys   bool // --leader-key-file, --leader-trusted-keys-file, sluice leader-key public
	InsecureNATS bool // --insecure-nats
}

var (
	featuresOnce sync.Once
	feats        features
)

// binaryFeatures reads `sluice coordinator --help` once.
func binaryFeatures(t testing.TB) features {
	featuresOnce.Do(func() {
		out, _ := exec.Command(sluiceBin, "coordinator", "--help").CombinedOutput()
		help := string(out)
		feats.LeaderKeys = strings.Contains(help, "--leader-key-file") && strings.Contains(help, "--leader-trusted-keys-file")
		feats.InsecureNATS = strings.Contains(help, "--insecure-nats")
	})
	return feats
}

// leaderKeys are the coordinators' lease signing key (a 64-hex-char ed25519
// seed) and the file of trusted public keys everyone pins.
type leaderKeys struct {
	Seed, Trusted string
}

// makeLeaderKeys writes a seed and asks `sluice leader-key public` for its
// public key.
func makeLeaderKeys(t testing.TB) *leaderKeys {
	t.Helper()
	dir := t.TempDir()
	seed := make([]byte, 32)
	_, _ = rand.Read(seed)
	k := &leaderKeys{Seed: filepath.Join(dir, "leader.key"), Trusted: filepath.Join(dir, "leader-trusted.keys")}
	if err := os.WriteFile(k.Seed, []byte(hex.EncodeToString(seed)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sluiceBin, "leader-key", "public", "--key-file", k.Seed).Output()
	if err != nil {
		t.Fatalf("sluice leader-key public: %v", err)
	}
	if err := os.WriteFile(k.Trusted, []byte(strings.TrimSpace(string(out))+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return k
}

// agentIDs are the cluster's agents.
var agentIDs = []string{"agent-1", "agent-2"}

// StartCluster starts NATS, the broker, the coordinators and agent-1, and
// waits until a coordinator leads and agent-1 registered. agent-2 starts
// with StartAgent2, once the workload's tasks run on agent-1.
func StartCluster(t testing.TB, opts Options) *Cluster {
	t.Helper()
	opts.Coordinators = max(opts.Coordinators, 1)
	opts.NATSNodes = max(opts.NATSNodes, 1)
	c := &Cluster{T: t, Prefix: sluicetest.UniquePrefix(t), Dir: t.TempDir(), opts: opts,
		client: &http.Client{Timeout: 5 * time.Second}}
	var coordNames []string
	for i := range opts.Coordinators {
		coordNames = append(coordNames, fmt.Sprintf("coordinator-%d", i+1))
	}
	c.NATS = startNATS(t, opts.NATSNodes, opts.OpenNATS, c.Prefix, coordNames, agentIDs)
	c.Broker = startBroker(t, opts.OwnBroker)
	if opts.ProxyAgent {
		c.NATSProxy = StartProxy(t, c.NATS.Nodes[0].Addr)
		c.KafkaProxy = StartKafkaProxy(t, c.Broker.Addr)
	}
	if binaryFeatures(t).LeaderKeys {
		c.keyFiles = makeLeaderKeys(t)
	}
	for _, name := range coordNames {
		addr := sluicetest.FreeAddr(t)
		c.CoordAddrs = append(c.CoordAddrs, addr)
		args := append([]string{"coordinator", "--nats", c.NATS.URL(), "--kafka", c.Broker.Addr,
			"--group-id", c.Prefix,
			"--config-topic", c.Prefix + "-configs",
			"--offsets-topic", c.Prefix + "-offsets",
			"--status-topic", c.Prefix + "-status",
			"--audit-topic", c.Prefix + "-audit",
			"--log-level", "info"}, c.commonArgs(name, "")...)
		if opts.ExactlyOnce {
			args = append(args, "--exactly-once-source-support", "enabled")
		}
		if c.keyFiles != nil {
			args = append(args, "--leader-key-file", c.keyFiles.Seed)
		}
		p := sluicetest.NewProc(t, name, args...)
		p.Env = append(e2e.ManifestEnv(t, addr), "FAULTS_AGENT="+name)
		p.Start()
		c.Coords = append(c.Coords, p)
	}
	for i := range c.Coords {
		sluicetest.WaitHealthy(t, c.URL(i), 60*time.Second, c.Coords[i])
	}
	c.WaitLeader(30 * time.Second)
	c.startAgent(0)
	c.waitAgents(30*time.Second, "agent-1")
	return c
}

// commonArgs are the flags coordinators and agents share: credentials,
// pinned keys and the env config provider that tags sink lines.
func (c *Cluster) commonArgs(name, agentID string) []string {
	args := []string{"--config-providers", "env", "--config-provider-env-allowlist", "FAULTS_AGENT"}
	args = append(args, sluicetest.SecurityFlags(c.Broker.Addr)...)
	if !c.NATS.Open {
		seed := c.NATS.Creds.Coordinators[name]
		if agentID != "" {
			seed = c.NATS.Creds.Agents[agentID]
		}
		args = append(args, "--nats-nkey-seed", seed)
	}
	if c.keyFiles != nil {
		args = append(args, "--leader-trusted-keys-file", c.keyFiles.Trusted)
	} else if c.NATS.Open && binaryFeatures(c.T).InsecureNATS {
		args = append(args, "--insecure-nats")
	}
	return args
}

// startAgent starts agent i (0: agent-1), through the proxies if any.
func (c *Cluster) startAgent(i int) *sluicetest.Proc {
	c.T.Helper()
	id := agentIDs[i]
	natsURL, brokers := c.NATS.URL(), c.Broker.Addr
	if i == 0 && c.NATSProxy != nil {
		natsURL, brokers = "nats://"+c.NATSProxy.Addr(), c.KafkaProxy.Addr()
	}
	args := append([]string{"agent", "--nats", natsURL, "--kafka", brokers, "--id", id,
		"--work-dir", c.Dir,
		"--group-id", c.Prefix,
		"--offsets-topic", c.Prefix + "-offsets",
		"--log-level", "info"}, c.commonArgs("", id)...)
	if c.opts.ExactlyOnce {
		args = append(args, "--exactly-once-source-support", "enabled")
	}
	p := sluicetest.NewProc(c.T, id, args...)
	p.Env = []string{"FAULTS_AGENT=" + id}
	p.Start()
	c.Agents = append(c.Agents, p)
	return p
}

// StartAgent2 starts agent-2 and waits until it registered.
func (c *Cluster) StartAgent2() {
	c.T.Helper()
	c.startAgent(1)
	c.waitAgents(30*time.Second, "agent-2")
}

// waitAgents waits until every one of ids logged that it registered.
func (c *Cluster) waitAgents(timeout time.Duration, ids ...string) {
	c.T.Helper()
	sluicetest.Eventually(c.T, timeout, func() (bool, string) {
		for _, id := range ids {
			a := c.Agent(id)
			if !a.Running() {
				c.T.Fatalf("%s exited", id)
			}
			if a.CountLog(`msg="registered with coordinator"`) == 0 {
				return false, id + " has not registered"
			}
		}
		return true, ""
	})
}

// Agent returns the agent process called id.
func (c *Cluster) Agent(id string) *sluicetest.Proc {
	for _, a := range c.Agents {
		if a.Name() == id {
			return a
		}
	}
	c.T.Fatalf("no agent %q", id)
	return nil
}

// URL is coordinator i's REST base URL.
func (c *Cluster) URL(i int) string { return "http://" + c.CoordAddrs[i] }

// Health is coordinator i's GET /health.
func (c *Cluster) Health(i int) (api.Health, error) {
	return sluicetest.GetHealth(c.client, c.URL(i))
}

// Leader is the index of the coordinator whose /health says leader, or -1.
func (c *Cluster) Leader() int {
	for i, p := range c.Coords {
		if !p.Running() {
			continue
		}
		if h, err := c.Health(i); err == nil && h.Role == "leader" {
			return i
		}
	}
	return -1
}

// WaitLeader waits until a coordinator leads and returns its index.
func (c *Cluster) WaitLeader(timeout time.Duration) int {
	c.T.Helper()
	idx := -1
	sluicetest.Eventually(c.T, timeout, func() (bool, string) {
		idx = c.Leader()
		return idx >= 0, "no coordinator says it leads"
	})
	return idx
}

// Must sends a request to coordinator i and fails the test unless the
// status is want.
func (c *Cluster) Must(i, want int, method, path string, body any) sluicetest.Response {
	c.T.Helper()
	r := sluicetest.Do(c.T, c.URL(i), method, path, body)
	if r.Status != want {
		c.T.Fatalf("%s %s through %s: got %s, want status %d", method, path, c.Coords[i].Name(), r, want)
	}
	return r
}

// Placement is the worker of every RUNNING task of connector name, by task.
func (c *Cluster) Placement(i int, name string) map[int]string {
	out := map[int]string{}
	r := sluicetest.Do(c.T, c.URL(i), http.MethodGet, "/connectors/"+name+"/status", nil)
	if r.Status != http.StatusOK {
		return out
	}
	var s sluicetest.Status
	r.JSON(c.T, &s)
	for _, ts := range s.Tasks {
		if ts.State == "RUNNING" {
			out[ts.ID] = ts.WorkerID
		}
	}
	return out
}

// TaskStarts counts the agents' "task started" lines after marks.
func (c *Cluster) TaskStarts(marks map[string]sluicetest.Mark) int {
	n := 0
	for _, a := range c.Agents {
		for _, k := range a.TaskStarts(marks[a.Name()]) {
			n += k
		}
	}
	return n
}

// Marks are every agent's log marks, by name.
func (c *Cluster) Marks() map[string]sluicetest.Mark {
	out := map[string]sluicetest.Mark{}
	for _, a := range c.Agents {
		out[a.Name()] = a.Mark()
	}
	return out
}
