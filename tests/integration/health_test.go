package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestReadyThroughNATSOutage shuts the NATS server down under a running
// cluster: the coordinator stays ready and answers reads, its /readyz body
// saying NATS and the leader are away; the agent's /readyz stays 200 (a
// sidecar's readiness is its application pod's) while its body says it
// lost the leader; both liveness probes stay 200. Before, every /readyz
// answered 503 here.
func TestReadyThroughNATSOutage(t *testing.T) {
	o := sluicetest.StartOutage(t)
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, AgentMetrics: true, Backends: &o.Backends})
	name := c.Name("sink")
	topic := c.Name("in")
	c.Produce(topic, "a")
	mustCreate(c, name, fileSinkCfg(filepath.Join(c.WorkDir, "out.txt"), topic), "")
	c.WaitState(name, "RUNNING", 1, "RUNNING")

	o.StopNATS()
	defer o.StartNATS() // a quicker shutdown
	// Past the agent lease (3s) and the leader lease (2s): today's checks
	// would all fail by now.
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		_, body := c.AgentGet(0, "/readyz")
		return !checkOK(t, body, "control-plane"), "agent /readyz: " + string(body)
	})
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		r := c.Do("GET", "/readyz", nil)
		return r.Status == http.StatusOK && !checkOK(t, r.Body, "nats") && !checkOK(t, r.Body, "leader"),
			"coordinator /readyz: " + r.String()
	})
	sluicetest.Consistently(t, 2*time.Second, func() (bool, string) {
		if r := c.Do("GET", "/readyz", nil); r.Status != http.StatusOK {
			return false, "coordinator /readyz during the NATS outage: " + r.String()
		}
		if r := c.Do("GET", "/connectors", nil); r.Status != http.StatusOK || !strings.Contains(string(r.Body), name) {
			return false, "GET /connectors during the NATS outage: " + r.String()
		}
		if r := c.Do("GET", "/health", nil); r.Status != http.StatusOK {
			return false, "coordinator /health during the NATS outage: " + r.String()
		}
		for _, path := range []string{"/readyz", "/healthz"} {
			if code, body := c.AgentGet(0, path); code != http.StatusOK {
				return false, fmt.Sprintf("agent %s during the NATS outage: %d %s", path, code, body)
			}
		}
		return true, ""
	})
}

// TestBrokerOutageSaysSo stops the broker under a running sink: a REST
// write answers a retryable 503 naming Kafka within 3 s (it hung 40 s, then
// answered 500), the task stays RUNNING and its status's trace says the
// broker is unreachable and since when, and the agent's
// sluice_task_broker_unreachable_seconds grows. Once the broker is back, the trace clears and
// the gauge returns to 0.
func TestBrokerOutageSaysSo(t *testing.T) {
	o := sluicetest.StartOutage(t)
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, AgentMetrics: true, Backends: &o.Backends})
	name := c.Name("sink")
	topic := c.Name("in")
	c.Produce(topic, "a")
	mustCreate(c, name, fileSinkCfg(filepath.Join(c.WorkDir, "out.txt"), topic), "")
	c.WaitState(name, "RUNNING", 1, "RUNNING")

	o.StopKafka()
	// At once: the write is refused, or cut short, as soon as the
	// coordinator's pings fail (every 500ms).
	start := time.Now()
	r := c.Do("POST", "/connectors", map[string]any{"name": c.Name("new"), "config": fileSinkCfg(filepath.Join(c.WorkDir, "new.txt"), topic)})
	took := time.Since(start)
	if r.Status != http.StatusServiceUnavailable || !strings.Contains(r.Message(), "Kafka") || took > 3*time.Second {
		t.Fatalf("POST /connectors during the broker outage: %s after %v, want a 503 naming Kafka within 3s", r, took)
	}
	var e struct {
		Code int `json:"error_code"`
	}
	r.JSON(t, &e)
	if e.Code != http.StatusServiceUnavailable {
		t.Fatalf("error_code %d in %s", e.Code, r)
	}
	t.Logf("POST /connectors during the broker outage: %s after %v", r, took.Round(time.Millisecond))

	series := []string{"connector", name, "task", "0"}
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		st, _ := c.Status(name)
		return len(st.Tasks) == 1 && st.Tasks[0].State == "RUNNING" && strings.Contains(st.Tasks[0].Trace, "Kafka broker unreachable since"),
			fmt.Sprintf("status %+v", st)
	})
	sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
		v := agentValue(t, c.AgentScrape(0), "sluice_task_broker_unreachable_seconds", series...)
		return v > 0, fmt.Sprintf("sluice_task_broker_unreachable_seconds = %v", v)
	})

	o.StartKafka()
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		st, _ := c.Status(name)
		return len(st.Tasks) == 1 && st.Tasks[0].State == "RUNNING" && st.Tasks[0].Trace == "", fmt.Sprintf("status %+v", st)
	})
	waitAgentValue(c, 0, 0, "sluice_task_broker_unreachable_seconds", series...)
}

// checkOK reports whether the health body body (a coordinator's or an
// agent's /readyz) holds a passed check named name.
func checkOK(t *testing.T, body []byte, name string) bool {
	t.Helper()
	var b struct {
		Checks []struct {
			Name string `json:"name"`
			OK   bool   `json:"ok"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("%v in %s", err, body)
	}
	for _, c := range b.Checks {
		if c.Name == name {
			return c.OK
		}
	}
	return false
}
