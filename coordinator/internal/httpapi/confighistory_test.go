package httpapi

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
)

func (f *fake) ConfigHistory(ctx context.Context, name string, limit int, before string) (api.ConfigHistory, error) {
	return api.ConfigHistory{}, f.record("ConfigHistory", name, limit, before)
}

func (f *fake) ConfigHistoryEntry(ctx context.Context, name, id string) (api.ConfigHistoryEntry, error) {
	return api.ConfigHistoryEntry{ConfigHistorySummary: api.ConfigHistorySummary{ID: id, Connector: name}}, f.record("ConfigHistoryEntry", name, id)
}

func (f *fake) RestoreConfig(ctx context.Context, name, id string) (api.ConfigRestoreResult, error) {
	return api.ConfigRestoreResult{Connector: info(name), Restored: id}, f.record("RestoreConfig", name, id)
}

// ConnectorLagHistory leaves Partitions nil on purpose: the transport
// must still answer [].
func (f *fake) ConnectorLagHistory(ctx context.Context, name string) (api.LagHistory, error) {
	return api.LagHistory{Connector: name, IntervalMillis: 15000}, f.record("ConnectorLagHistory", name)
}

// TestConfigHistoryRequests: the config history routes take only their
// parameters, refuse malformed ids and limits before the service is
// asked, and pass the rest on.
func TestConfigHistoryRequests(t *testing.T) {
	f := newFake()
	srv := serve(t, f)
	bad := []struct{ name, method, path, msg string }{
		{"limit zero", "GET", "/sluice/connectors/a/config/history?limit=0", "Invalid limit '0': must be an integer from 1 to 100"},
		{"limit above the bound", "GET", "/sluice/connectors/a/config/history?limit=101", "Invalid limit '101'"},
		{"unknown parameter", "GET", "/sluice/connectors/a/config/history?since=1h", "Unknown query parameter 'since': GET …/config/history takes [limit before]"},
		{"before malformed", "GET", "/sluice/connectors/a/config/history?before=x", "Invalid config history entry id 'x': ids look like 1796119200123-c98a176d316d2399"},
		{"entry malformed", "GET", "/sluice/connectors/a/config/history/12", "Invalid config history entry id '12'"},
		{"restore of a malformed id", "POST", "/sluice/connectors/a/config/history/abc/restore", "Invalid config history entry id 'abc'"},
		{"restore with a parameter", "POST", "/sluice/connectors/a/config/history/" + goodID + "/restore?dry_run=true", "Unknown query parameter 'dry_run': POST …/config/history/{id}/restore takes []"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, srv, tt.method, tt.path, "")
			if r.status != 400 || !strings.Contains(r.body, jsonText(t, tt.msg)) {
				t.Fatalf("%s %s: got %d %s, want 400 with %q", tt.method, tt.path, r.status, r.body, tt.msg)
			}
		})
	}
	if _, asked := f.called("RestoreConfig"); asked {
		t.Fatal("a refused restore reached the service")
	}

	if r := do(t, srv, "GET", "/sluice/connectors/a/config/history?limit=7&before="+goodID, ""); r.status != 200 || r.body != `{"entries":[],"more":false}` {
		t.Fatalf("history: %d %s", r.status, r.body)
	}
	if args, _ := f.called("ConfigHistory"); args[0] != "a" || args[1] != 7 || args[2] != goodID {
		t.Fatalf("history bound %v", args)
	}
	do(t, srv, "GET", "/sluice/connectors/a/config/history", "")
	if args, _ := f.called("ConfigHistory"); args[1] != 50 || args[2] != "" {
		t.Fatalf("history without parameters bound %v, want the default limit 50", args)
	}
	if r := do(t, srv, "POST", "/sluice/connectors/a%2Fb/config/history/"+goodID+"/restore", ""); r.status != 200 || !strings.Contains(r.body, `"restored":"`+goodID+`"`) {
		t.Fatalf("restore: %d %s", r.status, r.body)
	}
	if args, _ := f.called("RestoreConfig"); args[0] != "a/b" || args[1] != goodID {
		t.Fatalf("restore bound %v", args)
	}
	if r := do(t, srv, "GET", "/sluice/connectors/a/lag/history", ""); r.status != 200 || !strings.Contains(r.body, `"partitions":[]`) {
		t.Fatalf("lag history: %d %s", r.status, r.body)
	}
}
