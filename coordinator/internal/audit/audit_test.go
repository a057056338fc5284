package audit

import (
	"encoding/json"
	"maps"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/generator"
	"github.com/sluice-io/sluice/connect/plugins"
)

func TestBuild(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))
	cfg := map[string]string{"connector.class": "C", "k": "v"}
	upper := func(_ string, c map[string]string) map[string]string {
		out := maps.Clone(c)
		out["k"] = strings.ToUpper(out["k"])
		return out
	}
	tests := []struct {
		name string
		in   Input
		mask Mask
		want api.AuditRecord
	}{
		{
			name: "a pause that succeeded",
			in: Input{Time: at, Principal: "alice", Source: "10.0.0.1:5555", Coordinator: "c:8083", Operation: "connector.pause",
				Method: "PUT", Path: "/connectors/a/pause", Connector: "a",
				Before: &Snapshot{Config: cfg, TargetState: "STARTED"}, After: &Snapshot{Config: cfg, TargetState: "PAUSED"}, Status: 202},
			want: api.AuditRecord{Time: at.UTC(), Principal: "alice", Source: "10.0.0.1:5555", Coordinator: "c:8083", Operation: "connector.pause",
				Method: "PUT", Path: "/connectors/a/pause", Connector: "a",
				Before: &api.AuditState{Config: cfg, TargetState: "RUNNING"}, After: &api.AuditState{Config: cfg, TargetState: "PAUSED"}, Status: 202},
		},
		{
			name: "a refused create, without principal or route",
			in:   Input{Time: at, Method: "POST", Path: "/x", Status: 409, Body: []byte(`{"error_code":409,"message":"Connector a already exists"}` + "\n")},
			want: api.AuditRecord{Time: at.UTC(), Principal: Anonymous, Operation: UnknownOperation, Method: "POST", Path: "/x", Status: 409, Error: "Connector a already exists"},
		},
		{
			name: "an error that is no JSON error body",
			in:   Input{Time: at, Operation: "o", Status: 502, Body: []byte("bad gateway")},
			want: api.AuditRecord{Time: at.UTC(), Principal: Anonymous, Operation: "o", Status: 502, Error: "bad gateway"},
		},
		{
			name: "configs masked",
			in:   Input{Time: at, Operation: "o", Status: 200, Before: &Snapshot{Config: cfg, TargetState: "STOPPED"}},
			mask: upper,
			want: api.AuditRecord{Time: at.UTC(), Principal: Anonymous, Operation: "o", Status: 200,
				Before: &api.AuditState{Config: map[string]string{"connector.class": "C", "k": "V"}, TargetState: "STOPPED"}},
		},
		{
			name: "a connector without config",
			in:   Input{Time: at, Operation: "o", Status: 200, After: &Snapshot{TargetState: "STARTED"}},
			want: api.AuditRecord{Time: at.UTC(), Principal: Anonymous, Operation: "o", Status: 200,
				After: &api.AuditState{Config: map[string]string{}, TargetState: "RUNNING"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Build(tt.in, tt.mask)
			if g, w := jsonOf(t, got), jsonOf(t, tt.want); g != w {
				t.Fatalf("got  %s\nwant %s", g, w)
			}
		})
	}
	if cfg["k"] != "v" {
		t.Fatalf("Build changed the config it was given: %v", cfg)
	}
}

func TestPasswordMask(t *testing.T) {
	gen := generator.Plugin()
	secret := &connect.Plugin{Class: "test.SecretConnector", Kind: connect.KindSource, Version: "1",
		NewConnector: func() connect.Connector { return secretConnector{gen.NewConnector()} }}
	reg, err := plugins.New(gen, secret)
	if err != nil {
		t.Fatal(err)
	}
	mask := PasswordMask(reg)
	cfg := map[string]string{"connector.class": "SecretConnector", "secret": "p", "topic": "t"}
	if got := mask("SecretConnector", cfg); got["secret"] != Hidden || got["topic"] != "t" || cfg["secret"] != "p" {
		t.Fatalf("masked %v (input now %v), want secret hidden, the rest as it was", got, cfg)
	}
	if got := mask("SecretConnector", map[string]string{"topic": "t"}); len(got) != 1 {
		t.Fatalf("masking added a key that was not set: %v", got)
	}
	unknown := map[string]string{"secret": "p"}
	if got := mask("NoSuch", unknown); got["secret"] != "p" {
		t.Fatalf("an unknown class's config changed: %v", got)
	}
}

type secretConnector struct{ connect.Connector }

func (s secretConnector) ConfigDef() *connect.ConfigDef {
	return s.Connector.ConfigDef().Copy().Define(connect.ConfigKey{Name: "secret", Type: connect.TypePassword, Importance: connect.ImportanceHigh})
}

func TestParseQuery(t *testing.T) {
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	tests := []struct {
		query string
		want  Query
		err   string
	}{
		{query: "", want: Query{Limit: DefaultLimit}},
		{query: "connector=a%2Fb&limit=7", want: Query{Connector: "a/b", Limit: 7}},
		{query: "limit=10000", want: Query{Limit: MaxLimit}},
		{query: "since=1h30m", want: Query{Since: now.Add(-90 * time.Minute), Limit: DefaultLimit}},
		{query: "since=7d", want: Query{Since: now.Add(-7 * 24 * time.Hour), Limit: DefaultLimit}},
		{query: "since=2026-05-01T00:00:00.5%2B02:00", want: Query{Since: time.Date(2026, 4, 30, 22, 0, 0, 5e8, time.UTC), Limit: DefaultLimit}},
		{query: "limit=0", err: "Invalid limit '0': must be an integer from 1 to 10000"},
		{query: "limit=-3", err: "Invalid limit '-3'"},
		{query: "limit=10001", err: "Invalid limit '10001'"},
		{query: "limit=1.5", err: "Invalid limit '1.5'"},
		{query: "since=0s", err: "Invalid since '0s'"},
		{query: "since=-1h", err: "Invalid since '-1h'"},
		{query: "since=xd", err: "Invalid since 'xd'"},
		{query: "since=2026-05-01", err: "Invalid since '2026-05-01': must be an RFC 3339 time"},
		{query: "since=", err: "Invalid since ''"},
		{query: "connector=", err: "Query parameter 'connector' must not be empty"},
		{query: "connector=a&connector=b", err: "Query parameter 'connector' is given 2 times: give it once"},
		{query: "order=asc", err: "Unknown query parameter 'order': GET /sluice/audit takes connector, principal, operation, since, until and limit"},
		{query: "principal=ada&operation=offsets.*", want: Query{Principal: "ada", Operation: "offsets.*", Limit: DefaultLimit}},
		{query: "until=2h", want: Query{Until: now.Add(-2 * time.Hour), Limit: DefaultLimit}},
		{query: "since=3h&until=2026-05-06T06:00:00Z", want: Query{Since: now.Add(-3 * time.Hour), Until: time.Date(2026, 5, 6, 6, 0, 0, 0, time.UTC), Limit: DefaultLimit}},
		{query: "since=1h&until=2h", err: "Invalid time range: since (2026-05-06T06:08:09Z) must be before until (2026-05-06T05:08:09Z)"},
		{query: "since=1h&until=1h", err: "Invalid time range"},
		{query: "until=soon", err: "Invalid until 'soon': must be an RFC 3339 time"},
		{query: "principal=", err: "Query parameter 'principal' must not be empty: leave it out for every principal"},
		{query: "operation=", err: "Query parameter 'operation' must not be empty"},
		{query: "operation=offsets.%5B", err: "Invalid operation 'offsets.[': not a glob"},
		{query: "principal=a&principal=b", err: "Query parameter 'principal' is given 2 times"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			params, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseQuery(params, now)
			if tt.err != "" {
				e := api.AsError(err)
				if err == nil || e.Code != api.CodeBadRequest || !strings.HasPrefix(e.Message, tt.err) {
					t.Fatalf("got %+v, %v; want a 400 starting %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got.Connector != tt.want.Connector || got.Principal != tt.want.Principal || got.Operation != tt.want.Operation ||
				got.Limit != tt.want.Limit || !got.Since.Equal(tt.want.Since) || !got.Until.Equal(tt.want.Until) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestEncodeOmitsLargeConfigs(t *testing.T) {
	big := map[string]string{"v": strings.Repeat("x", maxRecordBytes)}
	rec := api.AuditRecord{Operation: "connector.config", Before: &api.AuditState{Config: big, TargetState: "RUNNING"}, After: &api.AuditState{Config: big, TargetState: "PAUSED"}}
	data, _, err := encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	var got api.AuditRecord
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(data) > maxRecordBytes || !got.ConfigsOmitted || got.Before.Config != nil || got.Before.TargetState != "RUNNING" || got.After.TargetState != "PAUSED" {
		t.Fatalf("encoded %d bytes: %+v", len(data), got)
	}
	if rec.Before.Config == nil {
		t.Fatal("encode changed the record it was given")
	}
	small, _, _ := encode(api.AuditRecord{Operation: "o"})
	if strings.Contains(string(small), "configs_omitted") {
		t.Fatalf("a small record says its configs were omitted: %s", small)
	}
}

// TestEncodeCutsHugeFields: a request naming a connector of a megabyte
// (its path too) is still recorded: each long field is cut with a marker
// giving its size, and the record fits the topic.
func TestEncodeCutsHugeFields(t *testing.T) {
	name := strings.Repeat("n", 1<<20)
	rec := api.AuditRecord{Operation: "connector.create", Method: "POST", Path: "/connectors/" + name + "/config", Connector: name,
		Principal: "tom", Status: 400, Error: "Connector name '" + name + "' is too long"}
	data, written, err := encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > maxRecordBytes || len(data) > 6*maxFieldBytes {
		t.Fatalf("encoded %d bytes", len(data))
	}
	var got api.AuditRecord
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(got.Connector, "…[cut: 1048576 bytes]") || !strings.HasSuffix(got.Path, "…[cut: 1048595 bytes]") ||
		got.Principal != "tom" || got.Operation != "connector.create" || got.Status != 400 {
		t.Errorf("record: connector …%s, path …%s, principal %q, operation %q, status %d", got.Connector[len(got.Connector)-30:],
			got.Path[len(got.Path)-30:], got.Principal, got.Operation, got.Status)
	}
	if written.Connector != got.Connector {
		t.Errorf("the record returned is not the one written: %q", written.Connector[:20])
	}
}

func TestRingKeepsNewest(t *testing.T) {
	r := &ring{max: 3}
	for i := range 7 {
		r.add(api.AuditRecord{Status: i})
	}
	var got []int
	for _, rec := range r.records() {
		got = append(got, rec.Status)
	}
	if len(got) != 3 || got[0] != 4 || got[2] != 6 || !r.dropped {
		t.Fatalf("kept %v (dropped %v), want [4 5 6] and dropped", got, r.dropped)
	}
	r = &ring{max: 3}
	r.add(api.AuditRecord{Status: 1})
	if got := r.records(); len(got) != 1 || r.dropped {
		t.Fatalf("kept %v (dropped %v)", got, r.dropped)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
