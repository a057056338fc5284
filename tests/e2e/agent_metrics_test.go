package e2e

import (
	"fmt"
	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestAgentMetricsListener runs sluice agent with --metrics-listen and
// --pprof and checks its listener as a kubelet and Prometheus would use it:
// /healthz at once, /readyz once registered, and /metrics in the text
// format with the agent's session and the process's own series; and as an
// operator would profile it: the goroutine dump shows the agent's code.
func TestAgentMetricsListener(t *testing.T) {
	t.Parallel()
	addr := sluicetest.FreeAddr(t)
	c := procs.Start(t, procs.Options{Agents: 1, AgentArgs: []string{"--metrics-listen", addr, "--pprof"}})
	base := "http://" + addr
	client := &http.Client{Timeout: 5 * time.Second}
	get := func(path string) (int, error) {
		resp, err := client.Get(base + path)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		code, err := get("/healthz")
		return err == nil && code == http.StatusOK, fmt.Sprintf("/healthz: %d %v", code, err)
	})
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		code, err := get("/readyz")
		return err == nil && code == http.StatusOK, fmt.Sprintf("/readyz: %d %v", code, err)
	})
	if !c.Agents[0].Running() {
		t.Fatal("the agent exited")
	}

	resp, err := client.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	v, ok, err := sluicetest.Value(mfs, "sluice_agent_registered", "agent", "agent-1")
	if err != nil || !ok || v != 1 {
		t.Fatalf("sluice_agent_registered{agent=agent-1} = %v (present %v, %v), want 1", v, ok, err)
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "sluice_kafka_connects_total"} {
		if mfs[name] == nil {
			t.Errorf("/metrics has no %s", name)
		}
	}

	r := sluicetest.Do(t, base, http.MethodGet, "/debug/pprof/goroutine?debug=1", nil)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "github.com/sluice-io/sluice/agent") {
		t.Errorf("GET /debug/pprof/goroutine?debug=1 with --pprof = %d, %d bytes: want the agent's goroutines", r.Status, len(r.Body))
	}
}
