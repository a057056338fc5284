package httpapi

// /admin/loggers (KIP-495, KIP-976), answered as Kafka Connect 4.4's
// LoggingResource answers: its checks, in its order, and its messages.

import (
	"context"
	"net/http"
	"strings"

	"github.com/go-kit/kit/endpoint"

	"github.com/sluice-io/sluice/api"
	sluicelog "github.com/sluice-io/sluice/shared/logging"
)

// Messages of PUT /admin/loggers/{name}. An empty level is log4j's
// IllegalArgumentException, which Kafka Connect answers as a 500.
const (
	msgLevelMissing = "Desired 'level' parameter was not specified in request."
	msgLevelEmpty   = "Illegal null or empty Level name."
)

type setLoggerRequest struct {
	name, level string
	cluster     bool
}

type setLoggerResponse struct {
	changed []string
	cluster bool
}

// clusterScope reads PUT /admin/loggers/{name}'s ?scope= as Kafka Connect
// does: "cluster" in any case is every coordinator and agent of the
// cluster; anything else — absent, empty, "worker" or unknown — is the
// coordinator that received the request (an unknown scope falls back to
// it, not an error).
func clusterScope(r *http.Request) bool {
	return strings.ToLower(r.URL.Query().Get("scope")) == "cluster"
}

// decodeSetLoggerLevel binds the body as Kafka Connect's Map<String,String>
// — any member is allowed, scalars are coerced to strings, null is absent —
// and checks the level.
func decodeSetLoggerLevel(_ context.Context, r *http.Request) (any, error) {
	body, err := readJSON(r)
	if err != nil {
		return nil, err
	}
	obj, ok := body.(jsonObject)
	if !ok {
		return nil, errWrongType("", "object")
	}
	var level *string
	for _, m := range obj {
		var s *string
		if m.value != nil {
			text, ok := scalarText(m.value)
			if !ok {
				return nil, errWrongType(m.key, "string")
			}
			s = &text
		}
		if m.key == "level" {
			level = s // a repeated member replaces the earlier one
		}
	}
	switch {
	case level == nil:
		return nil, badRequest(msgLevelMissing)
	case *level == "":
		return nil, &api.Error{Code: api.CodeInternal, Message: msgLevelEmpty}
	}
	if _, _, ok := sluicelog.ParseLevel(*level); !ok {
		return nil, api.Errorf(api.CodeNotFound, "invalid log level '%s'.", *level)
	}
	return setLoggerRequest{name: r.PathValue("name"), level: *level, cluster: clusterScope(r)}, nil
}

func makeListLoggers(svc Admin) endpoint.Endpoint {
	return func(ctx context.Context, _ any) (any, error) {
		levels, err := svc.LoggerLevels(ctx)
		return nonNilMap(levels), err
	}
}

func makeGetLogger(svc Admin) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		return svc.LoggerLevel(ctx, request.(nameRequest).name)
	}
}

func makeSetLoggerLevel(svc Admin) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(setLoggerRequest)
		if req.cluster {
			return setLoggerResponse{cluster: true}, svc.SetClusterLoggerLevel(ctx, req.name, req.level)
		}
		changed, err := svc.SetWorkerLoggerLevel(ctx, req.name, req.level)
		return setLoggerResponse{changed: nonNil(changed)}, err
	}
}

// encodeSetLoggerLevel: the worker scope answers 200 with the names of the
// loggers whose level changed, the cluster scope 204.
func encodeSetLoggerLevel(_ context.Context, w http.ResponseWriter, response any) error {
	resp := response.(setLoggerResponse)
	if resp.cluster {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return writeJSON(w, http.StatusOK, resp.changed)
}

// servedHere reports whether a write is answered by the coordinator that
// received it rather than the leader: a worker-scope log level changes the
// process the request reached, as in Kafka Connect.
func servedHere(r *http.Request) bool {
	return r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/admin/loggers/") && !clusterScope(r)
}
