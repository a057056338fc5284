package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// Offsets is a connector's offsets: Kafka Connect's GET, PATCH and DELETE
// /connectors/{name}/offsets (KIP-875), and Sluice's previews, resets by
// rule, history, undo, restore and move under /sluice/connectors/{name}/.
// A change records WithReason's reason in its history entry. Get one from
// Client.Offsets.
type Offsets struct{ c *Client }

// Get is GET /connectors/{name}/offsets. Numbers in the partition and
// offset maps are json.Number, as the server wrote them.
func (g *Offsets) Get(ctx context.Context, name string) (ConnectorOffsets, error) {
	var out ConnectorOffsets
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/connectors/%s/offsets", name), safe: true}, &out)
	return out, err
}

// Alter is PATCH /connectors/{name}/offsets: the listed partitions move to
// their offsets (a nil Offset removes the partition's), the others keep
// theirs. The connector must be STOPPED. It returns the server's message.
func (g *Offsets) Alter(ctx context.Context, name string, offsets []ConnectorOffset) (Message, error) {
	var out Message
	body := ConnectorOffsets{Offsets: offsets}
	_, err := g.c.do(ctx, call{method: http.MethodPatch, path: pathf("/connectors/%s/offsets", name), body: body, safe: true}, &out)
	return out, err
}

// Reset is DELETE /connectors/{name}/offsets: every position of the
// connector goes (a sink's consumer group is deleted). The connector must
// be STOPPED.
func (g *Offsets) Reset(ctx context.Context, name string) (Message, error) {
	var out Message
	_, err := g.c.do(ctx, call{method: http.MethodDelete, path: pathf("/connectors/%s/offsets", name), safe: true}, &out)
	return out, err
}

// Preview is POST /sluice/connectors/{name}/offsets/preview: what Alter
// (req.Offsets) or Reset (req.Reset) would change, with their checks,
// changing nothing.
func (g *Offsets) Preview(ctx context.Context, name string, req OffsetsPreviewRequest) (OffsetsChanges, error) {
	var out OffsetsChanges
	_, err := g.c.do(ctx, call{method: http.MethodPost, path: pathf("/sluice/connectors/%s/offsets/preview", name), body: req, safe: true}, &out)
	return out, err
}

// ResetTo is POST /sluice/connectors/{name}/offsets/reset: the
// connector's positions moved by one rule (earliest, latest, a time, an offset, a
// shift). Retried after an unknown outcome only as a dry run: a shift
// applied twice moves twice.
func (g *Offsets) ResetTo(ctx context.Context, name string, req OffsetsResetRequest) (OffsetsChanges, error) {
	var out OffsetsChanges
	_, err := g.c.do(ctx, call{method: http.MethodPost, path: pathf("/sluice/connectors/%s/offsets/reset", name), body: req, safe: req.DryRun}, &out)
	return out, err
}

// Restore is POST /sluice/connectors/{name}/offsets/restore: the positions
// one history entry of req.From recorded, written to this connector.
func (g *Offsets) Restore(ctx context.Context, name string, req OffsetsRestoreRequest) (OffsetsChanges, error) {
	var out OffsetsChanges
	_, err := g.c.do(ctx, call{method: http.MethodPost, path: pathf("/sluice/connectors/%s/offsets/restore", name), body: req, safe: req.DryRun}, &out)
	return out, err
}

// HistoryQuery pages GET …/offsets/history.
type HistoryQuery struct {
	// Limit bounds the entries returned (0: the server's default, 20).
	Limit int
	// Before returns the entries older than this entry id (the last one
	// of the previous page).
	Before string
}

// History is GET /sluice/connectors/{name}/offsets/history: the changes of
// the connector's positions, newest first.
func (g *Offsets) History(ctx context.Context, name string, q HistoryQuery) (OffsetsHistory, error) {
	params := url.Values{}
	if q.Limit > 0 {
		params.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Before != "" {
		params.Set("before", q.Before)
	}
	var out OffsetsHistory
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/sluice/connectors/%s/offsets/history", name), query: params, safe: true}, &out)
	return out, err
}

// HistoryEntry is GET /sluice/connectors/{name}/offsets/history/{id}.
func (g *Offsets) HistoryEntry(ctx context.Context, name, id string) (OffsetsHistoryEntry, error) {
	var out OffsetsHistoryEntry
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/sluice/connectors/%s/offsets/history/%s", name, id), safe: true}, &out)
	return out, err
}

// UndoOptions are the query parameters of an undo.
type UndoOptions struct {
	// Force puts the entry's positions back even when they changed since.
	Force bool
	// DryRun returns the changes without making them.
	DryRun bool
}

// Undo is POST /sluice/connectors/{name}/offsets/history/{id}/undo: the
// positions from before entry id, put back.
func (g *Offsets) Undo(ctx context.Context, name, id string, opts UndoOptions) (OffsetsChanges, error) {
	q := url.Values{}
	if opts.Force {
		q.Set("force", "true")
	}
	if opts.DryRun {
		q.Set("dry_run", "true")
	}
	var out OffsetsChanges
	_, err := g.c.do(ctx, call{method: http.MethodPost, path: pathf("/sluice/connectors/%s/offsets/history/%s/undo", name, id), query: q, safe: opts.DryRun}, &out)
	return out, err
}

// Move is POST /sluice/connectors/{name}/move: a new connector req.To,
// created at this one's positions; this one deleted with its positions
// unless req.Copy.
func (g *Offsets) Move(ctx context.Context, name string, req MoveRequest) (MoveResult, error) {
	var out MoveResult
	_, err := g.c.do(ctx, call{method: http.MethodPost, path: pathf("/sluice/connectors/%s/move", name), body: req, safe: req.DryRun}, &out)
	return out, err
}
