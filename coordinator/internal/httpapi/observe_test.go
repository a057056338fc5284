package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/metrics"
)

func (f *fake) Readiness(ctx context.Context) (api.Readiness, error) {
	return api.Readiness{Status: "ready", Role: "leader", Leader: "w:8083"}, f.record("Readiness")
}

// ConnectorLag leaves Partitions nil on purpose: the transport must still
// answer [].
func (f *fake) ConnectorLag(ctx context.Context, name string) (api.ConnectorLag, error) {
	return api.ConnectorLag{Connector: name}, f.record("ConnectorLag", name)
}

// ConnectorGauges leaves Tasks nil on purpose, as ConnectorLag does.
func (f *fake) ConnectorGauges(ctx context.Context, name string) (api.ConnectorGauges, error) {
	return api.ConnectorGauges{Connector: name}, f.record("ConnectorGauges", name)
}

func (f *fake) Metrics(ctx context.Context) ([]*dto.MetricFamily, error) {
	if err := f.record("Metrics"); err != nil || f.gather == nil {
		return nil, err
	}
	return f.gather.Gather()
}

func TestRequestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	f := newFake()
	f.errs["GetConnector"] = api.Errorf(api.CodeNotFound, "Connector x not found")
	srv := httptest.NewServer(NewHandler(f.services(), WithMetrics(m)))
	t.Cleanup(srv.Close)

	do(t, srv, http.MethodGet, "/connectors", "")
	do(t, srv, http.MethodGet, "/connectors/", "") // one trailing slash: the same route
	do(t, srv, http.MethodGet, "/connectors/x", "")
	do(t, srv, http.MethodGet, "/no/such/route", "")
	do(t, srv, http.MethodGet, "/connectors//x", "") // refused before routing
	do(t, srv, http.MethodGet, "/connectors", "", ForwardedHeader, "1")

	// The forwarded request is not counted: the coordinator its client
	// called did.
	want := `
# HELP sluice_rest_requests_total REST requests answered to clients of this coordinator, by route (operation), method and status code.
# TYPE sluice_rest_requests_total counter
sluice_rest_requests_total{code="200",method="GET",route="list_connectors"} 2
sluice_rest_requests_total{code="400",method="GET",route="unknown"} 1
sluice_rest_requests_total{code="404",method="GET",route="get_connector"} 1
sluice_rest_requests_total{code="404",method="GET",route="unknown"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "sluice_rest_requests_total"); err != nil {
		t.Error(err)
	}
	mfs, _ := reg.Gather()
	var hist *dto.MetricFamily
	for _, mf := range mfs {
		if mf.GetName() == "sluice_rest_request_duration_seconds" {
			hist = mf
		}
	}
	if hist == nil || len(hist.GetMetric()) != 3 { // list_connectors, get_connector, unknown
		t.Fatalf("sluice_rest_request_duration_seconds: %v", hist)
	}
}

func TestMetricsEndpoint(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "test_things_total", Help: "Things."})
	reg.MustRegister(c)
	c.Add(3)
	f := newFake()
	f.gather = reg
	srv := serve(t, f)

	got := do(t, srv, http.MethodGet, "/metrics", "")
	if got.status != http.StatusOK || !strings.HasPrefix(got.header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %q", got.status, got.header.Get("Content-Type"))
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(got.body + "\n"))
	if err != nil {
		t.Fatalf("parse the scrape: %v\n%s", err, got.body)
	}
	if v := mfs["test_things_total"].GetMetric()[0].GetCounter().GetValue(); v != 3 {
		t.Errorf("test_things_total = %v, want 3", v)
	}

	f.errs["Metrics"] = api.Errorf(api.CodeInternal, "Failed to gather metrics: boom")
	if got := do(t, srv, http.MethodGet, "/metrics", ""); got.status != 500 || got.body != errorBody(500, "Failed to gather metrics: boom") {
		t.Errorf("a failed gather: %d %s", got.status, got.body)
	}
}

func TestReadyzAndLag(t *testing.T) {
	f := newFake()
	srv := serve(t, f)
	if got := do(t, srv, http.MethodGet, "/readyz", ""); got.status != 200 || got.body != `{"status":"ready","role":"leader","leader":"w:8083"}` {
		t.Errorf("GET /readyz: %d %s", got.status, got.body)
	}
	f.errs["Readiness"] = api.Errorf(api.CodeUnavailable, "No leader is known")
	if got := do(t, srv, http.MethodGet, "/readyz", ""); got.status != 503 || got.body != errorBody(503, "No leader is known") {
		t.Errorf("GET /readyz, not ready: %d %s", got.status, got.body)
	}

	if got := do(t, srv, http.MethodGet, "/sluice/connectors/a%2Fb/lag", ""); got.status != 200 || got.body != `{"connector":"a/b","total_lag":0,"partitions":[]}` {
		t.Errorf("GET lag: %d %s", got.status, got.body)
	}
	f.errs["ConnectorLag"] = api.Errorf(api.CodeBadRequest, "Connector s is a source connector: lag is a sink's consumer lag")
	if got := do(t, srv, http.MethodGet, "/sluice/connectors/s/lag", ""); got.status != 400 || got.body != errorBody(400, "Connector s is a source connector: lag is a sink's consumer lag") {
		t.Errorf("GET lag of a source: %d %s", got.status, got.body)
	}
	if got := do(t, srv, http.MethodGet, "/sluice/connectors/a%2Fb/gauges", ""); got.status != 200 || got.body != `{"connector":"a/b","tasks":[]}` {
		t.Errorf("GET gauges: %d %s", got.status, got.body)
	}
	f.errs["ConnectorGauges"] = api.Errorf(api.CodeNotFound, "Connector x not found")
	if got := do(t, srv, http.MethodGet, "/sluice/connectors/x/gauges", ""); got.status != 404 || got.body != errorBody(404, "Connector x not found") {
		t.Errorf("GET gauges of an unknown connector: %d %s", got.status, got.body)
	}
}
