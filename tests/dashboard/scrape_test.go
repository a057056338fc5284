package dashboard

import (
	"bytes"
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
	// The Kafka clients' error counters are required as any other: they
	// exist, at 0, from a client's first connection.
	if missing := MissingFromScrape(map[string]bool{"sluice_kafka_read_errors_total": true}, got); len(missing) != 1 {
		t.Fatalf("missing %v, want the Kafka read errors reported", missing)
	}
	if _, err := ScrapedNames(strings.NewReader("not a scrape {")); err == nil {
		t.Fatal("a broken scrape parsed")
	}
}

// TestDashboardSeriesOnAFreshCluster: every series the dashboard queries
// is served by a freshly started cluster that nothing has gone wrong in
// (issue 37: three panels said "No data" until the first Kafka error).
// First with no connector and no REST call yet: every series that does
// not name a connector, task, topic or REST route is there, at 0 where
// nothing happened (the Kafka clients' error counters, the offsets and
// NATS latencies). Then with a source and a sink running — no offsets
// operation, no REST error, no failure — every series the dashboard
// queries is there. Every Sluice family of either scrape is named as
// Prometheus' conventions say.
func TestDashboardSeriesOnAFreshCluster(t *testing.T) {
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
	checkScrapes(t, c, FromStartOnly(used), "a fresh cluster")

	topic := c.Name("gen-out")
	src, snk := c.Name("gen"), c.Name("sink")
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": src, "config": map[string]string{
		"connector.class": "io.sluice.connect.generator.GeneratorSourceConnector", "topic": topic, "rate": "50"}})
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": snk, "config": map[string]string{
		"connector.class": "FileStreamSink", "file": filepath.Join(c.WorkDir, "out.txt"), "topics": topic}})
	c.WaitState(src, "RUNNING", 1, "RUNNING")
	c.WaitState(snk, "RUNNING", 1, "RUNNING")
	checkScrapes(t, c, used, "a cluster running a source and a sink")
}

// checkScrapes waits until the coordinator's and the agent's scrapes hold
// every series of want that each serves, and checks the names of both.
func checkScrapes(t *testing.T, c *sluicetest.Cluster, want map[string]bool, what string) {
	t.Helper()
	var missing []string
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		r := sluicetest.Do(t, c.URL, http.MethodGet, "/metrics", nil)
		if r.Status != http.StatusOK {
			return false, fmt.Sprintf("GET /metrics: %d %s", r.Status, r.Body)
		}
		families, err := ParseScrape(bytes.NewReader(r.Body))
		if err != nil {
			t.Fatal(err)
		}
		if bad := MisnamedFamilies(families); len(bad) > 0 {
			t.Fatalf("%s: the coordinator serves misnamed families: %v", what, bad)
		}
		missing = MissingFromScrape(ServedBy(want, Coordinator), FamilyNames(families))
		return len(missing) == 0, fmt.Sprintf("%s: the dashboard queries coordinator series the scrape lacks: %v", what, missing)
	})
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		families := c.AgentScrape(0)
		if bad := MisnamedFamilies(families); len(bad) > 0 {
			t.Fatalf("%s: the agent serves misnamed families: %v", what, bad)
		}
		missing = MissingFromScrape(ServedBy(want, Agent), FamilyNames(families))
		return len(missing) == 0, fmt.Sprintf("%s: the dashboard queries agent series the scrape lacks: %v", what, missing)
	})
}

// TestFromStartOnly: the series that name a connector, task, topic or
// REST route are left to the second stage; the rest are required at once.
func TestFromStartOnly(t *testing.T) {
	got := FromStartOnly(map[string]bool{
		"sluice_kafka_connect_errors_total":                true,
		"sluice_offsets_operation_duration_seconds_bucket": true,
		"sluice_task_state":                                true,
		"sluice_rest_requests_total":                       true,
		"sluice_kafka_fetch_records_total":                 true,
		"sluice_not_in_the_catalogue":                      true,
	})
	want := []string{"sluice_kafka_connect_errors_total", "sluice_not_in_the_catalogue", "sluice_offsets_operation_duration_seconds_bucket"}
	if keys := sortedKeys(got); strings.Join(keys, " ") != strings.Join(want, " ") {
		t.Fatalf("FromStartOnly = %v, want %v", keys, want)
	}
}

// TestMisnamedFamilies: a counter without _total and a gauge with it are
// caught; a deprecated name only while its new name is served.
func TestMisnamedFamilies(t *testing.T) {
	scrape := `# TYPE sluice_a_total counter
sluice_a_total 1
# TYPE sluice_b counter
sluice_b 1
# TYPE sluice_c_total gauge
sluice_c_total 1
# TYPE sluice_kafka_buffered_fetch_records_total gauge
sluice_kafka_buffered_fetch_records_total 0
# TYPE go_thing_total gauge
go_thing_total 1
`
	families, err := ParseScrape(strings.NewReader(scrape))
	if err != nil {
		t.Fatal(err)
	}
	want := "sluice_b (a counter without _total) sluice_c_total (a gauge ending in _total) sluice_kafka_buffered_fetch_records_total (a gauge ending in _total)"
	if got := strings.Join(MisnamedFamilies(families), " "); got != want {
		t.Fatalf("misnamed: %q, want %q", got, want)
	}
	more, err := ParseScrape(strings.NewReader(scrape + "# TYPE sluice_kafka_buffered_fetch_records gauge\nsluice_kafka_buffered_fetch_records 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := MisnamedFamilies(more); len(got) != 2 {
		t.Fatalf("with the new name served, the deprecated one still reported: %v", got)
	}
}
