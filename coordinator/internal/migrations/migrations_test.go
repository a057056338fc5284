package migrations

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/sluicetest/fakeconnect"
)

// sluice is the Sluice side: its plugins, its connectors, and each create
// as POST /connectors would take it; a config with "bad" fails validation
// and a name in refuse fails its create.
type sluice struct {
	names   []string
	created []api.CreateConnectorRequest
	refuse  map[string]bool
}

func (f *sluice) ListPlugins(context.Context, bool) ([]api.PluginInfo, error) {
	return []api.PluginInfo{{Class: "org.apache.kafka.connect.file.FileStreamSourceConnector", Type: api.TypeSource},
		{Class: "org.apache.kafka.connect.file.FileStreamSinkConnector", Type: api.TypeSink}}, nil
}

func (f *sluice) ValidateConfig(_ context.Context, plugin string, config map[string]string) (api.ConfigInfos, error) {
	out := api.ConfigInfos{Name: plugin}
	if v, ok := config["bad"]; ok {
		out.ErrorCount = 1
		out.Configs = []api.ConfigInfo{{Value: api.ConfigValueInfo{Name: "bad", Value: &v, Errors: []string{"Invalid value " + v}}}}
	}
	return out, nil
}

func (f *sluice) ListConnectors(context.Context) ([]string, error) { return slices.Clone(f.names), nil }

func (f *sluice) CreateConnector(_ context.Context, req api.CreateConnectorRequest) (api.CreatedConnector, error) {
	if f.refuse[req.Name] {
		return api.CreatedConnector{}, api.Errorf(api.CodeConflict, "Connector %s already exists", req.Name)
	}
	f.created = append(f.created, req)
	f.names = append(f.names, req.Name)
	return api.CreatedConnector{}, nil
}

func allowAll(string) error { return nil }

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

var offsets = []api.ConnectorOffset{{Partition: map[string]any{"filename": "/data/in.txt"}, Offset: map[string]any{"position": 12}}}

// setup is a Kafka Connect cluster of a running file source with
// positions, a paused sink, a connector of a class Sluice lacks, and a
// Service allowed to read it.
func setup(t *testing.T) (*fakeconnect.Server, *sluice, *Service) {
	kc := fakeconnect.Start(t)
	kc.Add("files-src", fakeconnect.Connector{Config: map[string]string{"connector.class": "FileStreamSource", "file": "/data/in.txt", "topic": "lines"},
		State: api.StateRunning, Type: api.TypeSource, Tasks: 1, Offsets: offsets})
	kc.Add("files-sink", fakeconnect.Connector{Config: map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "topics": "lines"},
		State: api.StatePaused, Type: api.TypeSink, Tasks: 2, Offsets: []api.ConnectorOffset{}})
	kc.Add("jdbc", fakeconnect.Connector{Config: map[string]string{"connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector"}, State: api.StateRunning, Type: api.TypeSource})
	sl := &sluice{refuse: map[string]bool{}}
	return kc, sl, New(Config{AllowURLs: []string{kc.URL + "/"}, Connectors: sl, Plugins: sl})
}

func code(err error) api.Code {
	var ae *api.Error
	if errors.As(err, &ae) {
		return ae.Code
	}
	return 0
}

// TestOnlyAllowedURLs: a URL no --migrate-allow-url names is a 403 that
// says so, and nothing is read from it; with none set, migrations are off.
func TestOnlyAllowedURLs(t *testing.T) {
	kc, sl, s := setup(t)
	_, err := s.Migrate(context.Background(), api.MigrationRequest{URL: "http://127.0.0.1:1"}, false, allowAll)
	if code(err) != api.CodeForbidden || err.Error() != "Kafka Connect URL http://127.0.0.1:1 is not allowed: the coordinator reads only the URLs its --migrate-allow-url flags name" {
		t.Fatalf("a URL not allowed: %v", err)
	}
	off := New(Config{Connectors: sl, Plugins: sl})
	_, err = off.Migrate(context.Background(), api.MigrationRequest{URL: kc.URL}, true, allowAll)
	if code(err) != api.CodeForbidden || !strings.Contains(err.Error(), "Migrations from Kafka Connect are off on this coordinator") || !strings.Contains(err.Error(), "--migrate-allow-url") {
		t.Fatalf("no URL allowed: %v", err)
	}
	if _, err := s.Migrate(context.Background(), api.MigrationRequest{URL: "ftp://x"}, true, allowAll); code(err) != api.CodeBadRequest {
		t.Fatalf("not an http URL: %v", err)
	}
	if len(kc.Requests()) != 0 {
		t.Fatalf("read a URL it may not: %v", kc.Requests())
	}
	// The same URL in another spelling is the same URL.
	if _, err := s.Migrate(context.Background(), api.MigrationRequest{URL: strings.Replace(kc.URL, "http://", "HTTP://", 1)}, true, allowAll); err != nil {
		t.Fatal(err)
	}
}

// TestNormalize: the form URLs are compared in.
func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"http://Connect-1:8083/": "http://connect-1:8083", "https://connect:443": "https://connect", "http://c:80/api/": "http://c/api",
		" http://c:8083 ": "http://c:8083",
	} {
		if got, err := Normalize(in); err != nil || got != want {
			t.Errorf("Normalize(%q) = %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"connect:8083", "http://", "http://u:p@c:8083", "http://c:8083/?x=1", "file:///etc/passwd"} {
		if _, err := Normalize(bad); err == nil {
			t.Errorf("Normalize(%q) took it", bad)
		}
	}
	if err := CheckAllowURLs([]string{"http://ok:8083", "nope"}); err == nil || !strings.Contains(err.Error(), `--migrate-allow-url "nope"`) {
		t.Errorf("CheckAllowURLs: %v", err)
	}
}

// TestDryRunPlans: a dry run answers each connector's plan — its config,
// state and positions — and changes nothing on either side; a class
// Sluice lacks is not migrated.
func TestDryRunPlans(t *testing.T) {
	kc, sl, s := setup(t)
	out, err := s.Migrate(context.Background(), api.MigrationRequest{URL: kc.URL}, true, allowAll)
	if err != nil {
		t.Fatal(err)
	}
	want := []api.MigratedConnector{
		{Name: "files-sink", Type: api.TypeSink, Class: "org.apache.kafka.connect.file.FileStreamSinkConnector", State: api.StatePaused, Result: api.MigrationWouldMigrate,
			Config: map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "topics": "lines", "name": "files-sink"}, Offsets: []api.ConnectorOffset{}},
		{Name: "files-src", Type: api.TypeSource, Class: "FileStreamSource", State: api.StateRunning, Result: api.MigrationWouldMigrate, OffsetsCount: 1,
			Config: map[string]string{"connector.class": "FileStreamSource", "file": "/data/in.txt", "topic": "lines", "name": "files-src"}, Offsets: offsets},
		{Name: "jdbc", Type: api.TypeSource, Class: "io.confluent.connect.jdbc.JdbcSourceConnector", Result: api.MigrationNotMigrated,
			Detail: "no Sluice agent runs class io.confluent.connect.jdbc.JdbcSourceConnector"},
	}
	if !out.DryRun || out.URL != kc.URL || fmt.Sprint(out.Connectors) != fmt.Sprint(want) {
		t.Fatalf("plan\n got %+v\nwant %+v", out.Connectors, want)
	}
	if len(sl.created) != 0 || kc.State("files-src") != api.StateRunning || kc.State("files-sink") != api.StatePaused {
		t.Fatalf("a dry run changed something: created %v, source %s", sl.created, kc.State("files-src"))
	}
	for _, r := range kc.Requests() {
		if !strings.HasPrefix(r, "GET ") {
			t.Fatalf("a dry run sent %s", r)
		}
	}
}

// TestMigrates: each connector is stopped on Kafka Connect, created in
// Sluice at its positions in its state, and with delete_source deleted
// there; a refused create names its step and puts the connector back as
// it was; a name Sluice has already, or the caller may not touch, is not
// migrated; credentials are the body's, never anything else.
func TestMigrates(t *testing.T) {
	kc, sl, s := setup(t)
	kc.User, kc.Password, kc.StopAfter = "mover", "s3cret", 2
	kc.Add("taken", fakeconnect.Connector{Config: map[string]string{"connector.class": "FileStreamSource"}, State: api.StateRunning, Type: api.TypeSource})
	kc.Add("invalid", fakeconnect.Connector{Config: map[string]string{"connector.class": "FileStreamSource", "bad": "x"}, State: api.StateRunning, Type: api.TypeSource})
	kc.Add("not-mine", fakeconnect.Connector{Config: map[string]string{"connector.class": "FileStreamSource"}, State: api.StateRunning, Type: api.TypeSource})
	sl.names = []string{"taken"}
	sl.refuse["files-sink"] = true
	allow := func(name string) error {
		if name == "not-mine" {
			return errors.New("alice may not POST /sluice/migrations on connector not-mine")
		}
		return nil
	}
	if _, err := s.Migrate(context.Background(), api.MigrationRequest{URL: kc.URL}, false, allow); code(err) != 502 || !strings.Contains(err.Error(), "401") {
		t.Fatalf("without the credentials Kafka Connect asks for: %v", err)
	}
	out, err := s.Migrate(context.Background(), api.MigrationRequest{URL: kc.URL, User: "mover", Password: "s3cret", DeleteSource: true, StopTimeout: "10s"}, false, allow)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]api.MigratedConnector{}
	for _, c := range out.Connectors {
		got[c.Name] = c
	}
	if c := got["files-src"]; c.Result != api.MigrationDeletedSource || c.OffsetsCount != 1 || c.State != api.StateRunning || c.Config != nil || c.Step != "" {
		t.Errorf("files-src: %+v", c)
	}
	if c := got["files-sink"]; c.Result != api.MigrationFailed || c.Step != "create in Sluice" ||
		c.Detail != "create in Sluice: create files-sink: Connector files-sink already exists; put back to PAUSED on Kafka Connect" {
		t.Errorf("files-sink: %+v", c)
	}
	if c := got["invalid"]; c.Result != api.MigrationFailed || c.Step != "check in Sluice" || c.Detail != "check in Sluice: the config does not validate: bad: Invalid value x" {
		t.Errorf("invalid: %+v", c)
	}
	if c := got["taken"]; c.Result != api.MigrationNotMigrated || c.Detail != "a connector of that name already exists in Sluice" {
		t.Errorf("taken: %+v", c)
	}
	if c := got["not-mine"]; c.Result != api.MigrationNotMigrated || c.Detail != "alice may not POST /sluice/migrations on connector not-mine" {
		t.Errorf("not-mine: %+v", c)
	}
	want := []api.CreateConnectorRequest{{Name: "files-src", Config: map[string]string{"connector.class": "FileStreamSource", "file": "/data/in.txt", "topic": "lines", "name": "files-src"},
		InitialState: api.StateRunning, InitialOffsets: offsets}}
	if g, w := jsonOf(t, sl.created), jsonOf(t, want); g != w {
		t.Errorf("created %+v", sl.created)
	}
	if kc.State("files-src") != "" || kc.State("files-sink") != api.StatePaused || kc.State("invalid") != api.StateRunning || kc.State("not-mine") != api.StateRunning {
		t.Errorf("on Kafka Connect: files-src %q, files-sink %q, invalid %q, not-mine %q", kc.State("files-src"), kc.State("files-sink"), kc.State("invalid"), kc.State("not-mine"))
	}
	basic := "auth=Basic " + base64.StdEncoding.EncodeToString([]byte("mover:s3cret"))
	for _, r := range kc.Requests()[1:] {
		if !strings.HasSuffix(r, basic) {
			t.Errorf("a request without the body's credentials: %s", r)
		}
	}
}

// TestBadRequests: a stop timeout out of bounds, a bad glob, and a glob
// that matches nothing.
func TestBadRequests(t *testing.T) {
	kc, _, s := setup(t)
	for _, tc := range []struct {
		req  api.MigrationRequest
		code api.Code
		msg  string
	}{
		{api.MigrationRequest{URL: kc.URL, StopTimeout: "11m"}, api.CodeBadRequest, `Invalid "stop_timeout" '11m': a duration above 0 and at most 10m0s (e.g. 90s)`},
		{api.MigrationRequest{URL: kc.URL, Connectors: "[a"}, api.CodeBadRequest, `Invalid "connectors" '[a': syntax error in pattern`},
		{api.MigrationRequest{URL: kc.URL, Connectors: "orders-*"}, api.CodeNotFound, "No connector of Kafka Connect at " + kc.URL + " matches 'orders-*'"},
	} {
		if _, err := s.Migrate(context.Background(), tc.req, true, allowAll); code(err) != tc.code || err.Error() != tc.msg {
			t.Errorf("%+v: %v, want %d %s", tc.req, err, tc.code, tc.msg)
		}
	}
}
