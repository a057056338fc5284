package bench

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest/procs"
)

// failovers is how many agent deaths BenchmarkFailoverAgentDeath times.
const failovers = 5

// buildSluice builds the sluice binary that the e2e process helpers run,
// into the benchmark's temp dir (or takes SLUICE_E2E_BINARY).
func buildSluice(b *testing.B) {
	b.Helper()
	if _, err := procs.BuildBinary(b.TempDir()); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkFailoverAgentDeath measures the time from an agent's death
// (SIGKILL) to all of its tasks RUNNING on other agents, with the default
// 10s agent lease: separate coordinator and agent processes, three agents,
// a generator source of three tasks. It kills the agent of task 0, waits
// until its tasks run elsewhere, restarts it, and repeats; it reports the
// median over 5 failovers (more if b.N asks for more).
//
//	go test -run '^$' -bench BenchmarkFailoverAgentDeath ./bench/
func BenchmarkFailoverAgentDeath(b *testing.B) {
	buildSluice(b)
	const lease = 10 * time.Second // the --agent-lease default
	c := procs.Start(b, procs.Options{Agents: 3, Lease: lease})
	g := procs.Generator{Topic: c.Name("gen"), Streams: 3, Tasks: 3, Count: -1, Rate: 50}
	c.CreateTopic(g.Topic, 3)
	name := c.Name("src")
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": name, "config": g.Config()})
	c.WaitRunning(name, g.Tasks)

	var took []time.Duration
	b.ResetTimer()
	for i := 0; i < max(b.N, failovers); i++ {
		victim := c.Agent(c.Placement(name)[0])
		var moved int
		for _, w := range c.Placement(name) {
			if w == victim.Name() {
				moved++
			}
		}
		killed := time.Now()
		victim.Kill()
		c.WaitMoved(name, g.Tasks, 3*lease, victim.Name())
		d := time.Since(killed)
		took = append(took, d)
		b.Logf("failover %d: %s (%d task(s)) killed, its tasks RUNNING elsewhere after %v", i+1, victim.Name(), moved, d.Round(time.Millisecond))
		b.StopTimer()
		mark := c.Coordinator.Mark()
		victim.Restart()
		c.WaitRegistered(mark, victim.Name())
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(took)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(took[len(took)/2]), "ms/failover")
	b.ReportMetric(ms(took[0]), "min-ms")
	b.ReportMetric(ms(took[len(took)-1]), "max-ms")
	b.ReportMetric(0, "ns/op") // one op is a whole series: ns/op says nothing
}
