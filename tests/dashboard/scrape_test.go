package dashboard

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestScrapedNames: a scrape in the text format gives every series name
// it holds, a histogram's three, and drops families without a series.
func TestScrapedNames(t *testing.T) {
	scrape := `# HELP sluice_coordinator_leader 1 while this coordinator leads.
# TYPE sluice_coordinator_leader gauge
sluice_coordinator_leader 1
# HELP sluice_reconcile_duration_seconds A reconcile pass.
# TYPE sluice_reconcile_duration_seconds histogram
sluice_reconcile_duration_seconds_bucket{le="0.1"} 3
sluice_reconcile_duration_seconds_bucket{le="+Inf"} 4
sluice_reconcile_duration_seconds_sum 0.5
sluice_reconcile_duration_seconds_count 4
# HELP sluice_nats_request_errors_total Failed requests.
# TYPE sluice_nats_request_errors_total counter
`
	got, err := ScrapedNames(strings.NewReader(scrape))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"sluice_coordinator_leader", "sluice_reconcile_duration_seconds_bucket", "sluice_reconcile_duration_seconds_count", "sluice_reconcile_duration_seconds_sum"}
	if keys := sortedKeys(got); strings.Join(keys, " ") != strings.Join(want, " ") {
		t.Fatalf("names %v, want %v", keys, want)
	}
	used := map[string]bool{"sluice_coordinator_leader": true, "sluice_nats_request_errors_total": true, "sluice_reconcile_duration_seconds_bucket": true}
	if missing := MissingFromScrape(used, got); len(missing) != 1 || missing[0] != "sluice_nats_request_errors_total" {
		t.Fatalf("missing %v, want the errors counter that has no series", missing)
	}
	if _, err := ScrapedNames(strings.NewReader("not a scrape {")); err == nil {
		t.Fatal("a broken scrape parsed")
	}
}

// TestDashboardMetricsInScrape: every metric the dashboard queries is in a
// real scrape of a harness cluster: the coordinator's GET /metrics, and
// the agent's --metrics-listen, once the cluster has run a source and a
// sink and an offsets alter and reset (counters and histograms have series
// only once something happened).
func TestDashboardMetricsInScrape(t *testing.T) {
	d := load(t)
	qs, err := Queries(d)
	if err != nil {
		t.Fatal(err)
	}
	used, err := UsedNames(qs)
	if err != nil {
		t.Fatal(err)
	}
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, AgentMetrics: true})
	exercise(t, c)
	var missing []string
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		r := sluicetest.Do(t, c.URL, http.MethodGet, "/metrics", nil)
		if r.Status != http.StatusOK {
			return false, fmt.Sprintf("GET /metrics: %d %s", r.Status, r.Body)
		}
		scraped, err := ScrapedNames(bytes.NewReader(r.Body))
		if err != nil {
			t.Fatal(err)
		}
		missing = MissingFromScrape(ServedBy(used, Coordinator), scraped)
		return len(missing) == 0, fmt.Sprintf("the dashboard queries coordinator series the scrape lacks: %v", missing)
	})
	// The agent's, from a scrape of its --metrics-listen, while the source
	// and the sink run on it.
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		missing = MissingFromScrape(ServedBy(used, Agent), FamilyNames(c.AgentScrape(0)))
		return len(missing) == 0, fmt.Sprintf("the dashboard queries agent series the scrape lacks: %v", missing)
	})
}

// exercise makes the cluster do what gives the coordinator's metrics
// series: a source and a sink running (states, lag, reconcile passes,
// NATS requests, Kafka clients), an offsets alter and reset, and a REST
// error.
func exercise(t *testing.T, c *sluicetest.Cluster) {
	topic := c.Name("gen-out")
	src, snk := c.Name("gen"), c.Name("sink")
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": src, "config": map[string]string{
		"connector.class": "io.sluice.connect.generator.GeneratorSourceConnector", "topic": topic, "rate": "50"}})
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": snk, "config": map[string]string{
		"connector.class": "FileStreamSink", "file": filepath.Join(c.WorkDir, "out.txt"), "topics": topic}})
	c.WaitState(src, "RUNNING", 1, "RUNNING")
	c.WaitState(snk, "RUNNING", 1, "RUNNING")
	// The generator's first write creates its topic; a RUNNING task may
	// not have written yet, and an offset of a missing topic is a 400.
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		td, err := c.Admin().ListTopics(context.Background(), topic)
		return err == nil && td[topic].Err == nil, fmt.Sprintf("topic %s: %v %v", topic, err, td[topic].Err)
	})
	c.Must(http.StatusNoContent, http.MethodPut, "/connectors/"+snk+"/stop", nil)
	c.WaitState(snk, "STOPPED", 0, "")
	c.Must(http.StatusOK, http.MethodPatch, "/connectors/"+snk+"/offsets", map[string]any{"offsets": []any{map[string]any{
		"partition": map[string]any{"kafka_topic": topic, "kafka_partition": 0}, "offset": map[string]any{"kafka_offset": 0}}}})
	c.Must(http.StatusOK, http.MethodDelete, "/connectors/"+snk+"/offsets", nil)
	c.Must(http.StatusAccepted, http.MethodPut, "/connectors/"+snk+"/resume", nil)
	if r := c.Do(http.MethodGet, "/connectors/"+c.Name("missing"), nil); r.Status != http.StatusNotFound {
		t.Fatalf("GET of a connector that does not exist: %s", r)
	}
}
