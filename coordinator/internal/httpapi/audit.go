package httpapi

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/audit"
	"github.com/sluice-io/sluice/coordinator/internal/auth"
)

// Recorder takes the audit record of each REST write; its Write returns
// once the record is written or a short bound passed (audit.Log).
type Recorder interface {
	Write(rec api.AuditRecord)
}

// ConnectorStates reads a connector's state from this coordinator's config
// store, for the audit records' before and after.
type ConnectorStates interface {
	// ConnectorState is the connector's config and target state as
	// stored (STARTED, PAUSED, STOPPED); ok is false when it does not
	// exist, or the coordinator has not started.
	ConnectorState(name string) (config map[string]string, targetState string, ok bool)
}

// Audit configures the audit trail of REST writes (WithAudit).
type Audit struct {
	// Recorder takes the records; required.
	Recorder Recorder
	// States reads before and after; required.
	States ConnectorStates
	// Principal names the caller of a request (nil: the caller that
	// authentication found, else audit.Anonymous). It is asked after the
	// request was served, with the request as it arrived.
	Principal func(*http.Request) string
	// Forwarded reports whether a request was forwarded by another
	// coordinator, which recorded it already. nil: with a forward key,
	// only a forward whose signed identity verifies; with authentication
	// but no forward key, never (a follower's forward is then recorded
	// twice rather than a client's forged marker hiding a write); with no
	// security, a request that carries ForwardedHeader.
	Forwarded func(*http.Request) bool
	// Mask masks the configs recorded (nil: shown as they are).
	Mask audit.Mask
	// Coordinator is this coordinator's REST address, recorded with each
	// write it receives.
	Coordinator string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// WithAudit records every write (every request but GET and HEAD) the
// coordinator receives from a client, refused ones included, to a.Recorder
// before its answer goes out.
func WithAudit(a Audit) Option {
	return func(o *options) { o.audit = &a }
}

// auditOp is what an audit record says of a route.
type auditOp struct {
	name      string // the record's operation
	connector bool   // the route's {name} is a connector
}

// auditOps are the write routes by their op: each has a short name, and
// routes_test checks that none is missing.
var auditOps = map[string]auditOp{
	"create_connector":       {"connector.create", true},
	"delete_connector":       {"connector.delete", true},
	"put_connector_config":   {"connector.config", true},
	"patch_connector_config": {"connector.config.patch", true},
	"restart_task":           {"task.restart", true},
	"stop_connector":         {"connector.stop", true},
	"pause_connector":        {"connector.pause", true},
	"resume_connector":       {"connector.resume", true},
	"restart_connector":      {"connector.restart", true},
	"reset_connector_topics": {"topics.reset", true},
	"migrate":                {"connectors.migrate", false},
	"bulk_pause":             {"connectors.pause", false},
	"bulk_resume":            {"connectors.resume", false},
	"bulk_stop":              {"connectors.stop", false},
	"bulk_restart":           {"connectors.restart", false},
	"open_maintenance":       {"maintenance.open", false},
	"close_maintenance":      {"maintenance.close", false},
	"alter_offsets":          {"offsets.alter", true},
	"reset_offsets":          {"offsets.reset", true},
	"preview_offsets":        {"offsets.preview", true},
	"reset_offsets_to":       {"offsets.reset-to", true},
	"restore_offsets":        {"offsets.restore", true},
	"undo_offsets":           {"offsets.undo", true},
	"move_connector":         {"connector.move", true},
	"restore_config":         {"connector.config.restore", true},
	"send_signal":            {"connector.signal", true},
	"cordon_agent":           {"agent.cordon", false},
	"uncordon_agent":         {"agent.uncordon", false},
	"drain_agent":            {"agent.drain", false},
	"rebalance":              {"fleet.rebalance", false},
	"create_agent_roll":      {"fleet.roll", false},
	"pause_agent_roll":       {"fleet.roll.pause", false},
	"resume_agent_roll":      {"fleet.roll.resume", false},
	"abort_agent_roll":       {"fleet.roll.abort", false},
	"create_rollout":         {"rollout.create", false},
	"pause_rollout":          {"rollout.pause", false},
	"resume_rollout":         {"rollout.resume", false},
	"abort_rollout":          {"rollout.abort", false},
	"validate_config":        {"plugin.validate", false},
	"set_logger_level":       {"logger.level", false},
}

// clientWrites is the outermost layer of the API: it sees every write a
// client sends this coordinator, records it in the audit trail (a, when
// auditing is on) and logs a successful one (writeLog):
//
//	GET, HEAD, or forwarded by a coordinator (which recorded it) ─► serve
//	write ─► route and connector ─► before ─► serve into a buffer
//	      ─► after ─► record (bounded wait) ─► log ─► answer the client
//
// A follower catches up with the config topic before it reads before and
// after, so both are the leader's state (after: once the write applied).
// A write is seen where the client sent it, not where it is executed, so
// that it is recorded and logged once, with the caller as it arrived.
func clientWrites(a *Audit, logger *slog.Logger, sec Security, lead Leadership, next http.Handler) http.Handler {
	var cfg Audit
	if a != nil {
		cfg = *a
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Principal == nil {
		cfg.Principal = func(r *http.Request) string {
			if name, ok := auth.PrincipalFrom(r.Context()); ok {
				return name
			}
			return audit.Anonymous
		}
	}
	if cfg.Forwarded == nil {
		cfg.Forwarded = forwardedBy(sec)
	}
	match := newRouteMatcher()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead || cfg.Forwarded(r) {
			next.ServeHTTP(w, r)
			return
		}
		in := audit.Input{
			Time: cfg.Now(), Source: r.RemoteAddr, Coordinator: cfg.Coordinator,
			Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery,
		}
		op, name := match.match(r)
		in.Operation = auditOps[op].name
		switch {
		case op == "create_connector":
			name, r = createName(r)
		case !auditOps[op].connector:
			name = ""
		}
		in.Connector = name
		if a != nil {
			catchUp(r.Context(), lead)
			in.Before = snapshot(cfg.States, name)
		}
		buf := &bufferedWriter{ResponseWriter: w}
		next.ServeHTTP(buf, r)
		in.Status, in.Body = buf.code(), buf.body.Bytes()
		// Asked once the request was served, so that an authentication
		// layer inside has seen it (a refused caller is recorded too).
		in.Principal = cfg.Principal(r)
		if a != nil {
			// A follower caught up after a forwarded 2xx already
			// (routeToLeader); a leader's write is applied when answered.
			in.After = snapshot(cfg.States, name)
			cfg.Recorder.Write(audit.Build(in, cfg.Mask))
		}
		logWrite(r.Context(), logger, in, cfg.Now().Sub(in.Time))
		buf.flush()
	})
}

// catchUp makes a follower read the config topic to its end, as it does
// before a read, bounded the same way: a stale record beats none.
func catchUp(ctx context.Context, lead Leadership) {
	if lead == nil || !lead.Ready() {
		return
	}
	if leading, _ := lead.Leader(); leading {
		return // the leader's writes are applied before they answer
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = lead.CatchUp(ctx)
}

// snapshot is the connector's state, nil when it does not exist.
func snapshot(states ConnectorStates, name string) *audit.Snapshot {
	if name == "" {
		return nil
	}
	config, target, ok := states.ConnectorState(name)
	if !ok {
		return nil
	}
	return &audit.Snapshot{Config: config, TargetState: target}
}

// createName is the connector name a create's body gives ("" when it gives
// none), and r with its body put back to be read again. The body is read
// up to the largest one accepted; the rest, or the error that ended the
// read, follows what was read, so the layers inside answer as they would.
func createName(r *http.Request) (string, *http.Request) {
	data, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	r2 := new(http.Request)
	*r2 = *r
	r2.Body = &replayBody{Reader: io.MultiReader(bytes.NewReader(data), errOrRest(err, r.Body)), orig: r.Body}
	return bodyName(data), r2
}

// bodyName is the name a create's body gives, read as the create's decoder
// reads it (decodeCreate): the member named exactly "name" (the last one,
// when repeated), a scalar, trimmed as the herder trims it. A body that is
// not a JSON object names no connector.
func bodyName(data []byte) string {
	tree, err := parseJSON(data)
	obj, ok := tree.(jsonObject)
	if err != nil || !ok {
		return ""
	}
	name := ""
	for _, m := range obj {
		if s, ok := scalarText(m.value); ok && m.key == "name" {
			name = api.TrimName(s)
		}
	}
	return name
}

// errOrRest is what follows the part of a body read: the error that ended
// the read, else the rest of the body.
func errOrRest(err error, rest io.Reader) io.Reader {
	if err != nil {
		return errReader{err}
	}
	return rest
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// replayBody is a request body read once already, being read again.
type replayBody struct {
	io.Reader
	orig io.ReadCloser
}

// Close implements io.Closer.
func (b *replayBody) Close() error { return b.orig.Close() }

// bufferedWriter holds an answer back until its audit record is written:
// a client that got its answer finds the record in the topic (writes'
// answers are small). Headers go to the real writer's map at once.
type bufferedWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

// WriteHeader implements http.ResponseWriter; the first status wins.
func (b *bufferedWriter) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

// Write implements http.ResponseWriter.
func (b *bufferedWriter) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}

// FlushError makes an http.ResponseController's flush a no-op: the answer
// is held until its record is written, head included.
func (b *bufferedWriter) FlushError() error { return nil }

// Unwrap gives http.ResponseController the connection's writer, for read
// deadlines.
func (b *bufferedWriter) Unwrap() http.ResponseWriter { return b.ResponseWriter }

func (b *bufferedWriter) code() int {
	if b.status == 0 {
		return http.StatusOK
	}
	return b.status
}

// flush sends the answer held back.
func (b *bufferedWriter) flush() {
	b.ResponseWriter.WriteHeader(b.code())
	_, _ = b.ResponseWriter.Write(b.body.Bytes())
}

// routeMatcher tells which route of the API a request goes to, and its
// {name}, without serving it: the audit record is made where the request
// arrives, also when a follower forwards it to the leader.
type routeMatcher struct{ mux *http.ServeMux }

func newRouteMatcher() *routeMatcher {
	mux := http.NewServeMux()
	for _, rt := range routes() {
		op := rt.op
		mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) {
			if m, ok := w.(*matched); ok {
				m.op, m.name = op, r.PathValue("name")
			}
		})
	}
	return &routeMatcher{mux: mux}
}

// match is r's route op and {name} path value; "" for no route.
func (m *routeMatcher) match(r *http.Request) (op, name string) {
	r, e := canonical(r)
	if e != nil {
		return "", ""
	}
	r = dotsAsNames(r)
	if _, pattern := m.mux.Handler(r); pattern == "" {
		return "", ""
	}
	res := &matched{}
	m.mux.ServeHTTP(res, r)
	return res.op, res.name
}

// matched is the ResponseWriter routeMatcher's handlers write their route
// to; nothing is sent.
type matched struct {
	op, name string
}

func (*matched) Header() http.Header         { return http.Header{} }
func (*matched) Write(p []byte) (int, error) { return len(p), nil }
func (*matched) WriteHeader(int)             {}

// forwardedBy is how a coordinator tells a request another coordinator
// forwarded (and so counted, logged and recorded already): with a forward
// key, only a forward whose signed identity verifies; with authentication
// but no key, never (a forward is then counted twice rather than a
// client's forged marker hiding a request); with no security, a request
// that carries ForwardedHeader.
func forwardedBy(sec Security) func(*http.Request) bool {
	switch {
	case sec.ForwardKey != nil:
		return sec.ForwardKey.Forwarded
	case sec.Authenticator != nil:
		return func(*http.Request) bool { return false }
	default:
		return func(r *http.Request) bool { return r.Header.Get(ForwardedHeader) != "" }
	}
}
