package httpapi

// The generator of api/openapi.json: the route table (methods, paths,
// roles, probes), opDocs (summaries, parameters, bodies, answers,
// examples), routeErrorStatuses (the error answers) and the Go types
// (schemas). TestOpenAPIDocument fails when the committed document differs
// from what it makes; -update-openapi (go generate) rewrites it.

//go:generate go test -run TestOpenAPIDocument -update-openapi .

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/reqctx"
)

var updateOpenAPI = flag.Bool("update-openapi", false, "rewrite api/openapi.json from the route table and the api types")

// routePath is the OpenAPI path of a route: its pattern's path, {$} off.
func routePath(rt route) (method, path string) {
	method, path, _ = strings.Cut(rt.pattern, " ")
	return method, strings.Replace(path, "{$}", "", 1)
}

// forwardedToLeader reports whether a follower forwards the route's
// requests to the leader (routeToLeader): every write (a log level with
// ?scope=cluster), and the reads only the leader can answer (leaderRead).
func forwardedToLeader(rt route) bool {
	method, path := routePath(rt)
	if method != http.MethodGet {
		return true
	}
	return leaderRead(httptest.NewRequest(method, strings.NewReplacer("{id}", "x", "{name}", "x").Replace(path), nil))
}

// readsBody reports whether the operation reads a request body.
func readsBody(d opDoc) bool { return d.body != nil || d.bodySchema != nil }

// routeErrorStatuses are the error statuses route rt answers with the
// ErrorBody: those every route of its kind gives, and its own (opDoc.errs),
// but for the statuses that are success answers of its own (GET /health's
// 500 and 503).
//
//   - 401 and 403: with REST authentication, every route (also a probe:
//     open only with --rest-auth-open-probes).
//   - 400 and 415: a route that takes only JSON (not anyMediaType), for a
//     Content-Type that does not parse or is not JSON; a body's JSON.
//   - 408 and 413: a route that reads a body, past its time or size.
//   - 409: a route forwarded to the leader, while none is known.
//   - 500: every route that calls a service, for an unexpected failure.
//   - 503: a route not answered at once while the coordinator starts, and
//     a write gated by the brokers (WithBrokerGate).
func routeErrorStatuses(rt route) []int {
	d := opDocs[rt.op]
	_, path := routePath(rt)
	set := map[int]bool{http.StatusUnauthorized: true, http.StatusForbidden: true}
	if !anyMediaType[rt.op] {
		set[http.StatusBadRequest], set[http.StatusUnsupportedMediaType] = true, true
	}
	if readsBody(d) {
		set[http.StatusBadRequest], set[http.StatusRequestTimeout], set[http.StatusRequestEntityTooLarge] = true, true, true
		set[http.StatusUnsupportedMediaType] = true
	}
	if forwardedToLeader(rt) {
		set[http.StatusConflict] = true
	}
	if rt.op != "openapi" {
		set[http.StatusInternalServerError] = true
	}
	if !answeredAtOnce[path] || gatedByBrokers(rt) {
		set[http.StatusServiceUnavailable] = true
	}
	for _, s := range d.errs {
		set[s] = true
	}
	for _, ok := range d.ok {
		delete(set, ok.status)
	}
	var out []int
	for s := range set {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// errorAnswers describe each error status, with an example body.
var errorAnswers = map[int]struct{ desc, example string }{
	400: {"Bad request: a path, Content-Type, query parameter or body that is refused, or a request the connector's state or config does not allow.", "Invalid JSON in request body: unexpected end of JSON input"},
	401: {"No credentials, or credentials refused (with REST authentication on); WWW-Authenticate names the schemes.", "Authentication required: no credentials were sent (send HTTP Basic or a bearer token)"},
	403: {"The caller lacks the route's role (x-sluice-role), or its grants do not cover the connector.", "User vera may not DELETE /connectors/orders-src: the role admin is needed, and vera has viewer"},
	404: {"Not found: the connector, task, plugin, logger, window, rollout, agent roll, agent or history entry named.", "Connector orders-src not found"},
	408: {"The request body did not arrive in time (--rest-read-body-timeout).", "Request body not received in time (limit 30s)"},
	409: {"Conflict: no known leader to forward to, a concurrent change, or a state that does not allow the request.", "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."},
	413: {"The request body is over 8 MiB, or a list or config over its limit.", "Request body too large (limit 8 MiB)"},
	415: {"A Content-Type other than JSON, or a body without one.", "HTTP 415 Unsupported Media Type"},
	500: {"An unexpected failure, or a forward to the leader that failed after it was sent.", "Request timed out"},
	503: {"The coordinator is still starting, or cannot reach Kafka or any agent; safe to retry.", "Worker is still starting up."},
}

// errorRef is the reference to the error answer of status.
func errorRef(status int) map[string]any {
	return map[string]any{"$ref": fmt.Sprintf("#/components/responses/Error%d", status)}
}

// openAPIDoc makes the document, and the component types by name.
func openAPIDoc() (map[string]any, map[string]reflect.Type, error) {
	docs, err := readTypeDocs()
	if err != nil {
		return nil, nil, err
	}
	g := newSchemaGen(docs)
	paths := map[string]any{}
	for _, rt := range routes() {
		d, ok := opDocs[rt.op]
		if !ok {
			return nil, nil, fmt.Errorf("route %s (%s) has no opDocs entry", rt.pattern, rt.op)
		}
		method, path := routePath(rt)
		item, _ := paths[path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[path] = item
		}
		item[strings.ToLower(method)] = operation(g, rt, d, path)
	}
	responses := map[string]any{}
	for status, e := range errorAnswers {
		r := map[string]any{"description": e.desc, "content": map[string]any{"application/json": map[string]any{
			"schema": g.schema(reflect.TypeFor[api.ErrorBody]()), "example": errorBodyExample{ErrorCode: status, Message: e.example}}}}
		if status == http.StatusUnauthorized {
			r["headers"] = map[string]any{"WWW-Authenticate": map[string]any{"description": "The schemes to authenticate with (Basic, Bearer).", "schema": map[string]any{"type": "string"}}}
		}
		responses[fmt.Sprintf("Error%d", status)] = r
	}
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "Sluice REST API", "version": "1",
			"description": "The Kafka Connect REST API (distributed mode) as Sluice serves it, and Sluice's own endpoints under /sluice/. " +
				"Every error answer is {\"error_code\": <status>, \"message\": \"...\"}. " +
				"Without REST authentication every operation is open. With it, every operation needs credentials (Basic, a bearer token or JWT, or a client certificate) " +
				"and the caller needs the operation's least role, x-sluice-role (viewer < operator < admin); where x-sluice-connector-scoped is true, " +
				"the caller's grants must cover the connector. Operations with x-sluice-open-probe are open without credentials when the coordinators run with --rest-auth-open-probes. " +
				"Any coordinator answers; a follower forwards the operations with x-sluice-forwarded-to-leader to the leader.",
			"license": map[string]any{"name": "Apache-2.0", "identifier": "Apache-2.0"}},
		"servers":  []any{map[string]any{"url": "http://localhost:8083", "description": "A coordinator (sluice dev, make run)."}},
		"tags":     []any{tag("kafka-connect", "Kafka Connect's endpoints."), tag("sluice", "Sluice's own endpoints."), tag("health", "Health, readiness, metrics and this document.")},
		"security": authAlternatives(false),
		"paths":    paths,
		"components": map[string]any{
			"schemas":   g.comps,
			"responses": responses,
			"securitySchemes": map[string]any{
				"basicAuth":  map[string]any{"type": "http", "scheme": "basic", "description": "A principal of the auth file (--rest-auth-file) and its password."},
				"bearerAuth": map[string]any{"type": "http", "scheme": "bearer", "description": "A token of the auth file, or a JWT verified against --rest-jwt-jwks."},
				"mutualTLS":  map[string]any{"type": "mutualTLS", "description": "A client certificate verified against --rest-tls-client-ca, naming a principal of the auth file."},
			},
		},
	}
	return doc, g.types, nil
}

// errorBodyExample is api.ErrorBody with a message that is never null, for
// the examples.
type errorBodyExample struct {
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
}

func tag(name, desc string) map[string]any { return map[string]any{"name": name, "description": desc} }

// authAlternatives are an operation's security requirements: any of the
// three kinds of credentials, or (open) none.
func authAlternatives(open bool) []any {
	alts := []any{map[string]any{"basicAuth": []any{}}, map[string]any{"bearerAuth": []any{}}, map[string]any{"mutualTLS": []any{}}}
	if open {
		alts = append(alts, map[string]any{})
	}
	return alts
}

// operation is the Operation Object of route rt.
func operation(g *schemaGen, rt route, d opDoc, path string) map[string]any {
	op := map[string]any{
		"operationId":                  rt.op,
		"summary":                      d.summary,
		"tags":                         []any{opTag(path)},
		"x-sluice-role":                rt.role.String(),
		"x-sluice-connector-scoped":    rt.connectorScoped(),
		"x-sluice-open-probe":          probeOps[rt.op],
		"x-sluice-forwarded-to-leader": forwardedToLeader(rt),
		"security":                     authAlternatives(probeOps[rt.op]),
	}
	if d.desc != "" {
		op["description"] = d.desc
	}
	var params []any
	for _, name := range pathParams(path) {
		params = append(params, map[string]any{"name": name, "in": "path", "required": true,
			"description": pathParamDesc(path, name), "schema": pathParamSchema(name)})
	}
	for _, q := range d.query {
		params = append(params, map[string]any{"name": q.name, "in": "query", "description": q.desc, "schema": q.schema})
	}
	if d.reason {
		params = append(params, map[string]any{"name": reqctx.ReasonHeader, "in": "header",
			"description": "Why the change is made: kept with it in the offsets history (cut to 1024 bytes).",
			"schema":      map[string]any{"type": "string", "maxLength": reqctx.MaxReasonBytes}})
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	switch {
	case d.body != nil:
		op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{
			"schema": g.schema(reflect.TypeOf(d.body)), "example": d.body}}}
	case d.bodySchema != nil:
		op["requestBody"] = map[string]any{"required": false, "content": map[string]any{"application/json": map[string]any{"schema": d.bodySchema}}}
	}
	responses := map[string]any{}
	for _, ok := range d.ok {
		responses[fmt.Sprint(ok.status)] = okResponse(g, ok)
	}
	for _, s := range routeErrorStatuses(rt) {
		responses[fmt.Sprint(s)] = errorRef(s)
	}
	op["responses"] = responses
	return op
}

// okResponse is the Response Object of a success answer.
func okResponse(g *schemaGen, ok okAnswer) map[string]any {
	r := map[string]any{"description": ok.desc}
	if ok.location {
		r["headers"] = map[string]any{"Location": map[string]any{"description": "Where the new resource is.",
			"schema": map[string]any{"type": "string", "format": "uri-reference"}}}
	}
	switch {
	case ok.text:
		r["content"] = map[string]any{"text/plain": map[string]any{"schema": map[string]any{"type": "string"}, "example": ok.example}}
	case ok.raw != nil:
		r["content"] = map[string]any{"application/json": map[string]any{"schema": ok.raw}}
	case ok.named != nil:
		var alts []any
		for _, a := range ok.alts {
			alts = append(alts, g.schema(reflect.TypeOf(a)))
		}
		examples := map[string]any{}
		for name, v := range ok.named {
			examples[name] = map[string]any{"value": v}
		}
		r["content"] = map[string]any{"application/json": map[string]any{"schema": map[string]any{"oneOf": alts}, "examples": examples}}
	case ok.example != nil:
		r["content"] = map[string]any{"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(ok.example)), "example": ok.example}}
	}
	return r
}

// opTag is the tag of an operation on path.
func opTag(path string) string {
	switch {
	case strings.HasPrefix(path, "/sluice/"):
		return "sluice"
	case path == "/" || path == "/health" || path == "/readyz" || path == "/metrics" || path == openAPIPath:
		return "health"
	}
	return "kafka-connect"
}

// pathParams are the names of path's {wildcards}, in order.
func pathParams(path string) []string {
	var names []string
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			names = append(names, strings.Trim(seg, "{}"))
		}
	}
	return names
}

func pathParamSchema(name string) map[string]any {
	if name == "task" {
		return map[string]any{"type": "integer", "format": "int32"}
	}
	return map[string]any{"type": "string"}
}

// pathParamDesc describes one path parameter.
func pathParamDesc(path, name string) string {
	switch {
	case name == "task":
		return "The task's number."
	case name == "plugin":
		return "The plugin's class name or alias."
	case name == "name" && strings.HasPrefix(path, "/admin/loggers/"):
		return "A logger's name (root in any case for the root logger)."
	case name == "name":
		return "The connector's name, escaped as one path segment (a/b is a%2Fb)."
	case strings.Contains(path, "/history/"):
		return "An offsets history entry's id, such as 1796119200123-c98a176d316d2399."
	case strings.HasPrefix(path, "/sluice/agents/"):
		return "The agent's id."
	case strings.HasPrefix(path, "/sluice/maintenance/"):
		return "The maintenance window's id."
	case strings.HasPrefix(path, "/sluice/rollouts/"):
		return "The rollout's id."
	case strings.HasPrefix(path, "/sluice/fleet/rolls/"):
		return "The agent roll's id."
	}
	return name
}

// marshalOpenAPI is the document as the committed file holds it.
func marshalOpenAPI(doc map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encoding the OpenAPI document: %w", err)
	}
	return buf.Bytes(), nil
}
