package integration

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/shared/natsconn"
	"github.com/sluice-io/sluice/sluicetest"
)

// scrape is one parsed scrape of a coordinator's GET /metrics.
type scrape map[string]*dto.MetricFamily

// scrapeMetrics scrapes baseURL's /metrics and parses it with the
// Prometheus text parser.
func scrapeMetrics(t testing.TB, baseURL string) scrape {
	t.Helper()
	resp, err := http.Get(baseURL + "/metrics")
	if err != nil {
		t.Fatalf("scrape %s: %v", baseURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %d %v %s", baseURL, resp.StatusCode, err, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse the scrape of %s: %v", baseURL, err)
	}
	return scrape(mfs)
}

// series are the metrics of family name whose labels include labels.
func (s scrape) series(name string, labels map[string]string) []*dto.Metric {
	var out []*dto.Metric
	mf := s[name]
	if mf == nil {
		return nil
	}
next:
	for _, m := range mf.GetMetric() {
		got := map[string]string{}
		for _, lp := range m.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		for k, v := range labels {
			if got[k] != v {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

// value is the value of the one gauge or counter of name with labels; ok
// is false when there is none.
func (s scrape) value(name string, labels map[string]string) (float64, bool) {
	ms := s.series(name, labels)
	if len(ms) != 1 {
		return 0, false
	}
	switch {
	case ms[0].Gauge != nil:
		return ms[0].GetGauge().GetValue(), true
	case ms[0].Counter != nil:
		return ms[0].GetCounter().GetValue(), true
	case ms[0].Untyped != nil:
		return ms[0].GetUntyped().GetValue(), true
	}
	return 0, false
}

// sum adds up the gauges of name with labels.
func (s scrape) sum(name string, labels map[string]string) (float64, int) {
	total := 0.0
	ms := s.series(name, labels)
	for _, m := range ms {
		total += m.GetGauge().GetValue()
	}
	return total, len(ms)
}

// waitConnectorState waits until the connector's state gauges say state:
// 1 for it, 0 for every other state, all six present.
func waitConnectorState(c *sluicetest.Cluster, baseURL, name, state string) {
	c.T.Helper()
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		s := scrapeMetrics(c.T, baseURL)
		ms := s.series("sluice_connector_state", map[string]string{"connector": name})
		if len(ms) != 6 {
			return false, fmt.Sprintf("%d sluice_connector_state series of %s, want 6", len(ms), name)
		}
		for _, st := range []string{"RUNNING", "PAUSED", "STOPPED", "FAILED", "RESTARTING", "UNASSIGNED"} {
			want := 0.0
			if st == state {
				want = 1
			}
			if v, _ := s.value("sluice_connector_state", map[string]string{"connector": name, "state": st}); v != want {
				return false, fmt.Sprintf("sluice_connector_state{connector=%q,state=%q} = %v, want %v", name, st, v, want)
			}
		}
		return true, ""
	})
}

// waitLag waits until the sink's lag series add up to want, on at least
// one partition.
func waitLag(c *sluicetest.Cluster, name string, want float64) {
	c.T.Helper()
	sluicetest.Eventually(c.T, 45*time.Second, func() (bool, string) {
		got, n := scrapeMetrics(c.T, c.URL).sum("sluice_sink_consumer_lag", map[string]string{"connector": name})
		if n == 0 || got != want {
			return false, fmt.Sprintf("sluice_sink_consumer_lag of %s: %v over %d partitions, want %v", name, got, n, want)
		}
		return true, ""
	})
}

// connectorLag reads GET /sluice/connectors/{name}/lag.
func connectorLag(c *sluicetest.Cluster, name string) api.ConnectorLag {
	c.T.Helper()
	var lag api.ConnectorLag
	c.Must(http.StatusOK, "GET", "/sluice/connectors/"+name+"/lag", nil).JSON(c.T, &lag)
	return lag
}

func TestCoordinatorMetrics(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})

	// Connector state gauges follow create, stop and resume.
	src, srcTopic := c.Name("msrc"), c.Name("msrc-topic")
	writeLines(t, workPath(c, "msrc.txt"), lines(0, 3))
	fileSource(c, src, "msrc.txt", srcTopic, "")
	c.WaitState(src, "RUNNING", 1, "RUNNING")
	waitConnectorState(c, c.URL, src, "RUNNING")
	s := scrapeMetrics(t, c.URL)
	if v, ok := s.value("sluice_task_state", map[string]string{"connector": src, "task": "0", "state": "RUNNING"}); !ok || v != 1 {
		t.Errorf("sluice_task_state of %s-0 RUNNING = %v (present %v), want 1", src, v, ok)
	}
	if n := len(s.series("sluice_task_state", map[string]string{"connector": src, "task": "0"})); n != 6 {
		t.Errorf("%d sluice_task_state series of %s-0, want 6", n, src)
	}
	c.Must(http.StatusNoContent, "PUT", "/connectors/"+src+"/stop", nil)
	waitConnectorState(c, c.URL, src, "STOPPED")
	c.Must(http.StatusAccepted, "PUT", "/connectors/"+src+"/resume", nil)
	waitConnectorState(c, c.URL, src, "RUNNING")

	// A sink created STOPPED over a topic holding N records lags by
	// exactly N; once it runs and has consumed them, by 0.
	const n = 25
	sink, sinkTopic := c.Name("msink"), c.Name("msink-topic")
	c.Produce(sinkTopic, lines(0, n)...)
	fileSink(c, sink, sinkTopic, "msink.txt", "STOPPED")
	waitConnectorState(c, c.URL, sink, "STOPPED")
	waitLag(c, sink, n)
	lag := connectorLag(c, sink)
	if lag.Connector != sink || lag.TotalLag != n || len(lag.Partitions) == 0 {
		t.Fatalf("lag of the stopped sink: %+v, want a total of %d", lag, n)
	}
	for _, p := range lag.Partitions {
		if p.Topic != sinkTopic || p.CommittedOffset != -1 || p.Lag != p.EndOffset {
			t.Errorf("partition of a sink that committed nothing: %+v", p)
		}
	}

	// Offsets operations, by kind and result: an alter and a reset of the
	// stopped sink succeed, an alter of the running source is refused.
	p0 := map[string]any{"kafka_topic": sinkTopic, "kafka_partition": 0}
	c.Must(http.StatusOK, "PATCH", "/connectors/"+sink+"/offsets", map[string]any{"offsets": []map[string]any{
		{"partition": p0, "offset": map[string]any{"kafka_offset": 0}}}})
	c.Must(http.StatusOK, "DELETE", "/connectors/"+sink+"/offsets", nil)
	expect(t, c, "PATCH", "/connectors/"+src+"/offsets", body(filePos("msrc.txt", 0)), http.StatusBadRequest, msgNotStopped(src))

	c.Must(http.StatusAccepted, "PUT", "/connectors/"+sink+"/resume", nil)
	waitConnectorState(c, c.URL, sink, "RUNNING")
	waitFile(t, workPath(c, "msink.txt"), lines(0, n))
	waitLag(c, sink, 0)
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		lag := connectorLag(c, sink)
		for _, p := range lag.Partitions {
			if p.EndOffset > 0 && p.CommittedOffset != p.EndOffset {
				return false, fmt.Sprintf("partition %d committed %d of %d", p.Partition, p.CommittedOffset, p.EndOffset)
			}
		}
		return lag.TotalLag == 0, fmt.Sprintf("total lag %d", lag.TotalLag)
	})

	// The lag endpoint's errors.
	wantError(t, c.Do("GET", "/sluice/connectors/"+c.Name("nope")+"/lag", nil), http.StatusNotFound, msgNotFound(c.Name("nope")))
	wantError(t, c.Do("GET", "/sluice/connectors/"+src+"/lag", nil), http.StatusBadRequest,
		"Connector "+src+" is a source connector: lag is a sink's consumer lag")

	// REST requests by route and code (the status 404s are counted from
	// here: WaitState polls a status before there is one).
	statusNotFound := map[string]string{"route": "connector_status", "method": "GET", "code": "404"}
	before, _ := scrapeMetrics(t, c.URL).value("sluice_rest_requests_total", statusNotFound)
	c.Must(http.StatusNotFound, "GET", "/connectors/"+c.Name("nope")+"/status", nil)
	c.Must(http.StatusNotFound, "GET", "/no/such/route", nil)
	s = scrapeMetrics(t, c.URL)
	for _, w := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"sluice_offsets_operations_total", map[string]string{"kind": "alter", "result": "success"}, 1},
		{"sluice_offsets_operations_total", map[string]string{"kind": "reset", "result": "success"}, 1},
		{"sluice_offsets_operations_total", map[string]string{"kind": "alter", "result": "error"}, 1},
		{"sluice_offsets_operations_total", map[string]string{"kind": "reset", "result": "error"}, 0},
		{"sluice_rest_requests_total", statusNotFound, before + 1},
		{"sluice_rest_requests_total", map[string]string{"route": "unknown", "method": "GET", "code": "404"}, 1},
		{"sluice_rest_requests_total", map[string]string{"route": "connector_lag", "method": "GET", "code": "400"}, 1},
		{"sluice_rest_requests_total", map[string]string{"route": "create_connector", "method": "POST", "code": "201"}, 2},
		{"sluice_coordinator_leader", nil, 1},
		{"sluice_coordinator_agents", nil, 1},
	} {
		if got, ok := s.value(w.name, w.labels); !ok || got != w.want {
			t.Errorf("%s%v = %v (present %v), want %v", w.name, w.labels, got, ok, w.want)
		}
	}
	for _, h := range []struct {
		name   string
		labels map[string]string
	}{
		{"sluice_offsets_operation_duration_seconds", map[string]string{"kind": "alter"}},
		{"sluice_rest_request_duration_seconds", map[string]string{"route": "create_connector", "method": "POST"}},
		{"sluice_reconcile_duration_seconds", nil},
		{"sluice_nats_request_duration_seconds", map[string]string{"kind": "task.assign"}},
		{"sluice_nats_request_duration_seconds", map[string]string{"kind": "task.revoke"}},
		{"sluice_nats_request_duration_seconds", map[string]string{"kind": "offsets.sink"}},
	} {
		if ms := s.series(h.name, h.labels); len(ms) != 1 || ms[0].GetHistogram().GetSampleCount() == 0 {
			t.Errorf("histogram %s%v: %d series, want one with samples", h.name, h.labels, len(ms))
		}
	}
	if term, _ := s.value("sluice_coordinator_term", nil); term < 1 {
		t.Errorf("sluice_coordinator_term = %v on the leader", term)
	}
	if len(s.series("sluice_kafka_connects_total", map[string]string{"client_id": "sluice-coordinator"})) == 0 {
		t.Errorf("no sluice_kafka_connects_total of client sluice-coordinator: kprom is not on the coordinator's clients")
	}

	// A follower: leader 0, the same term, no agents, and the connector
	// states from its own view of the status topic.
	_, followerURL := c.StartExtraCoordinator()
	// Ready once it read its topics; it names the leader once it read the
	// lease (just after it started).
	var ready api.Readiness
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		r := sluicetest.Do(t, followerURL, "GET", "/readyz", nil)
		if r.Status != http.StatusOK {
			return false, r.String()
		}
		r.JSON(t, &ready)
		return ready.Leader != "", r.String()
	})
	if ready.Status != "ready" || ready.Role != "follower" || ready.Leader != strings.TrimPrefix(c.URL, "http://") {
		t.Errorf("follower's /readyz: %+v", ready)
	}
	waitConnectorState(c, followerURL, src, "RUNNING")
	fs := scrapeMetrics(t, followerURL)
	leaderTerm, _ := s.value("sluice_coordinator_term", nil)
	for name, want := range map[string]float64{"sluice_coordinator_leader": 0, "sluice_coordinator_agents": 0, "sluice_coordinator_term": leaderTerm} {
		if got, ok := fs.value(name, nil); !ok || got != want {
			t.Errorf("follower's %s = %v (present %v), want %v", name, got, ok, want)
		}
	}

	// A deleted connector's series are gone, the lag's too.
	c.Must(http.StatusNoContent, "DELETE", "/connectors/"+sink, nil)
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		s := scrapeMetrics(t, c.URL)
		for _, name := range []string{"sluice_connector_state", "sluice_task_state", "sluice_sink_consumer_lag"} {
			if n := len(s.series(name, map[string]string{"connector": sink})); n != 0 {
				return false, fmt.Sprintf("%d %s series of the deleted %s", n, name, sink)
			}
		}
		return true, ""
	})
	if n := len(scrapeMetrics(t, c.URL).series("sluice_connector_state", map[string]string{"connector": src})); n != 6 {
		t.Errorf("%d sluice_connector_state series of %s after deleting another connector, want 6", n, src)
	}
}

func TestCoordinatorReadiness(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 0})
	var ready api.Readiness
	c.Must(http.StatusOK, "GET", "/readyz", nil).JSON(t, &ready)
	if ready.Status != "ready" || ready.Role != "leader" || ready.Leader != strings.TrimPrefix(c.URL, "http://") {
		t.Errorf("leader's /readyz: %+v", ready)
	}
	// /health stays Kafka Connect's.
	var health api.Health
	c.Must(http.StatusOK, "GET", "/health", nil).JSON(t, &health)
	if health.Status != "healthy" {
		t.Errorf("/health: %+v", health)
	}
}

// TestCoordinatorNotReadyWhileStarting starts a coordinator whose Kafka
// does not answer: it serves REST at once, and /readyz says it is not
// ready (while /health says starting, as Kafka Connect's does).
func TestCoordinatorNotReadyWhileStarting(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 0})
	// A port below the ephemeral range: one a listener on port 0 freed could
	// go to another test's connection before the coordinator binds it.
	addr := sluicetest.FreeAddr(t)
	co, err := coordinator.New(coordinator.Config{
		Listen: addr, NATSURL: c.NATSURL, Brokers: "127.0.0.1:1", // nothing listens there
		NATSAuth: natsconn.Auth{NkeySeedFile: c.NATSCreds.Coordinators[sluicetest.CoordinatorUser]},
		GroupID:  c.GroupID, ConfigTopic: c.Prefix + "-configs", OffsetsTopic: c.Prefix + "-offsets", StatusTopic: c.Prefix + "-status",
		AgentLease: 5 * time.Second, TaskShutdownTimeout: 5 * time.Second, KafkaProbeTimeout: 100 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan error, 1)
	go func() { started <- co.Start(ctx) }()
	defer func() {
		cancel()
		//lint:ignore S1005 errcheck asks that a received error be dropped explicitly
		_ = <-started
		_ = co.Stop(context.Background())
	}()
	url := "http://" + addr
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		r, err := http.Get(url + "/readyz")
		if err != nil {
			return false, err.Error()
		}
		r.Body.Close()
		return true, ""
	})
	wantError(t, sluicetest.Do(t, url, "GET", "/readyz", nil), http.StatusServiceUnavailable,
		"Coordinator is still starting up: it has not read its config, status and offsets topics yet")
	var health api.Health
	if r := sluicetest.Do(t, url, "GET", "/health", nil); r.Status != http.StatusServiceUnavailable {
		t.Errorf("/health while starting: %s", r)
	} else if r.JSON(t, &health); health.Status != "starting" {
		t.Errorf("/health while starting: %+v", health)
	}
}
