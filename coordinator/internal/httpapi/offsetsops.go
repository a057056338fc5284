package httpapi

// Sluice's own offsets operations, under /sluice/connectors/{name}/…
// (docs/offsets.md): previews, resets by rule, the offsets history with
// undo and restore, and moves. Their bodies are bound as strictly as
// Kafka Connect's (decode.go): an unknown field is a 400 naming it.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/go-kit/kit/endpoint"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/offsethistory"
	"github.com/sluice-io/sluice/coordinator/internal/reqctx"
)

// The bounds of GET …/offsets/history's limit.
const (
	defaultHistoryLimit = offsethistory.DefaultLimit
	maxHistoryLimit     = offsethistory.MaxLimit
)

type previewRequest struct {
	name string
	req  api.OffsetsPreviewRequest
}

type resetToRequest struct {
	name string
	req  api.OffsetsResetRequest
}

type historyRequest struct {
	name, before string
	limit        int
}

type historyEntryRequest struct{ name, id string }

type undoRequest struct {
	name, id      string
	force, dryRun bool
}

type restoreRequest struct {
	name string
	req  api.OffsetsRestoreRequest
}

type moveRequest struct {
	name string
	req  api.MoveRequest
}

// msgPreviewBody is the 400 of a preview that asks for neither or both.
const msgPreviewBody = "Give either \"offsets\" (what PATCH …/offsets would write) or \"reset\": true (what DELETE …/offsets would do), not both"

// putReason carries the request's X-Sluice-Reason, cut to
// reqctx.MaxReasonBytes, to the herder's history entry. It is read on
// every route, Kafka Connect's offsets endpoints included: a header Kafka
// Connect ignores changes nothing of what they do.
func putReason(ctx context.Context, r *http.Request) context.Context {
	reason := r.Header.Get(reqctx.ReasonHeader)
	if len(reason) > reqctx.MaxReasonBytes {
		reason = strings.ToValidUTF8(reason[:reqctx.MaxReasonBytes], "")
	}
	return reqctx.WithReason(ctx, reason)
}

func decodePreview(_ context.Context, r *http.Request) (any, error) {
	if err := onlyParams(r.URL.Query(), "POST …/offsets/preview"); err != nil {
		return nil, err
	}
	body, err := readJSON(r)
	if err != nil {
		return nil, err
	}
	var req api.OffsetsPreviewRequest
	var nullOffset, sawOffsets bool
	setOffsets := offsetList("offsets", &req.Offsets, &nullOffset)
	err = fieldSet{
		"offsets": func(v any) error { sawOffsets = true; return setOffsets(v) },
		"reset":   boolField("reset", &req.Reset),
	}.bind("", body)
	switch {
	case err != nil:
		return nil, err
	case sawOffsets == req.Reset:
		return nil, badRequest(msgPreviewBody)
	case !req.Reset && len(req.Offsets) == 0:
		return nil, badRequest(msgOffsetsMissing)
	case nullOffset:
		return nil, badRequest(msgOffsetNull)
	}
	return previewRequest{name: r.PathValue("name"), req: req}, nil
}

func decodeResetTo(_ context.Context, r *http.Request) (any, error) {
	dryRun, err := dryRunParam(r, "POST …/offsets/reset")
	if err != nil {
		return nil, err
	}
	body, err := readJSON(r)
	if err != nil {
		return nil, err
	}
	var req api.OffsetsResetRequest
	err = fieldSet{
		"to":         stringField("to", &req.To),
		"timestamp":  func(v any) error { req.Timestamp = v; return nil },
		"offset":     int64Field("offset", &req.Offset),
		"shift_by":   int64Field("shift_by", &req.ShiftBy),
		"topics":     stringList("topics", &req.Topics),
		"partitions": int32List("partitions", &req.Partitions),
		"dry_run":    boolField("dry_run", &req.DryRun),
	}.bind("", body)
	if err != nil {
		return nil, err
	}
	req.DryRun = req.DryRun || dryRun
	return resetToRequest{name: r.PathValue("name"), req: req}, nil
}

func decodeHistory(_ context.Context, r *http.Request) (any, error) {
	q := r.URL.Query()
	if err := onlyParams(q, "GET …/offsets/history", "limit", "before"); err != nil {
		return nil, err
	}
	req := historyRequest{name: r.PathValue("name"), limit: defaultHistoryLimit, before: q.Get("before")}
	if q.Has("before") {
		if _, err := entryID(req.before); err != nil {
			return nil, err
		}
	}
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > maxHistoryLimit {
			return nil, api.Errorf(api.CodeBadRequest, "Invalid limit '%s': must be an integer from 1 to %d", q.Get("limit"), maxHistoryLimit)
		}
		req.limit = n
	}
	return req, nil
}

func decodeHistoryEntry(_ context.Context, r *http.Request) (any, error) {
	if err := onlyParams(r.URL.Query(), "GET …/offsets/history/{id}"); err != nil {
		return nil, err
	}
	id, err := entryID(r.PathValue("id"))
	return historyEntryRequest{name: r.PathValue("name"), id: id}, err
}

// entryID checks an offsets history entry id a request gives.
func entryID(id string) (string, error) {
	if !offsethistory.ValidID(id) {
		return "", api.Errorf(api.CodeBadRequest, "Invalid offsets history entry id '%s': ids look like 1796119200123-c98a176d316d2399", id)
	}
	return id, nil
}

func decodeUndo(_ context.Context, r *http.Request) (any, error) {
	q := r.URL.Query()
	if err := onlyParams(q, "POST …/undo", "force", "dry_run"); err != nil {
		return nil, err
	}
	id, err := entryID(r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	req := undoRequest{name: r.PathValue("name"), id: id}
	if req.force, err = strictBool(q, "force"); err != nil {
		return nil, err
	}
	if req.dryRun, err = strictBool(q, "dry_run"); err != nil {
		return nil, err
	}
	body, err := readOptionalJSON(r)
	if err != nil || body == nil {
		return req, err
	}
	var dryRun bool
	if err := (fieldSet{"dry_run": boolField("dry_run", &dryRun)}).bind("", body); err != nil {
		return nil, err
	}
	req.dryRun = req.dryRun || dryRun
	return req, nil
}

func decodeRestore(_ context.Context, r *http.Request) (any, error) {
	dryRun, err := dryRunParam(r, "POST …/offsets/restore")
	if err != nil {
		return nil, err
	}
	body, err := readJSON(r)
	if err != nil {
		return nil, err
	}
	var req api.OffsetsRestoreRequest
	err = fieldSet{
		"from":      stringField("from", &req.From),
		"entry":     stringField("entry", &req.Entry),
		"positions": stringField("positions", &req.Positions),
		"dry_run":   boolField("dry_run", &req.DryRun),
	}.bind("", body)
	req.From = api.TrimName(req.From)
	switch {
	case err != nil:
		return nil, err
	case req.From == "":
		return nil, badRequest("Give \"from\": the connector whose offsets history holds the positions")
	case req.Entry != "":
		if _, err := entryID(req.Entry); err != nil {
			return nil, err
		}
	}
	req.DryRun = req.DryRun || dryRun
	return restoreRequest{name: r.PathValue("name"), req: req}, nil
}

func decodeMove(_ context.Context, r *http.Request) (any, error) {
	dryRun, err := dryRunParam(r, "POST …/move")
	if err != nil {
		return nil, err
	}
	body, err := readJSON(r)
	if err != nil {
		return nil, err
	}
	var req api.MoveRequest
	err = fieldSet{
		"to": stringField("to", &req.To),
		"config": func(v any) error {
			m, err := stringMap("config", "", v)
			req.Config = m
			return err
		},
		"copy":    boolField("copy", &req.Copy),
		"dry_run": boolField("dry_run", &req.DryRun),
	}.bind("", body)
	if err != nil {
		return nil, err
	}
	req.To = api.TrimName(req.To)
	req.DryRun = req.DryRun || dryRun
	return moveRequest{name: r.PathValue("name"), req: req}, nil
}

// dryRunParam reads the one query parameter a Sluice offsets route takes
// besides its body: dry_run.
func dryRunParam(r *http.Request, route string) (bool, error) {
	q := r.URL.Query()
	if err := onlyParams(q, route, "dry_run"); err != nil {
		return false, err
	}
	return strictBool(q, "dry_run")
}

// strictBool reads a boolean query parameter of a Sluice route: absent is
// false, and only "true" or "false" are taken. Kafka Connect's routes read
// anything but "true" as false (queryBool); on a route that changes
// positions, a mistyped dry_run must not make the real change.
func strictBool(q url.Values, name string) (bool, error) {
	if !q.Has(name) {
		return false, nil
	}
	switch v := q.Get(name); v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	default:
		return false, api.Errorf(api.CodeBadRequest, "Invalid value '%s' for query parameter '%s': must be true or false", v, name)
	}
}

// readOptionalJSON is readJSON for a route whose body may be left out:
// nil when there is none.
func readOptionalJSON(r *http.Request) (any, error) {
	if r.ContentLength == 0 {
		return nil, nil
	}
	return readJSON(r)
}

// onlyParams refuses a query parameter route does not take, or one given
// twice.
func onlyParams(q url.Values, route string, names ...string) error {
	for name, vals := range q {
		if !slices.Contains(names, name) {
			return api.Errorf(api.CodeBadRequest, "Unknown query parameter '%s': %s takes %v", name, route, names)
		}
		if len(vals) > 1 {
			return api.Errorf(api.CodeBadRequest, "Query parameter '%s' is given %d times: give it once", name, len(vals))
		}
	}
	return nil
}

// boolField binds a JSON boolean.
func boolField(field string, dst *bool) func(any) error {
	return func(v any) error {
		b, ok := v.(bool)
		if !ok {
			return errWrongType(field, "a boolean")
		}
		*dst = b
		return nil
	}
}

// int64Field binds a JSON integer that fits 64 bits.
func int64Field(field string, dst **int64) func(any) error {
	return func(v any) error {
		n, err := integer(field, v, math.MinInt64, math.MaxInt64)
		if err != nil {
			return err
		}
		*dst = &n
		return nil
	}
}

// integer reads a JSON integer within [lo, hi].
func integer(field string, v any, lo, hi int64) (int64, error) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, errWrongType(field, "an integer")
	}
	n, err := strconv.ParseInt(num.String(), 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, errWrongType(field, fmt.Sprintf("an integer from %d to %d", lo, hi))
	}
	return n, nil
}

// stringList binds a JSON array of strings.
func stringList(field string, dst *[]string) func(any) error {
	return func(v any) error {
		arr, ok := v.([]any)
		if !ok {
			return errWrongType(field, "an array of strings")
		}
		out := make([]string, 0, len(arr))
		for _, el := range arr {
			s, ok := el.(string)
			if !ok {
				return errWrongType(field, "an array of strings")
			}
			out = append(out, s)
		}
		*dst = out
		return nil
	}
}

// int32List binds a JSON array of partition numbers.
func int32List(field string, dst *[]int32) func(any) error {
	return func(v any) error {
		arr, ok := v.([]any)
		if !ok {
			return errWrongType(field, "an array of integers")
		}
		out := make([]int32, 0, len(arr))
		for _, el := range arr {
			n, err := integer(field, el, math.MinInt32, math.MaxInt32)
			if err != nil {
				return err
			}
			out = append(out, int32(n))
		}
		*dst = out
		return nil
	}
}

func makePreviewOffsets(svc Offsets) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(previewRequest)
		return svc.PreviewOffsets(ctx, req.name, req.req)
	}
}

func makeResetOffsetsTo(svc Offsets) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(resetToRequest)
		return svc.ResetOffsetsTo(ctx, req.name, req.req)
	}
}

func makeOffsetsHistory(svc Offsets) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(historyRequest)
		return svc.OffsetsHistory(ctx, req.name, req.limit, req.before)
	}
}

func makeOffsetsHistoryEntry(svc Offsets) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(historyEntryRequest)
		return svc.OffsetsHistoryEntry(ctx, req.name, req.id)
	}
}

func makeUndoOffsets(svc Offsets) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(undoRequest)
		return svc.UndoOffsets(ctx, req.name, req.id, req.force, req.dryRun)
	}
}

func makeRestoreOffsets(svc Offsets) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(restoreRequest)
		return svc.RestoreOffsets(ctx, req.name, req.req)
	}
}

func makeMoveConnector(svc Offsets) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(moveRequest)
		return svc.MoveConnector(ctx, req.name, req.req)
	}
}
