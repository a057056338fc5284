package integration

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/converters"
	"github.com/sluice-io/sluice/connect/generator"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/sluicetest"
)

// classCounting is a test plugin: the generator, with its task split
// counted, able to fail on demand and to ask for a reconfiguration, as a
// connector that queries a database to split its work would.
const classCounting = "io.sluice.test.CountingSourceConnector"

// splits counts and steers the counting connector's task splits.
type splits struct {
	calls atomic.Int32
	fail  atomic.Bool
	mu    sync.Mutex
	ctx   connect.ConnectorContext
}

type countingConnector struct {
	generator.Connector
	s *splits
}

func (c *countingConnector) Start(ctx connect.ConnectorContext, props map[string]string) error {
	c.s.mu.Lock()
	c.s.ctx = ctx
	c.s.mu.Unlock()
	return c.Connector.Start(ctx, props)
}

func (c *countingConnector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	c.s.calls.Add(1)
	if c.s.fail.Load() {
		return nil, errors.New("the source database is unreachable")
	}
	return c.Connector.TaskConfigs(maxTasks)
}

// reconfigure asks for new task configs, as the connector itself would.
func (s *splits) reconfigure() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctx.RequestTaskReconfiguration()
}

func countingRegistry(t *testing.T, s *splits) *plugins.Registry {
	return generatorVariant(t, classCounting, func() connect.Connector { return &countingConnector{s: s} })
}

// generatorVariant is a registry of one test plugin, the generator's
// description under another class with another connector, and the
// converters.
func generatorVariant(t *testing.T, class string, newConnector func() connect.Connector) *plugins.Registry {
	t.Helper()
	p := generator.Plugin()
	p.Class, p.Aliases = class, nil
	p.NewConnector = newConnector
	reg, err := plugins.New(append([]*connect.Plugin{p}, converters.Plugins()...)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestTaskConfigsOnlyWhenTheyCanChange checks issue 12 §5 through the REST
// API: a connector's task split runs once, not on every heartbeat, and again
// only on a config change, a restart or the connector's own request; a
// failing split is retried and shown on the connector's status while its
// tasks keep running.
func TestTaskConfigsOnlyWhenTheyCanChange(t *testing.T) {
	t.Parallel()
	s := &splits{}
	reg := countingRegistry(t, s)
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2, Lease: time.Second, CoordinatorPlugins: reg, Plugins: []*plugins.Registry{reg, reg}})
	name := c.Name("counted")
	cfg := cfgOf("connector.class", classCounting, "topic", c.Name("counted-data"), "rate", "20", "streams", "2", "tasks.max", "2")
	mustCreate(c, name, cfg, "")
	c.WaitState(name, "RUNNING", 2, "RUNNING")
	calls := func(want int32) func() (bool, string) {
		return func() (bool, string) {
			n := s.calls.Load()
			return n == want, fmt.Sprintf("TaskConfigs called %d times, want %d", n, want)
		}
	}
	sluicetest.Eventually(t, 5*time.Second, calls(1))
	// Heartbeats every third of a lease, reconcile passes every quarter:
	// over three leases nothing asks for the split again.
	sluicetest.Consistently(t, 3*time.Second, calls(1))

	c.Must(200, "PUT", "/connectors/"+name+"/config", cfgWith(cfg, "tasks.max", "1"))
	sluicetest.Eventually(t, 10*time.Second, calls(2))
	c.WaitState(name, "RUNNING", 1, "RUNNING")

	c.Must(204, "POST", "/connectors/"+name+"/restart", nil)
	sluicetest.Eventually(t, 10*time.Second, calls(3))

	s.reconfigure()
	sluicetest.Eventually(t, 10*time.Second, calls(4))
	sluicetest.Consistently(t, time.Second, calls(4))

	// A failing split: the connector shows FAILED with the cause, its task
	// keeps running, and the split is retried until it works.
	s.fail.Store(true)
	s.reconfigure()
	sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
		st, _ := c.Status(name)
		ok := st.Connector.State == "FAILED" && strings.Contains(st.Connector.Trace, "the source database is unreachable") &&
			len(st.Tasks) == 1 && st.Tasks[0].State == "RUNNING"
		return ok, fmt.Sprintf("status %+v", st)
	})
	failed := s.calls.Load()
	sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
		return s.calls.Load() > failed, "the failed split was not retried"
	})
	s.fail.Store(false)
	sluicetest.Eventually(t, 15*time.Second, func() (bool, string) {
		st, _ := c.Status(name)
		return st.Connector.State == "RUNNING" && len(st.Tasks) == 1 && st.Tasks[0].State == "RUNNING", fmt.Sprintf("status %+v", st)
	})
}
