package main

import (
	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"

	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Systems under test.
const (
	sysSluice  = "sluice"
	sysConnect = "connect"
	// sysKafka names the rows of the broker's floors: a bare franz-go
	// client doing a system's work with nothing in between.
	sysKafka = "kafka"
)

// node is one agent (Sluice) or one distributed worker (Kafka Connect).
type node struct {
	// id is the worker_id the REST status shows for the node's tasks.
	id string
	p  *proc
	// url is a Connect worker's REST base URL ("" for an agent).
	url string
	// paused is set while the node's process is stopped (SIGSTOP): it
	// runs, but is not live.
	paused bool
}

// cluster is one running system: for Sluice a NATS server, a coordinator
// and agents, all separate processes; for Kafka Connect distributed workers
// of one group. Each cluster has its own prefix: group id, internal topics,
// connector and topic names.
type cluster struct {
	sys    string
	b      *bench
	prefix string
	dir    string
	opts   clusterOpts

	nats    *proc
	natsURL string
	// coord is the coordinator REST calls go to, at coordURL: the only one,
	// or the one of coords a scenario chose (scenario 8 follows the leader).
	coord    *proc
	coordURL string
	// coords are every coordinator of the cluster (Sluice), in the order
	// they were started, each serving REST at coordURLs[i].
	coords    []*proc
	coordURLs []string
	nodes     []*node
	started   int
	// rounds counts scenario 3's fault rounds, which name their markers.
	rounds int
}

// startCluster starts a system with n agents or workers and waits until it
// is ready: the coordinator healthy and every agent registered, or every
// worker's REST API answering.
func (b *bench) startCluster(sys, label string, n int, props map[string]string) (*cluster, error) {
	return b.startClusterOpts(sys, label, n, clusterOpts{props: props})
}

// clusterOpts are what a cluster's nodes get beyond the defaults.
type clusterOpts struct {
	// props are extra worker properties (Connect only).
	props map[string]string
	// agentArgs are extra flags of every agent (Sluice only).
	agentArgs []string
	// agentEnv are extra environment variables of every agent (Sluice
	// only), KEY=value.
	agentEnv []string
	// classpath is appended to a worker's class path (Connect only).
	classpath []string
	// jvmOpts follow a worker's connectJVMOpts, which they override
	// (Connect only).
	jvmOpts []string
	// coordinators is how many coordinators share the cluster (Sluice
	// only; 0 means 1): one HA group, the same group id, NATS and topics,
	// each with a REST address of its own (docs/ha.md).
	coordinators int
	// coordArgs are extra flags of every coordinator (Sluice only).
	coordArgs []string
}

// startClusterOpts is startCluster with more options.
func (b *bench) startClusterOpts(sys, label string, n int, opts clusterOpts) (*cluster, error) {
	b.clusters++
	prefix := fmt.Sprintf("%s-%s-%s-%d", b.runID, sys, label, b.clusters)
	dir := filepath.Join(b.tmp, prefix)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	c := &cluster{sys: sys, b: b, prefix: prefix, dir: dir, opts: opts}
	if sys == sysSluice {
		if err := c.startSluiceControl(); err != nil {
			c.close()
			return nil, err
		}
	}
	var pending []*node
	for range n {
		nd, err := c.launchNode()
		if err != nil {
			c.close()
			return nil, err
		}
		pending = append(pending, nd)
	}
	for _, nd := range pending {
		if err := c.waitNode(nd); err != nil {
			c.close()
			return nil, err
		}
	}
	return c, nil
}

// startSluiceControl starts the NATS server (this program, re-executed as
// `benchrun nats`) and the coordinator, with Sluice's default flags.
func (c *cluster) startSluiceControl() error {
	natsAddr, err := freeAddr()
	if err != nil {
		return err
	}
	c.nats, err = startProc("nats", c.b.self, "nats", natsAddr, filepath.Join(c.dir, "jetstream"))
	if err != nil {
		return err
	}
	c.natsURL = "nats://" + natsAddr
	if err := waitFor(30*time.Second, "NATS server on "+natsAddr, func() (bool, string) {
		if !c.nats.Running() {
			return false, "exited: " + c.nats.Tail(10)
		}
		conn, err := net.DialTimeout("tcp", natsAddr, time.Second)
		if err != nil {
			return false, err.Error()
		}
		conn.Close()
		return true, ""
	}); err != nil {
		return err
	}
	// One at a time: the first, alone for a while, is the one likely to
	// take the lease. Nothing relies on it: agents register with whichever
	// leads (waitNode), and scenario 8 asks GET /health who leads.
	for i := range max(c.opts.coordinators, 1) {
		listen, err := freeAddr()
		if err != nil {
			return err
		}
		name := "coordinator"
		if i > 0 {
			name = fmt.Sprintf("coordinator-%d", i+1)
		}
		p, err := c.startCoordinator(name, append([]string{"coordinator",
			"--nats", c.natsURL, "--kafka", c.b.brokers, "--listen", listen,
			"--group-id", c.prefix,
			"--config-topic", c.prefix + "-configs",
			"--offsets-topic", c.prefix + "-offsets",
			"--status-topic", c.prefix + "-status",
		}, append(c.b.logArgs(), c.opts.coordArgs...)...), "http://"+listen)
		if p != nil { // kept even when it failed, so that close kills it
			c.coords, c.coordURLs = append(c.coords, p), append(c.coordURLs, "http://"+listen)
		}
		if err != nil {
			return err
		}
	}
	c.coord, c.coordURL = c.coords[0], c.coordURLs[0]
	return nil
}

// logArgs is the --log-level flag BENCH_LOG_LEVEL asks for, if any.
func (b *bench) logArgs() []string {
	if b.logLevel == "" {
		return nil
	}
	return []string{"--log-level", b.logLevel}
}

// agentDebugArgs are an agent's logArgs and, with BENCH_PPROF=1, --pprof.
func (b *bench) agentDebugArgs() []string {
	if b.pprof {
		return append(b.logArgs(), "--pprof")
	}
	return b.logArgs()
}

// startCoordinator starts a coordinator process with args and waits until
// its GET /health at url answers 200. Every sluice process signs and trusts
// the leader key the kit pinned (procs.BuildBinaryWith).
func (c *cluster) startCoordinator(name string, args []string, url string) (*proc, error) {
	p, err := startProc(name, c.b.sluiceBin, args...)
	if err != nil {
		return nil, err
	}
	return p, c.waitCoordinator(p, url)
}

// waitCoordinator waits until coordinator p's GET /health at url answers
// 200.
func (c *cluster) waitCoordinator(p *proc, url string) error {
	name := p.Name()
	return waitFor(60*time.Second, name+" GET /health = 200", func() (bool, string) {
		if !p.Running() {
			return false, name + " exited:\n" + p.Tail(20)
		}
		_, err := clientAt(url).Admin().Health(context.Background())
		if err != nil {
			return false, "GET /health: " + err.Error()
		}
		return true, ""
	})
}

// launchNode starts one more agent or worker without waiting for it.
func (c *cluster) launchNode() (*node, error) {
	c.started++
	if c.sys == sysSluice {
		id := fmt.Sprintf("agent-%d", c.started)
		p, err := startProcEnv(id, c.b.sluiceBin, c.opts.agentEnv, append([]string{"agent",
			"--nats", c.natsURL, "--kafka", c.b.brokers, "--id", id,
			"--work-dir", c.dir,
			"--group-id", c.prefix,
			"--offsets-topic", c.prefix + "-offsets",
			// Many agents on one host: each its own free port.
			"--metrics-listen", "127.0.0.1:0",
		}, append(c.b.agentDebugArgs(), c.opts.agentArgs...)...)...)
		if err != nil {
			return nil, err
		}
		nd := &node{id: id, p: p}
		c.nodes = append(c.nodes, nd)
		return nd, nil
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("worker-%d", c.started)
	propsPath := filepath.Join(c.dir, name+".properties")
	if err := os.WriteFile(propsPath, []byte(c.workerProps(addr)), 0o644); err != nil {
		return nil, err
	}
	args := append(append(append([]string{}, connectJVMOpts...), c.opts.jvmOpts...),
		"-Dlog4j2.configurationFile="+filepath.Join(c.b.root, "deploy", "connect", "log4j2.properties"),
		"-cp", strings.Join(append([]string{filepath.Join(c.b.connectCache, "*")}, c.opts.classpath...), string(os.PathListSeparator)),
		"org.apache.kafka.connect.cli.ConnectDistributed", propsPath)
	p, err := startProc(name, c.b.java, args...)
	if err != nil {
		return nil, err
	}
	nd := &node{id: addr, p: p, url: "http://" + addr}
	c.nodes = append(c.nodes, nd)
	return nd, nil
}

// connectJVMOpts are the worker JVM's options: the heap the issue names
// (-Xmx1g) and otherwise what bin/connect-distributed.sh gives a user
// (kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS).
var connectJVMOpts = []string{
	"-Xmx1g",
	"-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
	"-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true",
}

// workerProps is a Connect worker's configuration: only what a worker
// needs to run on one broker (replication factor 1), the converter Sluice
// uses by default, and the REST listener; everything else is Connect's
// default (offset.flush.interval.ms=60000, scheduled.rebalance.max.delay.ms
// =300000, …) unless the cluster was given props.
func (c *cluster) workerProps(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	props := map[string]string{
		"bootstrap.servers":                 c.b.brokers,
		"group.id":                          c.prefix,
		"key.converter":                     "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                   "org.apache.kafka.connect.storage.StringConverter",
		"config.storage.topic":              c.prefix + "-configs",
		"offset.storage.topic":              c.prefix + "-offsets",
		"status.storage.topic":              c.prefix + "-status",
		"config.storage.replication.factor": "1",
		"offset.storage.replication.factor": "1",
		"status.storage.replication.factor": "1",
		"listeners":                         "http://" + addr,
		"rest.advertised.host.name":         host,
		"rest.advertised.port":              port,
	}
	for k, v := range c.opts.props {
		props[k] = v
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	sb.WriteString("# Written by tests/benchrun.\n")
	for _, k := range keys {
		fmt.Fprintf(&sb, "%s=%s\n", k, props[k])
	}
	return sb.String()
}

// waitNode waits until an agent registered with the coordinator, or a
// worker's GET / and GET /connectors answer 200.
func (c *cluster) waitNode(nd *node) error {
	if c.sys == sysSluice {
		return waitFor(60*time.Second, nd.id+" registered", func() (bool, string) {
			if !nd.p.Running() {
				return false, nd.id + " exited:\n" + nd.p.Tail(20)
			}
			// An agent registers with the leader, whichever coordinator
			// that is.
			for _, p := range c.coords {
				if !p.Running() {
					return false, p.Name() + " exited:\n" + p.Tail(20)
				}
				if p.CountLog(`msg="agent registered"`, "agent="+nd.id+" ") > 0 {
					return true, ""
				}
			}
			return false, "not registered yet"
		})
	}
	return waitFor(180*time.Second, "Connect worker "+nd.url+" ready", func() (bool, string) {
		if !nd.p.Running() {
			return false, "worker exited:\n" + nd.p.Tail(30)
		}
		rest := clientAt(nd.url)
		if _, err := rest.Admin().ServerInfo(context.Background()); err != nil {
			return false, "GET /: " + err.Error()
		}
		if _, err := rest.Connectors().List(context.Background()); err != nil {
			return false, "GET /connectors: " + err.Error()
		}
		return true, ""
	})
}

// addNode starts one more agent or worker and waits until it is ready.
func (c *cluster) addNode() (*node, error) {
	nd, err := c.launchNode()
	if err != nil {
		return nil, err
	}
	return nd, c.waitNode(nd)
}

// alive returns the nodes that still run.
func (c *cluster) alive() []*node {
	var out []*node
	for _, nd := range c.nodes {
		if nd.p.Running() && !nd.paused {
			out = append(out, nd)
		}
	}
	return out
}

// url is the REST base URL: the coordinator's, or the first live worker's.
func (c *cluster) url() string {
	if c.sys == sysSluice {
		return c.coordURL
	}
	for _, nd := range c.alive() {
		return nd.url
	}
	return "http://127.0.0.1:1" // nothing runs: every call fails
}

// name prefixes base with the cluster's unique prefix.
func (c *cluster) name(base string) string { return c.prefix + "-" + base }

// taskStartLine is what a node logs once per task instance it starts.
func (c *cluster) taskStartLine() string {
	if c.sys == sysSluice {
		return `msg="task started"`
	}
	return "Creating task " // org.apache.kafka.connect.runtime.Worker#startTask
}

// marks returns every node's current log offset.
func (c *cluster) marks() map[*node]int64 {
	m := map[*node]int64{}
	for _, nd := range c.nodes {
		m[nd] = int64(nd.p.Mark())
	}
	return m
}

// taskStarts counts the task instances the nodes started since marks
// (nodes without a mark count from their beginning).
func (c *cluster) taskStarts(marks map[*node]int64) int {
	n := 0
	for _, nd := range c.nodes {
		n += nd.p.CountLogSince(procs.Mark(marks[nd]), c.taskStartLine())
	}
	return n
}

// control returns the processes besides the nodes (Sluice's NATS server and
// coordinators).
func (c *cluster) control() []*proc {
	var out []*proc
	if c.nats != nil {
		out = append(out, c.nats)
	}
	return append(out, c.coords...)
}

// close kills every process of the cluster. Its topics are deleted at the
// end of the run (bench.cleanupTopics).
func (c *cluster) close() {
	for _, nd := range c.nodes {
		_ = nd.p.kill()
	}
	for _, p := range c.control() {
		_ = p.kill()
	}
}

// freeAddr returns a loopback address whose port is free (the kit's
// FreeAddr).
func freeAddr() (addr string, err error) {
	defer catch(&err)
	return sluicetest.FreeAddr(tb), nil
}
