package faults

import (
	"net/http"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
	"github.com/sluice-io/sluice/tests/e2e"
)

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

// Cluster is one row's Sluice: the test kit's process cluster
// (coordinators and two agents, every one a process of its own) on NATS
// servers and a broker the row can take away, each coordinator configured
// as deploy/k8s/coordinator.yaml configures one.
type Cluster struct {
	*procs.Cluster

	NATS   *natsSet
	Broker *broker
	// NATSProxy and KafkaProxy carry agent-1's connections (ProxyAgent).
	NATSProxy, KafkaProxy *Proxy
}

// agentIDs are the cluster's agents.
var agentIDs = []string{"agent-1", "agent-2"}

// The durations are the binary's defaults, which the rows measure against.
const (
	agentLease      = 10 * time.Second
	leaderLease     = 6 * time.Second
	shutdownTimeout = 10 * time.Second
	flushInterval   = time.Second
)

// StartCluster starts NATS, the broker, the coordinators and agent-1, and
// waits until a coordinator leads and agent-1 registered. agent-2 starts
// with StartAgent2, once the workload's tasks run on agent-1. Every process
// runs with the env config provider, which tags sink lines with the
// process's name (FAULTS_AGENT), and trusts the leader key the kit pins.
func StartCluster(t testing.TB, opts Options) *Cluster {
	t.Helper()
	opts.Coordinators = max(opts.Coordinators, 1)
	opts.NATSNodes = max(opts.NATSNodes, 1)
	// The NATS users are made before the kit's cluster, so they are named
	// by a prefix of the suite's own.
	prefix := procs.UniquePrefix(t)
	var coordNames []string
	for i := range opts.Coordinators {
		coordNames = append(coordNames, procs.CoordinatorName(i, opts.Coordinators))
	}
	c := &Cluster{}
	c.NATS = startNATS(t, opts.NATSNodes, opts.OpenNATS, prefix, coordNames, agentIDs)
	c.Broker = startBroker(t, opts.OwnBroker)
	if opts.ProxyAgent {
		c.NATSProxy = StartProxy(t, c.NATS.Nodes[0].Addr)
		c.KafkaProxy = StartKafkaProxy(t, c.Broker.Addr)
	}
	common := []string{"--config-providers", "env", "--config-provider-env-allowlist", "FAULTS_AGENT"}
	if opts.ExactlyOnce {
		common = append(common, "--exactly-once-source-support", "enabled")
	}
	po := procs.Options{
		Prefix:          prefix,
		Coordinators:    opts.Coordinators,
		Agents:          1,
		Lease:           agentLease,
		LeaderLease:     leaderLease,
		ShutdownTimeout: shutdownTimeout,
		FlushInterval:   flushInterval,
		CoordinatorArgs: common,
		AgentArgs:       common,
		NATSURL:         c.NATS.URL(),
		Brokers:         c.Broker.Addr,
		CoordinatorEnv: func(name, addr string) []string {
			return append(e2e.ManifestEnv(t, addr), "FAULTS_AGENT="+name)
		},
		AgentEnv: func(id string) []string { return []string{"FAULTS_AGENT=" + id} },
		AgentConnect: func(id string) (string, string) {
			if id == agentIDs[0] && c.NATSProxy != nil {
				return "nats://" + c.NATSProxy.Addr(), c.KafkaProxy.Addr()
			}
			return "", ""
		},
	}
	if !opts.OpenNATS {
		po.NATSCreds = c.NATS.Creds
	}
	c.Cluster = procs.Start(t, po)
	return c
}

// StartAgent2 starts agent-2 and waits until it logged that it registered
// (with whichever coordinator leads).
func (c *Cluster) StartAgent2() {
	c.T.Helper()
	a := c.AddAgent(agentIDs[1], "")
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		if !a.Running() {
			c.T.Fatalf("%s exited", a.Name())
		}
		return a.CountLog(`msg="registered with coordinator"`) > 0, a.Name() + " has not registered"
	})
}

// WaitLeader waits until a coordinator says it leads (GET /health) and
// returns its index: unlike the kit's WaitLeader, it asks nothing of NATS,
// which a row may have taken away.
func (c *Cluster) WaitLeader(timeout time.Duration) int {
	c.T.Helper()
	idx := -1
	sluicetest.Eventually(c.T, timeout, func() (bool, string) {
		idx = c.Leader()
		return idx >= 0, "no coordinator says it leads"
	})
	return idx
}

// Placement is the worker of every RUNNING task of connector name, by task,
// as coordinator i shows it (none when it does not answer).
func (c *Cluster) Placement(i int, name string) map[int]string {
	out := map[int]string{}
	r := sluicetest.Do(c.T, c.CoordinatorURL(i), http.MethodGet, "/connectors/"+name+"/status", nil)
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

// TaskStartCount counts the agents' "task started" lines after marks.
func (c *Cluster) TaskStartCount(marks map[string]procs.Mark) int {
	n := 0
	for _, k := range c.TaskStarts(marks) {
		n += k
	}
	return n
}
