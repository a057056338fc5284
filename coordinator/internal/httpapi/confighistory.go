package httpapi

// A connector's config history and its restore, under
// /sluice/connectors/{name}/config/history (docs/config-history.md).

import (
	"context"
	"net/http"
	"strconv"

	"github.com/go-kit/kit/endpoint"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/confighistory"
	"github.com/sluice-io/sluice/coordinator/internal/offsethistory"
)

// ConfigHistory is a connector's config history: every accepted change of
// its config, and the restore of one.
type ConfigHistory interface {
	// ConfigHistory answers GET /sluice/connectors/{name}/config/history;
	// limit is within the route's bounds.
	ConfigHistory(ctx context.Context, name string, limit int, before string) (api.ConfigHistory, error)
	// ConfigHistoryEntry answers GET …/config/history/{id}.
	ConfigHistoryEntry(ctx context.Context, name, id string) (api.ConfigHistoryEntry, error)
	// RestoreConfig answers POST …/config/history/{id}/restore.
	RestoreConfig(ctx context.Context, name, id string) (api.ConfigRestoreResult, error)
}

var onConfigHistory = on(func(s Services) ConfigHistory { return s.ConfigHistory })

type configHistoryRequest struct {
	name, before string
	limit        int
}

type configEntryRequest struct{ name, id string }

func decodeConfigHistory(_ context.Context, r *http.Request) (any, error) {
	q := r.URL.Query()
	if err := onlyParams(q, "GET …/config/history", "limit", "before"); err != nil {
		return nil, err
	}
	req := configHistoryRequest{name: r.PathValue("name"), limit: confighistory.DefaultLimit, before: q.Get("before")}
	if q.Has("before") {
		if _, err := configEntryID(req.before); err != nil {
			return nil, err
		}
	}
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > confighistory.MaxLimit {
			return nil, api.Errorf(api.CodeBadRequest, "Invalid limit '%s': must be an integer from 1 to %d", q.Get("limit"), confighistory.MaxLimit)
		}
		req.limit = n
	}
	return req, nil
}

// decodeConfigEntry decodes a route naming one entry, which takes no
// query parameter and no body.
func decodeConfigEntry(route string) func(context.Context, *http.Request) (any, error) {
	return func(_ context.Context, r *http.Request) (any, error) {
		if err := onlyParams(r.URL.Query(), route); err != nil {
			return nil, err
		}
		id, err := configEntryID(r.PathValue("id"))
		return configEntryRequest{name: r.PathValue("name"), id: id}, err
	}
}

// configEntryID checks a config history entry id a request gives: the
// offsets history's form.
func configEntryID(id string) (string, error) {
	if !offsethistory.ValidID(id) {
		return "", api.Errorf(api.CodeBadRequest, "Invalid config history entry id '%s': ids look like 1796119200123-c98a176d316d2399", id)
	}
	return id, nil
}

func makeConfigHistory(svc ConfigHistory) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(configHistoryRequest)
		h, err := svc.ConfigHistory(ctx, req.name, req.limit, req.before)
		h.Entries = nonNil(h.Entries)
		return h, err
	}
}

func makeConfigHistoryEntry(svc ConfigHistory) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(configEntryRequest)
		return svc.ConfigHistoryEntry(ctx, req.name, req.id)
	}
}

func makeRestoreConfig(svc ConfigHistory) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(configEntryRequest)
		return svc.RestoreConfig(ctx, req.name, req.id)
	}
}
