package httpapi

// Request decoders: one per route shape. They read path values, query
// parameters and bodies, and run the checks Kafka Connect's resource classes
// make before calling the herder; everything else is the services'.

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/api"
)

type nameRequest struct{ name string }

type taskRequest struct {
	name string
	task int
}

type listRequest struct {
	expand       bool // any expand parameter, even unknown or empty
	status, info bool
}

type putConfigRequest struct {
	name   string
	config map[string]string
}

type patchConfigRequest struct {
	name  string
	patch map[string]*string
}

type restartRequest struct {
	name                     string
	includeTasks, onlyFailed bool
}

type deleteRequest struct {
	name         string
	resetOffsets bool
}

type pluginsRequest struct{ connectorsOnly bool }

// pluginRequest names a plugin, and the version of it asked for (empty:
// none; Kafka Connect 4.1's ?version=).
type pluginRequest struct{ plugin, version string }

type validateRequest struct {
	plugin string
	config map[string]string
}

type alterOffsetsRequest struct {
	name    string
	offsets []api.ConnectorOffset
}

// Messages of the checks made here, before the services (spec §0, §5.2).
const (
	msgConfigNull     = "Connector config must not be null"
	msgOffsetsMissing = "Partitions / offsets need to be provided for an alter offsets request"
	msgOffsetNull     = "Offset entries must not be null"
)

func badRequest(msg string) *api.Error { return &api.Error{Code: api.CodeBadRequest, Message: msg} }

func decodeNone(context.Context, *http.Request) (any, error) { return nil, nil }

func decodeName(_ context.Context, r *http.Request) (any, error) {
	return nameRequest{name: r.PathValue("name")}, nil
}

func decodeTask(_ context.Context, r *http.Request) (any, error) {
	// JAX-RS binds {task} to an Integer; a value that does not convert makes
	// the path not match, hence Jersey's 404 rather than a 400.
	task, err := strconv.ParseInt(r.PathValue("task"), 10, 32)
	if err != nil {
		return nil, jerseyError(http.StatusNotFound)
	}
	return taskRequest{name: r.PathValue("name"), task: int(task)}, nil
}

func decodeList(_ context.Context, r *http.Request) (any, error) {
	expand, ok := r.URL.Query()["expand"]
	req := listRequest{expand: ok}
	for _, e := range expand {
		// Case-sensitive, as upstream's switch; others are ignored.
		switch e {
		case "status":
			req.status = true
		case "info":
			req.info = true
		}
	}
	return req, nil
}

func decodeCreate(_ context.Context, r *http.Request) (any, error) {
	body, err := readJSON(r)
	if err != nil {
		return nil, err
	}
	var req api.CreateConnectorRequest
	var nullOffset bool
	err = fieldSet{
		"name": stringField("name", &req.Name),
		"config": func(v any) (err error) {
			req.Config = nil
			if v != nil {
				req.Config, err = stringMap("config", "config.", v)
			}
			return err
		},
		"initial_state":   stringField("initial_state", &req.InitialState),
		"initial_offsets": offsetList("initial_offsets", &req.InitialOffsets, &nullOffset),
	}.bind("", body)
	switch {
	case err != nil:
		return nil, err
	case req.Config == nil: // absent binds to null too
		return nil, badRequest(msgConfigNull)
	case nullOffset:
		return nil, badRequest(msgOffsetNull)
	}
	// Trimmed here, as the herder names the connector, so that the grants
	// are checked against the name that is created.
	req.Name = api.TrimName(req.Name)
	return req, nil
}

// readConfigMap reads a body that is a flat config map.
func readConfigMap(r *http.Request) (map[string]string, error) {
	body, err := readJSON(r)
	if err != nil {
		return nil, err
	}
	return stringMap("", "", body)
}

func decodePutConfig(_ context.Context, r *http.Request) (any, error) {
	config, err := readConfigMap(r)
	if err != nil {
		return nil, err
	}
	return putConfigRequest{name: r.PathValue("name"), config: config}, nil
}

func decodePatchConfig(_ context.Context, r *http.Request) (any, error) {
	body, err := readJSON(r)
	if err != nil {
		return nil, err
	}
	patch, err := patchMap(body)
	if err != nil {
		return nil, err
	}
	return patchConfigRequest{name: r.PathValue("name"), patch: patch}, nil
}

func decodeRestart(_ context.Context, r *http.Request) (any, error) {
	q := r.URL.Query()
	return restartRequest{
		name:         r.PathValue("name"),
		includeTasks: queryBool(q, "includeTasks", false),
		onlyFailed:   queryBool(q, "onlyFailed", false),
	}, nil
}

func decodeDelete(_ context.Context, r *http.Request) (any, error) {
	return deleteRequest{
		name:         r.PathValue("name"),
		resetOffsets: queryBool(r.URL.Query(), "reset_offsets", false),
	}, nil
}

func decodePlugins(_ context.Context, r *http.Request) (any, error) {
	return pluginsRequest{connectorsOnly: queryBool(r.URL.Query(), "connectorsOnly", true)}, nil
}

func decodePlugin(_ context.Context, r *http.Request) (any, error) {
	return pluginRequest{plugin: r.PathValue("plugin"), version: r.URL.Query().Get("version")}, nil
}

func decodeValidate(_ context.Context, r *http.Request) (any, error) {
	config, err := readConfigMap(r)
	if err != nil {
		return nil, err
	}
	return validateRequest{plugin: r.PathValue("plugin"), config: config}, nil
}

func decodeAlterOffsets(_ context.Context, r *http.Request) (any, error) {
	body, err := readJSON(r)
	if err != nil {
		return nil, err
	}
	var offsets []api.ConnectorOffset
	var nullOffset bool
	err = fieldSet{"offsets": offsetList("offsets", &offsets, &nullOffset)}.bind("", body)
	switch {
	case err != nil:
		return nil, err
	// Both checks precede the connector lookup (spec §5.2 step 2), so an
	// unknown connector with an empty body is a 400, not a 404.
	case len(offsets) == 0:
		return nil, badRequest(msgOffsetsMissing)
	case nullOffset:
		return nil, badRequest(msgOffsetNull)
	}
	return alterOffsetsRequest{name: r.PathValue("name"), offsets: offsets}, nil
}

// queryBool reads a boolean query parameter as Jersey does for a boolean
// with a @DefaultValue: the first value counts; a missing or blank one means
// def; otherwise Boolean.valueOf, so only a case-insensitive "true" is true
// and anything else, even "yes" or " true", is false.
func queryBool(q url.Values, key string, def bool) bool {
	vs := q[key]
	if len(vs) == 0 || strings.TrimFunc(vs[0], isJavaSpace) == "" {
		return def
	}
	return strings.EqualFold(vs[0], "true")
}

// isJavaSpace is what Java's String.trim removes.
func isJavaSpace(r rune) bool { return r <= ' ' }
