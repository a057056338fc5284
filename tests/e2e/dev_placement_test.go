package e2e

import (
	"maps"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
)

// TestDevRestartPlacesTasksBack restarts `sluice dev` (SIGINT, then the
// same data dir) under ten tasks spread over its two agents: each task
// comes back on the agent that ran it, none moved and none piled onto the
// agent that registered first, with no rebalance.
func TestDevRestartPlacesTasksBack(t *testing.T) {
	t.Parallel()
	listen := sluicetest.FreeAddr(t)
	dev := procs.StartProc(t, "dev", "dev", "--data-dir", t.TempDir(), "--listen", listen, "--log-level", "info")
	c := &procs.Cluster{T: t, URL: "http://" + listen, Brokers: waitReady(t, dev, listen, 1)}
	topic := procs.UniquePrefix(t) + "-ten"
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": "ten", "config": map[string]string{
		"connector.class": "GeneratorSource", "topic": topic, "streams": "10", "tasks.max": "10", "rate": "20"}})
	before := workers(c.WaitRunning("ten", 10))
	perAgent := map[string]int{}
	for _, a := range before {
		perAgent[a]++
	}
	if perAgent["agent-1"] != 5 || perAgent["agent-2"] != 5 {
		t.Fatalf("before the restart: %v per agent, want 5 each", perAgent)
	}

	dev.Terminate(syscall.SIGINT, 30*time.Second)
	dev.Restart()
	c.Brokers = waitReady(t, dev, listen, 2)
	after := workers(c.WaitRunning("ten", 10))
	if !maps.Equal(after, before) {
		t.Fatalf("after the restart tasks run on %v, want each where it ran before: %v", after, before)
	}
	dev.Terminate(syscall.SIGINT, 30*time.Second)
}

// workers maps each task of a status to its agent.
func workers(s sluicetest.Status) map[int]string {
	out := map[int]string{}
	for _, ts := range s.Tasks {
		out[ts.ID] = ts.WorkerID
	}
	return out
}
