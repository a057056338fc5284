package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// ConfigHistory is GET /sluice/connectors/{name}/config/history: the
// changes of the connector's config, newest first, each with who made it
// and the keys it changed. Sluice only.
func (g *Connectors) ConfigHistory(ctx context.Context, name string, q HistoryQuery) (ConfigHistory, error) {
	params := url.Values{}
	if q.Limit > 0 {
		params.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Before != "" {
		params.Set("before", q.Before)
	}
	var out ConfigHistory
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/sluice/connectors/%s/config/history", name), query: params, safe: true}, &out)
	return out, err
}

// ConfigHistoryEntry is GET /sluice/connectors/{name}/config/history/{id}:
// one change with the configs before and after it. Sluice only.
func (g *Connectors) ConfigHistoryEntry(ctx context.Context, name, id string) (ConfigHistoryEntry, error) {
	var out ConfigHistoryEntry
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/sluice/connectors/%s/config/history/%s", name, id), safe: true}, &out)
	return out, err
}

// RestoreConfig is POST
// /sluice/connectors/{name}/config/history/{id}/restore: the config entry
// id wrote, written again as PUT …/config writes one. Repeating it writes
// the same config, so it is retried after an unknown outcome. Sluice
// only.
func (g *Connectors) RestoreConfig(ctx context.Context, name, id string) (ConfigRestoreResult, error) {
	var out ConfigRestoreResult
	_, err := g.c.do(ctx, call{method: http.MethodPost, path: pathf("/sluice/connectors/%s/config/history/%s/restore", name, id), safe: true}, &out)
	return out, err
}

// LagHistory is GET /sluice/connectors/{name}/lag/history: a sink
// connector's lag per partition over the last hour, as the leading
// coordinator sampled it. Sluice only.
func (g *Connectors) LagHistory(ctx context.Context, name string) (LagHistory, error) {
	var out LagHistory
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/sluice/connectors/%s/lag/history", name), safe: true}, &out)
	return out, err
}
