package httpapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/reqctx"
)

func (f *fake) PreviewOffsets(ctx context.Context, name string, req api.OffsetsPreviewRequest) (api.OffsetsChanges, error) {
	return api.OffsetsChanges{DryRun: true, Changes: []api.OffsetChange{}}, f.record("PreviewOffsets", name, req, reqctx.Reason(ctx))
}

func (f *fake) ResetOffsetsTo(ctx context.Context, name string, req api.OffsetsResetRequest) (api.OffsetsChanges, error) {
	return api.OffsetsChanges{DryRun: req.DryRun, Changes: []api.OffsetChange{}}, f.record("ResetOffsetsTo", name, req, reqctx.Reason(ctx))
}

func (f *fake) OffsetsHistory(ctx context.Context, name string, limit int, before string) (api.OffsetsHistory, error) {
	return api.OffsetsHistory{Entries: []api.OffsetsHistoryEntry{}}, f.record("OffsetsHistory", name, limit, before)
}

func (f *fake) OffsetsHistoryEntry(ctx context.Context, name, id string) (api.OffsetsHistoryEntry, error) {
	return api.OffsetsHistoryEntry{ID: id, Connector: name}, f.record("OffsetsHistoryEntry", name, id)
}

func (f *fake) UndoOffsets(ctx context.Context, name, id string, force, dryRun bool) (api.OffsetsChanges, error) {
	return api.OffsetsChanges{DryRun: dryRun, Changes: []api.OffsetChange{}}, f.record("UndoOffsets", name, id, force, dryRun)
}

func (f *fake) RestoreOffsets(ctx context.Context, name string, req api.OffsetsRestoreRequest) (api.OffsetsChanges, error) {
	return api.OffsetsChanges{DryRun: req.DryRun, Changes: []api.OffsetChange{}}, f.record("RestoreOffsets", name, req)
}

func (f *fake) MoveConnector(ctx context.Context, name string, req api.MoveRequest) (api.MoveResult, error) {
	return api.MoveResult{DryRun: req.DryRun, From: name, To: req.To}, f.record("MoveConnector", name, req)
}

// goodID has the form of an offsets history entry id.
const goodID = "1796119200123-c98a176d316d2399"

// TestSluiceOffsetsBodies checks how each Sluice offsets route binds its
// body and query, and the 400s of what it does not take.
func TestSluiceOffsetsBodies(t *testing.T) {
	f := newFake()
	srv := serve(t, f)
	bad := []struct{ name, method, path, body, msg string }{
		{"preview of neither", "POST", "/sluice/connectors/a/offsets/preview", `{}`, msgPreviewBody},
		{"preview of both", "POST", "/sluice/connectors/a/offsets/preview", `{"offsets":[{"partition":{},"offset":{}}],"reset":true}`, msgPreviewBody},
		{"preview of no offsets", "POST", "/sluice/connectors/a/offsets/preview", `{"offsets":[]}`, msgOffsetsMissing},
		{"preview with a null entry", "POST", "/sluice/connectors/a/offsets/preview", `{"offsets":[null]}`, msgOffsetNull},
		{"preview field unknown", "POST", "/sluice/connectors/a/offsets/preview", `{"reset":true,"dry_run":true}`, `Unrecognized field "dry_run"`},
		{"reset-to field unknown", "POST", "/sluice/connectors/a/offsets/reset", `{"to":"earliest","when":1}`, `Unrecognized field "when"`},
		{"reset-to offset not an integer", "POST", "/sluice/connectors/a/offsets/reset", `{"to":"offset","offset":1.5}`, `Invalid value for field "offset": expected an integer from -9223372036854775808 to 9223372036854775807`},
		{"reset-to partitions out of range", "POST", "/sluice/connectors/a/offsets/reset", `{"to":"earliest","partitions":[4294967296]}`, `Invalid value for field "partitions": expected an integer from -2147483648 to 2147483647`},
		{"reset-to topics not strings", "POST", "/sluice/connectors/a/offsets/reset", `{"to":"earliest","topics":[1]}`, `Invalid value for field "topics": expected an array of strings`},
		{"reset-to dry_run not a boolean", "POST", "/sluice/connectors/a/offsets/reset", `{"to":"earliest","dry_run":"yes"}`, `Invalid value for field "dry_run": expected a boolean`},
		{"history limit", "GET", "/sluice/connectors/a/offsets/history?limit=0", "", "Invalid limit '0': must be an integer from 1 to 1000"},
		{"history parameter unknown", "GET", "/sluice/connectors/a/offsets/history?since=1h", "", "Unknown query parameter 'since': GET …/offsets/history takes [limit before]"},
		{"undo body field unknown", "POST", "/sluice/connectors/a/offsets/history/" + goodID + "/undo", `{"force":true}`, `Unrecognized field "force"`},
		{"undo parameter twice", "POST", "/sluice/connectors/a/offsets/history/" + goodID + "/undo?force=true&force=false", "", "Query parameter 'force' is given 2 times: give it once"},
		{"restore field unknown", "POST", "/sluice/connectors/a/offsets/restore", `{"from":"b","to":"c"}`, `Unrecognized field "to"`},
		{"move field unknown", "POST", "/sluice/connectors/a/move", `{"to":"b","rename":true}`, `Unrecognized field "rename"`},
		{"undo of a malformed id", "POST", "/sluice/connectors/a/offsets/history/x/undo", "", "Invalid offsets history entry id 'x': ids look like 1796119200123-c98a176d316d2399"},
		{"entry of a malformed id", "GET", "/sluice/connectors/a/offsets/history/x", "", "Invalid offsets history entry id 'x'"},
		{"undo force not a boolean", "POST", "/sluice/connectors/a/offsets/history/" + goodID + "/undo?force=1", "", "Invalid value '1' for query parameter 'force': must be true or false"},
		{"move dry_run not a boolean", "POST", "/sluice/connectors/a/move?dry_run=yes", `{"to":"b"}`, "Invalid value 'yes' for query parameter 'dry_run': must be true or false"},
		{"move parameter unknown", "POST", "/sluice/connectors/a/move?dryrun=true", `{"to":"b"}`, "Unknown query parameter 'dryrun': POST …/move takes [dry_run]"},
		{"reset-to parameter unknown", "POST", "/sluice/connectors/a/offsets/reset?force=true", `{"to":"earliest"}`, "Unknown query parameter 'force'"},
		{"restore parameter unknown", "POST", "/sluice/connectors/a/offsets/restore?x=1", `{"from":"b"}`, "Unknown query parameter 'x'"},
		{"restore without from", "POST", "/sluice/connectors/a/offsets/restore", `{"from":" "}`, `Give "from": the connector whose offsets history holds the positions`},
		{"restore of a malformed entry", "POST", "/sluice/connectors/a/offsets/restore", `{"from":"b","entry":"12"}`, "Invalid offsets history entry id '12'"},
		{"preview parameter unknown", "POST", "/sluice/connectors/a/offsets/preview?dry_run=true", `{"reset":true}`, "Unknown query parameter 'dry_run'"},
		{"move config not strings", "POST", "/sluice/connectors/a/move", `{"to":"b","config":[]}`, `Invalid value for field "config": expected object`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, srv, tt.method, tt.path, tt.body)
			if r.status != 400 || !strings.Contains(r.body, jsonText(t, tt.msg)) {
				t.Fatalf("%s %s %s: got %d %s, want 400 with %q", tt.method, tt.path, tt.body, r.status, r.body, tt.msg)
			}
		})
	}

	r := do(t, srv, "POST", "/sluice/connectors/a/offsets/reset?dry_run=true",
		`{"to":"timestamp","timestamp":1764496800000,"topics":["t"],"partitions":[0,3]}`, reqctx.ReasonHeader, "replay after bug 12")
	if r.status != 200 {
		t.Fatalf("reset-to: %d %s", r.status, r.body)
	}
	args, _ := f.called("ResetOffsetsTo")
	req := args[1].(api.OffsetsResetRequest)
	if req.To != "timestamp" || req.Timestamp != json.Number("1764496800000") || !req.DryRun ||
		strings.Join(req.Topics, ",") != "t" || len(req.Partitions) != 2 || req.Partitions[1] != 3 || args[2] != "replay after bug 12" {
		t.Fatalf("reset-to bound %+v, reason %v", req, args[2])
	}

	if r := do(t, srv, "POST", "/sluice/connectors/a/offsets/history/"+goodID+"/undo?force=true", ""); r.status != 200 {
		t.Fatalf("undo without a body: %d %s", r.status, r.body)
	}
	args, _ = f.called("UndoOffsets")
	if args[0] != "a" || args[1] != goodID || args[2] != true || args[3] != false {
		t.Fatalf("undo bound %v", args)
	}
	do(t, srv, "POST", "/sluice/connectors/a/offsets/history/"+goodID+"/undo", `{"dry_run":true}`)
	if args, _ = f.called("UndoOffsets"); args[3] != true {
		t.Fatalf("undo with dry_run in its body bound %v", args)
	}

	if r := do(t, srv, "GET", "/sluice/connectors/a/offsets/history?before=0002-cd", ""); r.status != 400 || !strings.Contains(r.body, "Invalid offsets history entry id '0002-cd'") {
		t.Fatalf("history before a malformed id: %d %s", r.status, r.body)
	}
	const id = goodID
	if r := do(t, srv, "GET", "/sluice/connectors/a/offsets/history?limit=7&before="+id, ""); r.status != 200 {
		t.Fatalf("history: %d %s", r.status, r.body)
	}
	if args, _ = f.called("OffsetsHistory"); args[1] != 7 || args[2] != id {
		t.Fatalf("history bound %v", args)
	}

	do(t, srv, "POST", "/sluice/connectors/a/move?dry_run=true", `{"to":"b","config":{"tasks.max":"2"},"copy":true}`)
	args, _ = f.called("MoveConnector")
	if mv := args[1].(api.MoveRequest); mv.To != "b" || mv.Config["tasks.max"] != "2" || !mv.Copy || !mv.DryRun {
		t.Fatalf("move bound %+v", mv)
	}
}

// TestKafkaConnectOffsetsIgnoreSluiceParameters: Kafka Connect's own
// offsets endpoints do what they do with any query parameter, a Sluice
// one included: a script that sends dry_run=true to a real Kafka Connect
// gets a real change, and so it does here.
func TestKafkaConnectOffsetsIgnoreSluiceParameters(t *testing.T) {
	f := newFake()
	srv := serve(t, f)
	body := `{"offsets":[{"partition":{"f":"x"},"offset":{"p":1}}]}`
	for _, q := range []string{"", "?dry_run=true", "?force=true&x=1"} {
		if r := do(t, srv, "PATCH", "/connectors/a/offsets"+q, body); r.status != 200 || !strings.Contains(r.body, "altered successfully") {
			t.Fatalf("PATCH%s: %d %s", q, r.status, r.body)
		}
		if args, ok := f.called("AlterOffsets"); !ok || args[0] != "a" {
			t.Fatalf("PATCH%s did not alter: %v", q, args)
		}
		if r := do(t, srv, "DELETE", "/connectors/a/offsets"+q, ""); r.status != 200 || !strings.Contains(r.body, "reset successfully") {
			t.Fatalf("DELETE%s: %d %s", q, r.status, r.body)
		}
		f.args = map[string][]any{}
	}
}

// jsonText is s as it appears inside a JSON string.
func jsonText(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Trim(string(b), `"`)
}
