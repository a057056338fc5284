package httpapi

import (
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	kithttp "github.com/go-kit/kit/transport/http"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/metrics"
)

// MaxBodyBytes is the largest request body accepted (spec §0: larger bodies
// get 413 instead of being read).
const MaxBodyBytes = 8 << 20

// Option configures NewHandler.
type Option func(*options)

type options struct {
	logger     *slog.Logger
	leadership Leadership
	audit      *Audit
	security   Security
	metrics    *metrics.Metrics
	brokers    BrokerGate
}

// WithLogger sets the logger the endpoint middleware writes to. A nil logger
// is ignored; the default discards everything.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// NewHandler serves the Kafka Connect REST API (spec §3, §5) on top of svc,
// every one of whose services must be set.
//
// Request flow:
//
//	request ─► client writes: record each (WithAudit), answered after its
//	              │           record; log each success (writelog.go)
//	              │
//	              ▼
//	           canonicalPaths: Jetty's refusals (400), one trailing slash off
//	              │
//	              ▼
//	           authenticate (WithSecurity): 401 (security.go)
//	              │
//	              ▼
//	           leader routing (WithLeaderRouting): forward a follower's writes
//	              │
//	              ▼
//	           routing (ServeMux) ──no route──► 404 / 405 JSON error
//	              │
//	              ▼
//	           the route's role (WithSecurity): 403
//	              │
//	              ▼
//	           admit: media type (400, 415), body limit (413 on read)
//	              │
//	              ▼
//	           go-kit server: decode ─► logging ─► authorize ─► broker gate ─► endpoint ─► Services
//	              │                                   │        (WithBrokerGate: a write
//	              │                                   │         answers 503 while Kafka is
//	              │                                   │         unreachable)
//	              ▼                                   ▼
//	           encodeError (every non-2xx)        per-route encoder
func NewHandler(svc Services, opts ...Option) http.Handler {
	o := options{logger: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		opt(&o)
	}
	mux := http.NewServeMux()
	serverOpts := []kithttp.ServerOption{
		kithttp.ServerErrorEncoder(encodeError),
		kithttp.ServerBefore(putBaseURL, putReason, kithttp.PopulateRequestContext),
	}
	for _, rt := range routes() {
		ep := rt.endpoint(svc)
		if o.brokers != nil && gatedByBrokers(rt) {
			ep = brokerGate(o.brokers, rt.op)(ep)
		}
		ep = logging(o.logger, rt.op)(authorize(rt, o.security.Tenancy != nil)(ep))
		srv := kithttp.NewServer(ep, rt.decode, rt.encode, serverOpts...)
		mux.Handle(rt.pattern, requireRole(rt, admit(!anyMediaType[rt.op], srv)))
	}
	var api http.Handler = &handler{mux: mux}
	if o.leadership != nil {
		api = routeToLeader(o.leadership, o.security, api)
	}
	secured := o.security.Authenticator != nil || o.security.ForwardKey != nil
	if secured {
		api = authenticate(o.security, o.logger, api)
	}
	h := canonicalPaths(api)
	h = clientWrites(o.audit, o.logger, o.security, o.leadership, h)
	if secured {
		// Outermost: the layers between here and authenticate (the
		// audit trail, the write log) read the caller from the slot after
		// serving.
		h = callerSlot(h)
	}
	if o.metrics != nil {
		h = countRequests(o.metrics, forwardedBy(o.security), h)
	}
	return h
}

// anyMediaType are the operations of Kafka Connect's RootResource, which
// declares no media type it consumes: a request with any Content-Type
// reaches them.
// /readyz and /metrics, Sluice's, are probed like /health, and
// /openapi.json is read by the same tools.
var anyMediaType = map[string]bool{"server_info": true, "health": true, "readyz": true, "metrics": true, "openapi": true}

// handler puts the JSON error body on the answers ServeMux produces itself
// (404, 405), which Kafka Connect clients parse like any other error.
type handler struct {
	mux *http.ServeMux
}

// ServeHTTP implements http.Handler.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r = dotsAsNames(r)
	if _, pattern := h.mux.Handler(r); pattern != "" {
		h.mux.ServeHTTP(w, r)
		return
	}
	// No route: let the mux decide between 404 and 405 (with Allow). A
	// path it would redirect (to a cleaned or slash-ended form) is no path
	// of the API either: canonicalPaths and dotsAsNames leave none that
	// Jersey would route.
	rec := &recorder{header: http.Header{}}
	h.mux.ServeHTTP(rec, r)
	if rec.status != http.StatusMethodNotAllowed {
		writeError(w, jerseyError(http.StatusNotFound))
		return
	}
	w.Header().Set("Allow", rec.header.Get("Allow"))
	writeError(w, jerseyError(rec.status))
}

// jerseyError is the error Jersey raises for a status it produces before a
// resource method runs; its message is what Kafka Connect shows.
func jerseyError(status int) *api.Error {
	return &api.Error{Code: api.Code(status), Message: fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))}
}

// admit applies what Jersey checks after routing and before binding: a
// request sent as anything but JSON is refused (415), one whose
// Content-Type does not parse is a bad request (400). It also caps the
// body, so that a decoder reading it sees an *http.MaxBytesError past
// MaxBodyBytes.
//
// Only a present Content-Type is checked here (readJSON refuses a body
// without one), whatever the method and whether or not the route reads a
// body, as Jersey matches @Consumes on the header alone. checkMedia is
// false for routes that consume any media type.
func admit(checkMedia bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if checkMedia {
			if e := checkMediaType(r.Header.Get("Content-Type")); e != nil {
				writeError(w, e)
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// checkMediaType checks a Content-Type against @Consumes(application/json)
// as JAX-RS matches media types: wildcards match, parameters do not count,
// and application/<x>+json is another type.
func checkMediaType(ct string) *api.Error {
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	typ, sub, _ := strings.Cut(mt, "/")
	if err != nil || typ == "" || sub == "" {
		return api.Errorf(api.CodeBadRequest, "Invalid Content-Type header %q", ct)
	}
	if (typ != "*" && typ != "application") || (sub != "*" && sub != "json") {
		return jerseyError(http.StatusUnsupportedMediaType)
	}
	return nil
}

// recorder captures what ServeMux answers for an unrouted request.
type recorder struct {
	header http.Header
	status int
}

// Header implements http.ResponseWriter.
func (r *recorder) Header() http.Header { return r.header }

// WriteHeader implements http.ResponseWriter; the first status wins.
func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

// Write implements http.ResponseWriter; the body is not kept.
func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return len(b), nil
}
