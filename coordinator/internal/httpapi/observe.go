package httpapi

// Sluice's observability endpoints (GET /readyz, /metrics,
// /sluice/connectors/{name}/lag and …/gauges) and the REST request metrics.

import (
	"context"
	"net/http"
	"time"

	"github.com/go-kit/kit/endpoint"
	kithttp "github.com/go-kit/kit/transport/http"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/sluice-io/sluice/coordinator/internal/metrics"
)

func makeReadiness(svc Admin) endpoint.Endpoint {
	return func(ctx context.Context, _ any) (any, error) {
		return svc.Readiness(ctx)
	}
}

func makeConnectorLagHistory(svc Runtime) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		h, err := svc.ConnectorLagHistory(ctx, request.(nameRequest).name)
		h.Partitions = nonNil(h.Partitions)
		for i := range h.Partitions {
			h.Partitions[i].Samples = nonNil(h.Partitions[i].Samples)
		}
		return h, err
	}
}

func makeConnectorLag(svc Runtime) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		lag, err := svc.ConnectorLag(ctx, request.(nameRequest).name)
		lag.Partitions = nonNil(lag.Partitions)
		return lag, err
	}
}

func makeConnectorGauges(svc Runtime) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		g, err := svc.ConnectorGauges(ctx, request.(nameRequest).name)
		g.Tasks = nonNil(g.Tasks)
		return g, err
	}
}

func makeMetrics(svc Admin) endpoint.Endpoint {
	return func(ctx context.Context, _ any) (any, error) {
		return svc.Metrics(ctx)
	}
}

// encodeMetrics writes the metric families in the exposition format the
// scraper's Accept header asks for (text by default), as promhttp does.
func encodeMetrics(ctx context.Context, w http.ResponseWriter, response any) error {
	accept, _ := ctx.Value(kithttp.ContextKeyRequestAccept).(string)
	format := expfmt.NegotiateAccept(http.Header{"Accept": {accept}}, expfmt.NewFormat(expfmt.TypeProtoDelim),
		expfmt.NewFormat(expfmt.TypeProtoText), expfmt.NewFormat(expfmt.TypeProtoCompact), expfmt.NewFormat(expfmt.TypeTextPlain))
	w.Header().Set("Content-Type", string(format))
	w.WriteHeader(http.StatusOK)
	enc := expfmt.NewEncoder(w, format)
	for _, mf := range response.([]*dto.MetricFamily) {
		if err := enc.Encode(mf); err != nil {
			return nil // the header is out: the client sees a cut-off body
		}
	}
	if c, ok := enc.(expfmt.Closer); ok {
		_ = c.Close()
	}
	return nil
}

// WithMetrics counts every REST request a client sent this coordinator on
// m, by route, method and status code (sluice_rest_requests_total), and
// times it. A request another coordinator forwarded here is not counted
// again: the coordinator its client called counted it.
func WithMetrics(m *metrics.Metrics) Option {
	return func(o *options) { o.metrics = m }
}

// countRequests is WithMetrics' layer, the outermost, so that every
// answer counts: 401s, 403s, forwarded writes and path refusals included.
func countRequests(m *metrics.Metrics, forwarded func(*http.Request) bool, next http.Handler) http.Handler {
	ops := routeOps()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if forwarded(r) {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		code := sw.status
		if code == 0 {
			code = http.StatusOK
		}
		m.ObserveREST(ops.of(r), r.Method, code, time.Since(start))
	})
}

// unknownRoute labels requests that match no route.
const unknownRoute = "unknown"

// opMux finds a request's route the way the API does (canonical path, dot
// segments as names), without serving it.
type opMux struct {
	mux *http.ServeMux
	ops map[string]string // pattern → op
}

// routeOps is the opMux of routes().
func routeOps() opMux {
	o := opMux{mux: http.NewServeMux(), ops: map[string]string{}}
	for _, rt := range routes() {
		o.mux.Handle(rt.pattern, http.NotFoundHandler())
		o.ops[rt.pattern] = rt.op
	}
	return o
}

// of is the op of r's route, unknownRoute when none matches.
func (o opMux) of(r *http.Request) string {
	r, e := canonical(r)
	if e != nil {
		return unknownRoute
	}
	if _, pattern := o.mux.Handler(dotsAsNames(r)); o.ops[pattern] != "" {
		return o.ops[pattern]
	}
	return unknownRoute
}

// statusWriter remembers the status an answer was written with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

// WriteHeader implements http.ResponseWriter.
func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (the leader
// forward flushes through it).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
