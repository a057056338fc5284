package procs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"

	"github.com/sluice-io/sluice/sluicetest"
)

// A Cluster of several coordinators (Options.Coordinators)
// runs them as one group — same --group-id, NATS, Kafka and topics, each
// its own REST port — and they elect a leader by the leader lease. The
// methods ending in At address coordinator i; the others address
// coordinator 0 (Coordinator, URL).

// CoordinatorName is the name of coordinator i of n in a Cluster:
// "coordinator" when it is the only one, "coordinator-<i>" when there are
// several.
func CoordinatorName(i, n int) string {
	if n == 1 {
		return "coordinator"
	}
	return fmt.Sprintf("coordinator-%d", i)
}

// coordinatorSeed is the nkey seed file of the coordinator called name:
// its own, or every coordinator's; "" on an open NATS.
func (c *Cluster) coordinatorSeed(name string) string {
	if seed := c.NATSCreds.Coordinators[name]; seed != "" {
		return seed
	}
	return c.NATSCreds.Coordinators[sluicetest.CoordinatorUser]
}

// startCoordinator starts coordinator i (see CoordinatorName).
func (c *Cluster) startCoordinator(i int) *Proc {
	c.T.Helper()
	opts := c.opts
	addr := sluicetest.FreeAddr(c.T)
	c.Addrs = append(c.Addrs, addr)
	name := CoordinatorName(i, opts.Coordinators)
	args := []string{"coordinator",
		"--nats", c.NATSURL, "--kafka", c.Brokers,
		"--group-id", c.Prefix,
		"--config-topic", c.Prefix + "-configs",
		"--offsets-topic", c.Prefix + "-offsets",
		"--status-topic", c.Prefix + "-status",
		"--audit-topic", c.Prefix + "-audit",
		"--agent-lease", opts.Lease.String(),
		"--task-shutdown-timeout", opts.ShutdownTimeout.String(),
		"--log-level", "info",
	}
	if opts.CoordinatorEnv == nil {
		args = append(args, "--listen", addr)
	}
	if opts.LeaderLease > 0 {
		args = append(args, "--leader-lease", opts.LeaderLease.String())
	}
	args = append(args, sluicetest.SecurityFlags(c.Brokers)...)
	args = append(args, opts.CoordinatorArgs...)
	if seed := c.coordinatorSeed(name); seed != "" {
		args = append(args, "--nats-nkey-seed", seed)
	}
	p := NewProc(c.T, name, args...)
	if opts.CoordinatorEnv != nil {
		p.Env = opts.CoordinatorEnv(name, addr)
	}
	p.Start()
	c.Coordinators = append(c.Coordinators, p)
	return p
}

// CoordinatorURL is coordinator i's REST base URL.
func (c *Cluster) CoordinatorURL(i int) string { return "http://" + c.Addrs[i] }

// TryAt sends a request to coordinator i without failing the test on a
// transport error: the error is returned instead (e.g. to tell a refused
// connection, which cannot have had an effect, from a lost answer).
func (c *Cluster) TryAt(i int, method, path string, body any) (sluicetest.Response, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return sluicetest.Response{}, err
		}
		rd = strings.NewReader(string(data))
	}
	req, err := http.NewRequest(method, c.CoordinatorURL(i)+path, rd)
	if err != nil {
		return sluicetest.Response{}, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := tryClient.Do(req)
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

// tryClient is TryAt's HTTP client.
var tryClient = &http.Client{Timeout: 30 * time.Second}

// MustAt sends a request to coordinator i and fails the test unless the
// status is want.
func (c *Cluster) MustAt(i, want int, method, path string, body any) sluicetest.Response {
	c.T.Helper()
	r := sluicetest.Do(c.T, c.CoordinatorURL(i), method, path, body)
	if r.Status != want {
		c.T.Fatalf("%s %s through %s: got %s, want status %d", method, path, c.Coordinators[i].Name(), r, want)
	}
	return r
}

// HealthAt is coordinator i's GET /health.
func (c *Cluster) HealthAt(i int) (api.Health, error) {
	return sluicetest.GetHealth(&http.Client{Timeout: 2 * time.Second}, c.CoordinatorURL(i))
}

// StatusAt reads a connector's status through coordinator i; ok is false
// on 404.
func (c *Cluster) StatusAt(i int, name string) (s sluicetest.Status, ok bool) {
	c.T.Helper()
	r := sluicetest.Do(c.T, c.CoordinatorURL(i), http.MethodGet, "/connectors/"+name+"/status", nil)
	if r.Status == http.StatusNotFound {
		return s, false
	}
	if r.Status != http.StatusOK {
		c.T.Fatalf("status of %s through %s: %s", name, c.Coordinators[i].Name(), r)
	}
	r.JSON(c.T, &s)
	return s, true
}

// WaitRunningAt waits until the connector and its tasks tasks are RUNNING
// as coordinator i shows them, and returns the task placement (worker id
// by task id).
func (c *Cluster) WaitRunningAt(i int, name string, tasks int) map[int]string {
	c.T.Helper()
	placed := map[int]string{}
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		s, ok := c.StatusAt(i, name)
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

// Options are the options the cluster was started with, defaults filled
// in.
func (c *Cluster) Options() Options { return c.opts }

// NATS is a connection to the cluster's NATS server, with the
// coordinators' credentials when it has any (Options.SecureNATS),
// made on first use and closed at test cleanup: to read what the
// coordinators keep there, or to talk to agents as a coordinator would.
func (c *Cluster) NATS() *nats.Conn {
	c.T.Helper()
	c.natsMu.Lock()
	defer c.natsMu.Unlock()
	if c.nc != nil {
		return c.nc
	}
	var nopts []nats.Option
	if seed := c.coordinatorSeed(c.Coordinators[0].Name()); seed != "" {
		opt, err := nats.NkeyOptionFromSeed(seed)
		if err != nil {
			c.T.Fatal(err)
		}
		// The coordinators' permissions let them receive replies only on
		// their inbox prefix.
		nopts = append(nopts, opt, nats.CustomInboxPrefix(wire.CoordinatorInboxPrefix(c.Prefix)))
	}
	nc, err := nats.Connect(c.NATSURL, nopts...)
	if err != nil {
		c.T.Fatal(err)
	}
	c.T.Cleanup(nc.Close)
	c.nc = nc
	return nc
}

// Lease reads the leader lease from the group's NATS key-value bucket; ok
// is false while there is none.
func (c *Cluster) Lease() (l wire.LeaderLease, ok bool) {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	nc := c.NATS()
	c.natsMu.Lock()
	defer c.natsMu.Unlock()
	if c.leaseKV == nil {
		js, err := jetstream.New(nc)
		if err != nil {
			c.T.Fatal(err)
		}
		kv, err := js.KeyValue(ctx, wire.LeaderBucket(c.Prefix))
		if err != nil {
			return l, false
		}
		c.leaseKV = kv
	}
	e, err := c.leaseKV.Get(ctx, wire.LeaderKey)
	if err != nil {
		return l, false
	}
	if err := json.Unmarshal(e.Value(), &l); err != nil || l.Term == 0 {
		return wire.LeaderLease{}, false
	}
	return l, true
}

// Leader is the index of a running coordinator whose GET /health says it
// leads, or -1.
func (c *Cluster) Leader() int {
	for i, p := range c.Coordinators {
		if !p.Running() {
			continue
		}
		if h, err := c.HealthAt(i); err == nil && h.Role == "leader" {
			return i
		}
	}
	return -1
}

// WaitLeader waits until the lease names a coordinator other than skip
// (-1: any) and every running coordinator not in paused agrees in GET
// /health: exactly one says role leader, and all name it as leader. It
// returns the leader's index and the lease.
func (c *Cluster) WaitLeader(timeout time.Duration, skip int, paused ...int) (int, wire.LeaderLease) {
	c.T.Helper()
	idx, lease := -1, wire.LeaderLease{}
	sluicetest.Eventually(c.T, timeout, func() (bool, string) {
		l, ok := c.Lease()
		if !ok {
			return false, "no lease"
		}
		leaders, views := []int{}, []string{}
		for i, p := range c.Coordinators {
			if !p.Running() || slices.Contains(paused, i) {
				continue
			}
			h, err := c.HealthAt(i)
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
		if len(leaders) != 1 || leaders[0] == skip || l.URL != c.CoordinatorURL(leaders[0]) {
			return false, fmt.Sprintf("leaders %v, health %v, lease %+v", leaders, views, l)
		}
		for i, p := range c.Coordinators {
			if p.Running() && !slices.Contains(paused, i) {
				if h, _ := c.HealthAt(i); h.Leader != c.Addrs[leaders[0]] {
					return false, fmt.Sprintf("%s names leader %q, lease %+v", p.Name(), h.Leader, l)
				}
			}
		}
		idx, lease = leaders[0], l
		return true, ""
	})
	return idx, lease
}

// WaitAgentsRegistered waits until every agent logged, after m (0: from
// the start), that it registered with the leader of term.
func (c *Cluster) WaitAgentsRegistered(m Mark, term int64, timeout time.Duration) {
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
