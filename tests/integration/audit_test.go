package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/converters"
	"github.com/sluice-io/sluice/connect/file"
	"github.com/sluice-io/sluice/connect/generator"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/sluicetest"
)

// classSecretGenerator is a generator whose ConfigDef adds a PASSWORD key,
// "secret": the audit trail must never show its value.
const classSecretGenerator = "io.sluice.test.SecretGeneratorConnector"

type secretConnector struct{ connect.Connector }

func (s secretConnector) ConfigDef() *connect.ConfigDef {
	return s.Connector.ConfigDef().Copy().Define(connect.ConfigKey{Name: "secret", Type: connect.TypePassword, Importance: connect.ImportanceHigh})
}

func secretPlugins(t *testing.T) *plugins.Registry {
	gen := generator.Plugin()
	secret := &connect.Plugin{Class: classSecretGenerator, Kind: connect.KindSource, Version: gen.Version,
		NewConnector: func() connect.Connector { return secretConnector{gen.NewConnector()} }}
	reg, err := plugins.New(append([]*connect.Plugin{file.SourcePlugin(), file.SinkPlugin(), gen, secret}, converters.Plugins()...)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// auditStep is one write of TestAuditTrail and the record it must leave.
type auditStep struct {
	method, path string
	body         any
	status       int
	op           string
	connector    string
	before       *api.AuditState // nil: the connector did not exist
	after        *api.AuditState
	errPart      string // a part of the recorded error message
	via          string // the coordinator's URL ("" the first one)
}

// Every write through REST, refused ones included and one sent to a
// follower, leaves exactly one audit record with the connector's config and
// target state before and after and the answer's status; GET /sluice/audit
// and the raw topic show the same records.
func TestAuditTrail(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, CoordinatorPlugins: secretPlugins(t)})
	topic := c.Prefix + "-audit"
	src := c.Name("src")
	data := filepath.Join(c.WorkDir, "in.txt")
	if err := os.WriteFile(data, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The stored config, as create adds its name.
	base := fileSourceCfg(data, c.Name("data"))
	cfg1 := cfgWith(base, "name", src)
	cfg2 := cfgWith(cfg1, "batch.size", "10")
	st := func(cfg map[string]string, target string) *api.AuditState {
		return &api.AuditState{Config: cfg, TargetState: target}
	}
	secretCfg := cfgOf("connector.class", classSecretGenerator, "topic", c.Name("gen"), "rate", "1", "secret", "s3cr3t-value")
	hidden := cfgWith(secretCfg, "secret", "[hidden]", "name", c.Name("secret"))
	offsets := map[string]any{"offsets": []any{map[string]any{"partition": map[string]any{"filename": data}, "offset": map[string]any{"position": 0}}}}
	path := "/connectors/" + url.PathEscape(src)
	steps := []auditStep{
		{method: "POST", path: "/connectors", body: map[string]any{"name": src, "config": cfg1}, status: 201, op: "connector.create", connector: src, after: st(cfg1, "RUNNING")},
		{method: "PUT", path: path + "/config", body: cfg2, status: 200, op: "connector.config", connector: src, before: st(cfg1, "RUNNING"), after: st(cfg2, "RUNNING")},
		{method: "PUT", path: path + "/pause", status: 202, op: "connector.pause", connector: src, before: st(cfg2, "RUNNING"), after: st(cfg2, "PAUSED")},
		{method: "PUT", path: path + "/resume", status: 202, op: "connector.resume", connector: src, before: st(cfg2, "PAUSED"), after: st(cfg2, "RUNNING")},
		{method: "PATCH", path: path + "/offsets", body: offsets, status: 400, op: "offsets.alter", connector: src, before: st(cfg2, "RUNNING"), after: st(cfg2, "RUNNING"), errPart: "STOPPED"},
		{method: "PUT", path: path + "/stop", status: 204, op: "connector.stop", connector: src, before: st(cfg2, "RUNNING"), after: st(cfg2, "STOPPED")},
		{method: "PATCH", path: path + "/offsets", body: offsets, status: 200, op: "offsets.alter", connector: src, before: st(cfg2, "STOPPED"), after: st(cfg2, "STOPPED")},
		{method: "DELETE", path: path + "/offsets", status: 200, op: "offsets.reset", connector: src, before: st(cfg2, "STOPPED"), after: st(cfg2, "STOPPED")},
		{method: "PUT", path: path + "/resume", status: 202, op: "connector.resume", connector: src, before: st(cfg2, "STOPPED"), after: st(cfg2, "RUNNING")},
		{method: "POST", path: path + "/restart", status: 204, op: "connector.restart", connector: src, before: st(cfg2, "RUNNING"), after: st(cfg2, "RUNNING")},
		{method: "DELETE", path: path, status: 204, op: "connector.delete", connector: src, before: st(cfg2, "RUNNING")},
		{method: "PUT", path: path + "/pause", status: 404, op: "connector.pause", connector: src, errPart: "Unknown connector"},
		{method: "POST", path: "/connectors", body: map[string]any{"name": c.Name("bad"), "config": cfgOf("connector.class", "NoSuchConnector")}, status: 400,
			op: "connector.create", connector: c.Name("bad"), errPart: "NoSuchConnector"},
		{method: "POST", path: "/connectors", body: map[string]any{"name": c.Name("secret"), "config": secretCfg, "initial_state": "STOPPED"}, status: 201,
			op: "connector.create", connector: c.Name("secret"), after: st(hidden, "STOPPED")},
	}
	_, followerURL := c.StartExtraCoordinator()
	fcfg := cfgWith(cfg1, "batch.size", "5", "name", c.Name("fw"))
	steps = append(steps,
		auditStep{method: "PUT", path: "/connectors/" + c.Name("fw") + "/config", body: fcfg, status: 201, op: "connector.config", connector: c.Name("fw"), after: st(fcfg, "RUNNING"), via: followerURL},
		auditStep{method: "PUT", path: "/connectors/" + c.Name("fw") + "/stop", status: 204, op: "connector.stop", connector: c.Name("fw"), before: st(fcfg, "RUNNING"), after: st(fcfg, "STOPPED"), via: followerURL},
		auditStep{method: "POST", path: "/connectors", body: map[string]any{"name": c.Name("fw2"), "config": base, "initial_state": "PAUSED"}, status: 201,
			op: "connector.create", connector: c.Name("fw2"), after: st(cfgWith(base, "name", c.Name("fw2")), "PAUSED"), via: followerURL},
	)
	const viaFollower = 3

	var seen []api.AuditRecord
	var midway time.Time
	for i, s := range steps {
		if i == len(steps)-viaFollower {
			midway = time.Now()
		}
		base := c.URL
		if s.via != "" {
			base = s.via
		}
		r := sluicetest.Do(t, base, s.method, s.path, s.body)
		if r.Status != s.status {
			t.Fatalf("step %d %s %s: got %s, want %d", i, s.method, s.path, r, s.status)
		}
		// The answer comes after its record is written: the record is
		// there at once, and it is the only new one.
		recs := rawAudit(t, c, topic)
		if len(recs) != len(seen)+1 {
			t.Fatalf("step %d %s %s: %d records after it, want %d: %s", i, s.method, s.path, len(recs), len(seen)+1, show(recs[len(seen):]))
		}
		checkRecord(t, i, s, recs[len(recs)-1], base)
		seen = recs
	}

	// The topic is retained, not compacted.
	cfgs, err := c.Admin().DescribeTopicConfigs(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 1 || cfgs[0].Err != nil {
		t.Fatalf("describe the audit topic: %+v", cfgs)
	}
	if !hasConfig(cfgs[0].Configs, "cleanup.policy", "delete") {
		t.Errorf("audit topic configs %v, want cleanup.policy=delete", cfgs[0].Configs)
	}
	if !hasConfig(cfgs[0].Configs, "retention.ms", fmt.Sprint((90 * 24 * time.Hour).Milliseconds())) {
		t.Errorf("audit topic configs %v, want retention.ms of 90 days", cfgs[0].Configs)
	}

	// The password never reaches the topic.
	for _, r := range c.ReadTopic(topic) {
		if bytes.Contains(r.Value, []byte("s3cr3t")) {
			t.Fatalf("the audit topic holds the secret: %s", r.Value)
		}
	}

	// GET /sluice/audit shows the same records, newest first, on either
	// coordinator.
	for _, base := range []string{c.URL, followerURL} {
		var log api.AuditLog
		sluicetest.Do(t, base, "GET", "/sluice/audit", nil).JSON(t, &log)
		if len(log.Records) != len(seen) || log.More || log.Unwritten != 0 {
			t.Fatalf("GET %s/sluice/audit: %d records (more %v, unwritten %d), want %d", base, len(log.Records), log.More, log.Unwritten, len(seen))
		}
		for i, rec := range log.Records {
			if want := seen[len(seen)-1-i]; !sameAudit(rec, want) {
				t.Fatalf("GET /sluice/audit record %d:\n%s\nwant\n%s", i, show([]api.AuditRecord{rec}), show([]api.AuditRecord{want}))
			}
		}
	}
	var bySrc api.AuditLog
	c.Must(200, "GET", "/sluice/audit?limit=3&connector="+url.QueryEscape(src), nil).JSON(t, &bySrc)
	if len(bySrc.Records) != 3 || !bySrc.More || bySrc.Records[0].Operation != "connector.pause" || bySrc.Records[2].Operation != "connector.restart" {
		t.Fatalf("connector=%s&limit=3: %s more=%v, want the 3 newest of its records and more", src, show(bySrc.Records), bySrc.More)
	}
	var since api.AuditLog
	c.Must(200, "GET", "/sluice/audit?since="+url.QueryEscape(midway.UTC().Format(time.RFC3339Nano)), nil).JSON(t, &since)
	if len(since.Records) != viaFollower || since.Records[viaFollower-1].Connector != c.Name("fw") || since.More {
		t.Fatalf("since %v: %s, want the %d writes through the follower", midway, show(since.Records), viaFollower)
	}
	var recent api.AuditLog
	c.Must(200, "GET", "/sluice/audit?since=1h", nil).JSON(t, &recent)
	if len(recent.Records) != len(seen) {
		t.Fatalf("since=1h: %d records, want %d", len(recent.Records), len(seen))
	}
	// Filters by operation (a glob) and principal, and until pages back.
	var offs api.AuditLog
	c.Must(200, "GET", "/sluice/audit?principal=anonymous&operation=offsets.*", nil).JSON(t, &offs)
	if ops := auditOps(offs.Records); ops != "offsets.reset offsets.alter offsets.alter" || offs.More {
		t.Fatalf("operation=offsets.*: %s, want the reset and the two alters", ops)
	}
	c.Must(200, "GET", "/sluice/audit?principal=ada", nil).JSON(t, &offs)
	if len(offs.Records) != 0 {
		t.Fatalf("principal=ada: %s, want none (every write was anonymous)", show(offs.Records))
	}
	var before api.AuditLog
	c.Must(200, "GET", "/sluice/audit?until="+url.QueryEscape(midway.UTC().Format(time.RFC3339Nano)), nil).JSON(t, &before)
	if len(before.Records) != len(seen)-viaFollower || !sameAudit(before.Records[0], seen[len(seen)-viaFollower-1]) {
		t.Fatalf("until %v: %d records, want the %d before the follower's", midway, len(before.Records), len(seen)-viaFollower)
	}
	var page api.AuditLog
	c.Must(200, "GET", "/sluice/audit?limit=2&until="+url.QueryEscape(recent.Records[1].Time.UTC().Format(time.RFC3339Nano)), nil).JSON(t, &page)
	if len(page.Records) != 2 || !page.More || !sameAudit(page.Records[0], recent.Records[2]) || !sameAudit(page.Records[1], recent.Records[3]) {
		t.Fatalf("the second page of 2: %s, want records 3 and 4 of the trail", show(page.Records))
	}
}

// auditOps lists the records' operations, in order.
func auditOps(recs []api.AuditRecord) string {
	var ops []string
	for _, r := range recs {
		ops = append(ops, r.Operation)
	}
	return strings.Join(ops, " ")
}

// Bad parameters of GET /sluice/audit are 400s that say what was wrong.
func TestAuditQueryErrors(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	for _, tt := range []struct{ query, msg string }{
		{"limit=abc", "Invalid limit 'abc': must be an integer from 1 to 10000"},
		{"limit=10001", "Invalid limit '10001': must be an integer from 1 to 10000"},
		{"limit=1&limit=2", "Query parameter 'limit' is given 2 times: give it once"},
		{"since=-1h", "Invalid since '-1h': must be an RFC 3339 time (2026-01-02T15:04:05Z) or a positive duration back from now (90s, 1h, 7d)"},
		{"since=2026-13-01", "Invalid since '2026-13-01': must be an RFC 3339 time (2026-01-02T15:04:05Z) or a positive duration back from now (90s, 1h, 7d)"},
		{"connector=", "Query parameter 'connector' must not be empty: leave it out for every connector"},
		{"user=x", "Unknown query parameter 'user': GET /sluice/audit takes connector, principal, operation, since, until and limit"},
	} {
		wantError(t, c.Do("GET", "/sluice/audit?"+tt.query, nil), http.StatusBadRequest, tt.msg)
	}
	// Reads are not audited.
	var log api.AuditLog
	c.Must(200, "GET", "/sluice/audit", nil).JSON(t, &log)
	if len(log.Records) != 0 {
		t.Fatalf("reads were audited: %s", show(log.Records))
	}
}

// rawAudit reads the audit records from the topic itself.
func rawAudit(t *testing.T, c *sluicetest.Cluster, topic string) []api.AuditRecord {
	t.Helper()
	var out []api.AuditRecord
	for _, r := range c.ReadTopic(topic) {
		var rec api.AuditRecord
		if err := json.Unmarshal(r.Value, &rec); err != nil {
			t.Fatalf("audit record %s: %v", r.Value, err)
		}
		if string(r.Key) != rec.Connector {
			t.Fatalf("audit record key %q, want its connector %q", r.Key, rec.Connector)
		}
		out = append(out, rec)
	}
	return out
}

func checkRecord(t *testing.T, i int, s auditStep, rec api.AuditRecord, base string) {
	t.Helper()
	fail := func(what string, got, want any) {
		t.Helper()
		t.Fatalf("step %d %s %s: record's %s is %v, want %v\n%s", i, s.method, s.path, what, got, want, show([]api.AuditRecord{rec}))
	}
	switch {
	case rec.Operation != s.op:
		fail("operation", rec.Operation, s.op)
	case rec.Method != s.method || rec.Path != s.path:
		fail("request", rec.Method+" "+rec.Path, s.method+" "+s.path)
	case rec.Connector != s.connector:
		fail("connector", rec.Connector, s.connector)
	case rec.Status != s.status:
		fail("status", rec.Status, s.status)
	case rec.Principal != "anonymous":
		fail("principal", rec.Principal, "anonymous")
	case !strings.HasPrefix(rec.Source, "127.0.0.1:"):
		fail("source", rec.Source, "the client's address")
	case "http://"+rec.Coordinator != base:
		fail("coordinator", rec.Coordinator, base)
	case time.Since(rec.Time) > time.Minute || time.Since(rec.Time) < 0:
		fail("time", rec.Time, "now")
	case !sameAuditState(rec.Before, s.before):
		fail("before", fmt.Sprintf("%+v", rec.Before), fmt.Sprintf("%+v", s.before))
	case !sameAuditState(rec.After, s.after):
		fail("after", fmt.Sprintf("%+v", rec.After), fmt.Sprintf("%+v", s.after))
	case (s.status >= 400) != (rec.Error != ""), !strings.Contains(rec.Error, s.errPart):
		fail("error", rec.Error, s.errPart)
	}
}

func sameAuditState(a, b *api.AuditState) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.TargetState == b.TargetState && maps.Equal(a.Config, b.Config)
}

func sameAudit(a, b api.AuditRecord) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func hasConfig(cfgs []kadm.Config, key, value string) bool {
	for _, c := range cfgs {
		if c.Key == key && c.MaybeValue() == value {
			return true
		}
	}
	return false
}

func show(recs []api.AuditRecord) string {
	b, _ := json.MarshalIndent(recs, "", "  ")
	return string(b)
}
