package integration

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/sluice-io/sluice/sluicetest"
)

// agentValue is the value of one series of an agent scrape; absent counts
// as 0, as Prometheus' rate() treats a series that starts.
func agentValue(t *testing.T, mfs map[string]*dto.MetricFamily, name string, match ...string) float64 {
	t.Helper()
	v, _, err := sluicetest.Value(mfs, name, match...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// waitAgentValue waits until the series of agent i is exactly want.
func waitAgentValue(c *sluicetest.Cluster, i int, want float64, name string, match ...string) {
	c.T.Helper()
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		v, ok, err := sluicetest.Value(c.AgentScrape(i), name, match...)
		if err != nil {
			c.T.Fatal(err)
		}
		return ok && v == want, fmt.Sprintf("%s%v = %v (present %v), want %v", name, match, v, ok, want)
	})
}

// TestAgentMetricsFollowRecords scrapes an agent's /metrics while a file
// source sends known numbers of lines to a topic a file sink writes out:
// the source's polled and written counters grow by exactly those numbers,
// the sink's put counter too, both commit timestamps move, the agent's
// session gauges and its Kafka clients' series show, and once the
// connectors are deleted none of their series is left.
func TestAgentMetricsFollowRecords(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, AgentMetrics: true})
	const agent = "agent-1"
	topic := c.Name("metrics")
	src, sink := c.Name("src"), c.Name("sink")
	in, out := filepath.Join(c.WorkDir, "in.txt"), filepath.Join(c.WorkDir, "out.txt")

	first := numbered(0, 40)
	writeLines(t, in, first)
	mustCreate(c, src, fileSourceCfg(in, topic), "")
	mustCreate(c, sink, fileSinkCfg(out, topic), "")
	c.WaitState(src, "RUNNING", 1, "RUNNING")
	c.WaitState(sink, "RUNNING", 1, "RUNNING")
	waitFile(t, out, first)

	srcTask := []string{"agent", agent, "connector", src, "task", "0"}
	sinkTask := []string{"agent", agent, "connector", sink, "task", "0"}
	waitAgentValue(c, 0, 40, "sluice_task_records_polled_total", srcTask...)
	waitAgentValue(c, 0, 40, "sluice_task_records_written_total", srcTask...)
	waitAgentValue(c, 0, 40, "sluice_task_records_put_total", sinkTask...)

	// More lines: every counter grows by exactly their number.
	more := numbered(40, 25)
	appendLines(t, in, more)
	waitFile(t, out, append(append([]string{}, first...), more...))
	waitAgentValue(c, 0, 65, "sluice_task_records_polled_total", srcTask...)
	waitAgentValue(c, 0, 65, "sluice_task_records_written_total", srcTask...)
	waitAgentValue(c, 0, 65, "sluice_task_records_put_total", sinkTask...)
	appended := time.Now()
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		mfs := c.AgentScrape(0)
		s := agentValue(t, mfs, "sluice_task_last_commit_timestamp_seconds", srcTask...)
		k := agentValue(t, mfs, "sluice_task_last_commit_timestamp_seconds", sinkTask...)
		at := float64(appended.UnixNano()) / 1e9
		return s > at && k > at, fmt.Sprintf("last commits: source %v, sink %v; want after %v", s, k, at)
	})

	mfs := c.AgentScrape(0)
	for _, name := range []string{"sluice_task_records_failed_total", "sluice_task_offset_commit_failures_total"} {
		if v := agentValue(t, mfs, name, srcTask...) + agentValue(t, mfs, name, sinkTask...); v != 0 {
			t.Errorf("%s = %v, want 0", name, v)
		}
	}
	for _, task := range [][]string{srcTask, sinkTask} {
		for _, name := range []string{"sluice_task_batch_duration_seconds", "sluice_task_offset_commit_duration_seconds"} {
			ms := sluicetest.Series(mfs, name, task...)
			if len(ms) != 1 || ms[0].GetHistogram().GetSampleCount() == 0 {
				t.Errorf("%s%v: %v, want one histogram with samples", name, task, ms)
			}
		}
	}
	if v := agentValue(t, mfs, "sluice_agent_registered", "agent", agent); v != 1 {
		t.Errorf("sluice_agent_registered = %v, want 1", v)
	}
	if v := agentValue(t, mfs, "sluice_agent_lease_seconds", "agent", agent); v != 3 {
		t.Errorf("sluice_agent_lease_seconds = %v, want the harness's 3s lease", v)
	}
	if v := agentValue(t, mfs, "sluice_agent_tasks_running", "agent", agent); v != 2 {
		t.Errorf("sluice_agent_tasks_running = %v, want 2", v)
	}
	// The last acknowledged heartbeat may predate the connectors, so the
	// age is bounded by the lease (a registered agent was acknowledged
	// within it), not by the time since they were created.
	if age := agentValue(t, mfs, "sluice_agent_heartbeat_age_seconds", "agent", agent); age < 0 || age > 3 {
		t.Errorf("sluice_agent_heartbeat_age_seconds = %v, want within the 3s lease", age)
	}
	clients := kafkaClientIDs(mfs)
	for _, want := range []string{
		"sluice-agent-" + agent,
		"sluice-agent-" + agent + "-offsets",
		"sluice-agent-" + agent + "-producer-" + src + "-0",
		"sluice-agent-" + agent + "-txn-" + src + "-0",
		"sluice-agent-" + agent + "-consumer-" + sink + "-0",
	} {
		if !clients[want] {
			t.Errorf("no sluice_kafka_ series of client %s; have %v", want, clients)
		}
	}

	c.Must(http.StatusNoContent, "DELETE", "/connectors/"+src, nil)
	c.Must(http.StatusNoContent, "DELETE", "/connectors/"+sink, nil)
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		mfs := c.AgentScrape(0)
		for name := range mfs {
			for _, conn := range []string{src, sink} {
				if n := len(sluicetest.Series(mfs, name, "connector", conn)); n > 0 {
					return false, fmt.Sprintf("%s still has %d series of %s", name, n, conn)
				}
			}
		}
		if left := kafkaClientIDs(mfs, src, sink); len(left) > 0 {
			return false, fmt.Sprintf("Kafka clients of the deleted connectors still measured: %v", left)
		}
		return true, ""
	})
	mfs = c.AgentScrape(0)
	if v := agentValue(t, mfs, "sluice_agent_tasks_running", "agent", agent); v != 0 {
		t.Errorf("sluice_agent_tasks_running after the deletes = %v, want 0", v)
	}
	if !kafkaClientIDs(mfs)["sluice-agent-"+agent] {
		t.Error("the agent's own Kafka client lost its series with the tasks'")
	}
}

// kafkaClientIDs returns the client_id values of the sluice_kafka_ series
// in mfs; with connectors given, only those of clients of these
// connectors' tasks.
func kafkaClientIDs(mfs map[string]*dto.MetricFamily, connectors ...string) map[string]bool {
	ids := map[string]bool{}
	for name, mf := range mfs {
		if !strings.HasPrefix(name, "sluice_kafka_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() != "client_id" {
					continue
				}
				if len(connectors) == 0 {
					ids[l.GetValue()] = true
				}
				for _, conn := range connectors {
					if strings.Contains(l.GetValue(), "-"+conn+"-") {
						ids[l.GetValue()] = true
					}
				}
			}
		}
	}
	return ids
}

// TestAgentProbes checks an agent's /healthz and /readyz: live and ready
// throughout — before it registers (no coordinator runs), once registered,
// and once the leader has been gone for longer than the agent's lease (a
// sidecar's readiness must not follow the control plane) — while the
// control-plane check in /readyz's body, and sluice_agent_registered, say
// whether it is registered.
func TestAgentProbes(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, AgentMetrics: true})
	live := func(phase string) {
		t.Helper()
		if code, s := c.AgentProbe(0, "/healthz"); code != http.StatusOK || s.Status != "ok" {
			t.Fatalf("%s: /healthz %d %+v", phase, code, s)
		}
	}
	waitSession := func(phase string, registered bool, message string) {
		t.Helper()
		sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
			live(phase)
			code, s := c.AgentProbe(0, "/readyz")
			if code != http.StatusOK || s.Status != "ready" {
				return false, fmt.Sprintf("%s: /readyz %d %+v, want 200", phase, code, s)
			}
			for _, ch := range s.Checks {
				if ch.Name == "control-plane" && ch.OK == registered && strings.Contains(ch.Message, message) {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%s: /readyz checks %+v, want control-plane ok=%v saying %q", phase, s.Checks, registered, message)
		})
	}
	waitSession("registered", true, "")

	// An agent that starts while no coordinator runs is live and ready; its
	// check says it is not registered.
	c.StopAgent(0)
	c.StopCoordinator()
	c.StartAgent(0)
	live("no coordinator")
	waitSession("no coordinator", false, "not registered")
	if v := agentValue(t, c.AgentScrape(0), "sluice_agent_registered", "agent", "agent-1"); v != 0 {
		t.Fatalf("sluice_agent_registered before registering = %v", v)
	}

	c.StartCoordinator()
	waitSession("coordinator back", true, "")
	if v := agentValue(t, c.AgentScrape(0), "sluice_agent_registered", "agent", "agent-1"); v != 1 {
		t.Fatalf("sluice_agent_registered once registered = %v", v)
	}

	// The leader goes: past the lease the check fails, readiness stays.
	c.StopCoordinator()
	waitSession("leader gone", false, "longer than its lease")
	if v := agentValue(t, c.AgentScrape(0), "sluice_agent_registered", "agent", "agent-1"); v != 0 {
		t.Fatalf("sluice_agent_registered past the lease = %v", v)
	}
	live("leader gone")
}
