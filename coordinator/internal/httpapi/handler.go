package httpapi

import (
	"bytes"
	"fmt"
	"log/slog"
	"mime"
	"net/http"

	kithttp "github.com/go-kit/kit/transport/http"

	v1 "github.com/sluice-io/sluice/api/v1"
)

// MaxBodyBytes is the largest request body accepted (spec §0: larger bodies
// get 413 instead of being read).
const MaxBodyBytes = 8 << 20

// Option configures NewHandler.
type Option func(*options)

type options struct {
	logger     *slog.Logger
	leadership Leadership
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

// NewHandler serves the Kafka Connect REST API (spec §3, §5) on top of svc.
//
// Request flow:
//
//	request ─► routing (ServeMux) ──no route──► 404 / 405 JSON error
//	              │
//	              ▼
//	           admit: media type (415), body limit (413 on read)
//	              │
//	              ▼
//	           go-kit server: decode ─► logging ─► endpoint ─► Service
//	              │                                   │
//	              ▼                                   ▼
//	           encodeError (every non-2xx)        per-route encoder
func NewHandler(svc Service, opts ...Option) http.Handler {
	o := options{logger: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		opt(&o)
	}
	mux := http.NewServeMux()
	serverOpts := []kithttp.ServerOption{
		kithttp.ServerErrorEncoder(encodeError),
		kithttp.ServerBefore(putBaseURL),
	}
	for _, rt := range routes() {
		ep := logging(o.logger, rt.op)(rt.endpoint(svc))
		srv := kithttp.NewServer(ep, rt.decode, rt.encode, serverOpts...)
		mux.Handle(rt.pattern, admit(srv))
	}
	var api http.Handler = &handler{mux: mux}
	if o.leadership != nil {
		api = routeToLeader(o.leadership, api)
	}
	return api
}

// handler puts the JSON error body on the answers ServeMux produces itself
// (404, 405), which Kafka Connect clients parse like any other error.
type handler struct {
	mux *http.ServeMux
}

// ServeHTTP implements http.Handler.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, pattern := h.mux.Handler(r); pattern != "" {
		h.mux.ServeHTTP(w, r)
		return
	}
	// No route: let the mux decide what it would answer (404, 405 with
	// Allow, or a redirect to a cleaned path), then rewrite error answers.
	rec := &recorder{header: http.Header{}}
	h.mux.ServeHTTP(rec, r)
	if rec.status >= 400 {
		if allow := rec.header.Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		writeError(w, jerseyError(rec.status))
		return
	}
	for k, vs := range rec.header {
		w.Header()[k] = vs
	}
	w.WriteHeader(rec.status)
	_, _ = w.Write(rec.body.Bytes())
}

// jerseyError is the error Jersey raises for a status it produces before a
// resource method runs; its message is what Kafka Connect shows.
func jerseyError(status int) *v1.Error {
	return &v1.Error{Code: v1.Code(status), Message: fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))}
}

// admit applies what Jersey checks after routing and before binding: a body
// sent as anything but JSON is refused. It also caps the body, so that a
// decoder reading it sees an *http.MaxBytesError past MaxBodyBytes.
//
// Only a present Content-Type is checked (a missing one is accepted, as in
// Jersey), whether or not the route reads a body, as Jersey matches
// @Consumes on the header alone.
func admit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
			if ct := r.Header.Get("Content-Type"); ct != "" {
				mt, _, err := mime.ParseMediaType(ct)
				if err != nil || mt != "application/json" {
					writeError(w, jerseyError(http.StatusUnsupportedMediaType))
					return
				}
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// recorder captures what ServeMux answers for an unrouted request.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

// Header implements http.ResponseWriter.
func (r *recorder) Header() http.Header { return r.header }

// WriteHeader implements http.ResponseWriter; the first status wins.
func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

// Write implements http.ResponseWriter.
func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}
