package connectors

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/records"
)

// TestCreateConnector: a create's refusals, in the order they are made,
// and what it writes.
func TestCreateConnector(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("n", 16400)
	tooLarge := &store.TooLargeError{Key: "connector-c", Bytes: 2000000, Limit: 1048588}
	for _, tc := range []struct {
		name     string
		req      api.CreateConnectorRequest
		existing bool
		check    func([]store.Command) error
		fail     error
		code     api.Code
		msg      string
	}{
		{name: "null config", req: api.CreateConnectorRequest{Name: "c"}, code: api.CodeBadRequest, msg: "Connector config must not be null"},
		{name: "bad initial state", req: api.CreateConnectorRequest{Name: "c", Config: sourceConfig("t"), InitialState: "ASLEEP"},
			code: api.CodeBadRequest, msg: "Invalid initial_state 'ASLEEP': must be one of RUNNING, PAUSED, STOPPED"},
		{name: "dot", req: api.CreateConnectorRequest{Name: "..", Config: sourceConfig("t")},
			code: api.CodeBadRequest, msg: "Connector name '..' is not allowed: '.' and '..' cannot be addressed in a URL"},
		{name: "too long", req: api.CreateConnectorRequest{Name: long, Config: sourceConfig("t")}, code: api.CodeBadRequest,
			msg: "Connector name '" + long[:64] + "…' is too long: 16400 bytes, and at most 16364 are allowed, so that the transactional ids of its tasks (<group.id>-<name>-<task>) stay within 16382 bytes"},
		{name: "config names another", req: api.CreateConnectorRequest{Name: "c", Config: map[string]string{"name": "d", "connector.class": "FileStreamSource"}},
			code: api.CodeBadRequest, msg: "Connector name configuration (d) doesn't match connector name in the URL (c)"},
		{name: "invalid config", req: api.CreateConnectorRequest{Name: "c", Config: map[string]string{"connector.class": "FileStreamSource", "file": "/f"}},
			code: api.CodeBadRequest},
		{name: "exists", req: api.CreateConnectorRequest{Name: "c", Config: sourceConfig("t")}, existing: true,
			code: api.CodeConflict, msg: "Connector c already exists"},
		{name: "too large", req: api.CreateConnectorRequest{Name: "c", Config: sourceConfig("t")},
			check: func([]store.Command) error { return tooLarge }, code: api.CodeTooLarge,
			msg: "Connector configuration is too large: its record in the config topic would be 2000000 bytes, over the topic's limit of 1048588 bytes"},
		{name: "deposed mid-write", req: api.CreateConnectorRequest{Name: "c", Config: sourceConfig("t")}, fail: store.ErrNotLeader,
			code: api.CodeConflict, msg: StaleMessage},
		{name: "fenced mid-write", req: api.CreateConnectorRequest{Name: "c", Config: sourceConfig("t")}, fail: kafkautil.ErrFenced,
			code: api.CodeConflict, msg: StaleMessage},
		{name: "limit changed", req: api.CreateConnectorRequest{Name: "c", Config: sourceConfig("t")}, fail: tooLarge, code: api.CodeTooLarge},
		{name: "broker away", req: api.CreateConnectorRequest{Name: "c", Config: sourceConfig("t")}, fail: errors.New("broker away"),
			code: api.CodeInternal, msg: "Failed to create connector c: broker away"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if tc.existing {
				f.create(t, "c", sourceConfig("t"), "")
			}
			f.writer.check = tc.check
			if tc.fail != nil {
				f.mem.Fail = func([]store.Command) error { return tc.fail }
			}
			before := f.writer.applied
			_, err := f.s.CreateConnector(ctx, tc.req)
			wantErr(t, err, tc.code, tc.msg)
			if tc.fail == nil && f.writer.applied != before {
				t.Errorf("a refused create wrote %d times", f.writer.applied-before)
			}
		})
	}
}

// TestCreateConnectorStates: initial_state decides the stored target
// state (any case); a create answers no tasks, as Kafka Connect does.
func TestCreateConnectorStates(t *testing.T) {
	ctx := context.Background()
	for state, want := range map[string]string{"": records.TargetStarted, "running": records.TargetStarted,
		"PAUSED": records.TargetPaused, "Stopped": records.TargetStopped} {
		f := newFixture(t)
		got, err := f.s.CreateConnector(ctx, api.CreateConnectorRequest{Name: " c ", Config: sourceConfig("t"), InitialState: state})
		if err != nil {
			t.Fatalf("%q: %v", state, err)
		}
		if got.Name != "c" || got.Type != api.TypeSource || len(got.Tasks) != 0 || got.OffsetsStatus != nil || got.Config["name"] != "c" {
			t.Errorf("%q: answered %+v", state, got)
		}
		if c, ok := f.mem.Config.Get("c"); !ok || c.TargetState != want {
			t.Errorf("%q: stored %+v, want target %s", state, c, want)
		}
	}
}

// TestPutConnectorConfig: a PUT creates or replaces, and checks a new
// name only.
func TestPutConnectorConfig(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	info, created, err := f.s.PutConnectorConfig(ctx, "c", sourceConfig("t"))
	if err != nil || !created || len(info.Tasks) != 0 || info.Type != api.TypeSource {
		t.Fatalf("create: %+v %v %v", info, created, err)
	}
	info, created, err = f.s.PutConnectorConfig(ctx, "c", sourceConfig("u"))
	if err != nil || created || info.Config["topic"] != "u" {
		t.Fatalf("replace: %+v %v %v", info, created, err)
	}
	if c, _ := f.mem.Config.Get("c"); c.Config["topic"] != "u" || c.TargetState != records.TargetStarted {
		t.Errorf("stored %+v", c)
	}
	_, _, err = f.s.PutConnectorConfig(ctx, ".", sourceConfig("t"))
	wantErr(t, err, api.CodeBadRequest, "Connector name '.' is not allowed: '.' and '..' cannot be addressed in a URL")
	_, _, err = f.s.PutConnectorConfig(ctx, "c", map[string]string{"name": "d", "connector.class": "FileStreamSource"})
	wantErr(t, err, api.CodeBadRequest, "Connector name configuration (d) doesn't match connector name in the URL (c)")

	f.mem.Fail = func([]store.Command) error { return errors.New("broker away") }
	_, _, err = f.s.PutConnectorConfig(ctx, "c", sourceConfig("v"))
	wantErr(t, err, api.CodeInternal, "Failed to write config of connector c: broker away")
}

// TestPatchConnectorConfig: a PATCH merges into the existing config and
// admits the merged config, which is what it writes.
func TestPatchConnectorConfig(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	_, err := f.s.PatchConnectorConfig(ctx, "c", map[string]*string{"topic": ptr("u")})
	wantErr(t, err, api.CodeNotFound, "Connector c not found")

	f.create(t, "c", sourceConfig("t"), records.TargetPaused)
	info, err := f.s.PatchConnectorConfig(ctx, "c", map[string]*string{"topic": ptr("u"), "batch.size": nil})
	if err != nil || info.Config["topic"] != "u" || info.Config["file"] != "/tmp/in.txt" {
		t.Fatalf("patch: %+v %v", info, err)
	}
	if c, _ := f.mem.Config.Get("c"); c.Config["topic"] != "u" || c.TargetState != records.TargetPaused {
		t.Errorf("stored %+v", c)
	}
	// Removing a required key makes the merged config invalid.
	_, err = f.s.PatchConnectorConfig(ctx, "c", map[string]*string{"topic": nil})
	wantErr(t, err, api.CodeBadRequest, "")
	// The merged config names a reserved topic.
	_, err = f.s.PatchConnectorConfig(ctx, "c", map[string]*string{"topic": ptr("sluice-configs")})
	wantErr(t, err, api.CodeBadRequest, "")
	if c, _ := f.mem.Config.Get("c"); c.Config["topic"] != "u" {
		t.Errorf("a refused patch changed the config: %+v", c)
	}
	f.writer.check = func([]store.Command) error { return errors.New("over MaxWriteBytes") }
	_, err = f.s.PatchConnectorConfig(ctx, "c", map[string]*string{"topic": ptr("w")})
	wantErr(t, err, api.CodeTooLarge, "Connector configuration is too large: over MaxWriteBytes")
}

// TestStateChanges: stop, pause and resume of an unknown connector are
// 404s; each change is written and asks for a reconcile pass.
func TestStateChanges(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	for _, change := range []func(context.Context, string) error{f.s.StopConnector, f.s.PauseConnector, f.s.ResumeConnector} {
		wantErr(t, change(ctx, "c"), api.CodeNotFound, "Unknown connector c")
	}
	f.create(t, "c", sourceConfig("t"), "")
	for _, step := range []struct {
		change func(context.Context, string) error
		want   string
	}{{f.s.PauseConnector, records.TargetPaused}, {f.s.StopConnector, records.TargetStopped}, {f.s.ResumeConnector, records.TargetStarted}} {
		triggers := f.runner.triggers
		if err := step.change(ctx, "c"); err != nil {
			t.Fatal(err)
		}
		if c, _ := f.mem.Config.Get("c"); c.TargetState != step.want {
			t.Errorf("target %s, want %s", c.TargetState, step.want)
		}
		if f.runner.triggers != triggers+1 {
			t.Errorf("no reconcile pass asked after %s", step.want)
		}
	}
	f.mem.Fail = func([]store.Command) error { return store.ErrNotLeader }
	wantErr(t, f.s.PauseConnector(ctx, "c"), api.CodeConflict, StaleMessage)
	f.mem.Fail = func([]store.Command) error { return errors.New("broker away") }
	wantErr(t, f.s.StopConnector(ctx, "c"), api.CodeInternal, "Failed to stop connector c: broker away")
	wantErr(t, f.s.ResumeConnector(ctx, "c"), api.CodeInternal, "Failed to change the state of connector c: broker away")
}

// TestDeleteConnector: a delete removes the config and the status, stops
// following the connector's own offsets topic, and resets the offsets
// first when asked to.
func TestDeleteConnector(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	wantErr(t, f.s.DeleteConnector(ctx, "c", false), api.CodeNotFound, "Connector c not found")

	own := sourceConfig("t")
	own["offsets.storage.topic"] = "c-offsets"
	f.create(t, "c", own, "")
	if err := f.s.DeleteConnector(ctx, "c", false); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.mem.Config.Get("c"); ok {
		t.Error("the connector is still there")
	}
	if len(f.statuses.written) != 1 || f.statuses.written[0].Key != records.ConnectorStatusKey("c") || f.statuses.written[0].Value != nil {
		t.Errorf("status writes %+v, want the connector's tombstone", f.statuses.written)
	}
	if len(f.offsets.forgotten) != 1 || f.offsets.forgotten[0] != "c-offsets" || len(f.offsets.reset) != 0 {
		t.Errorf("offsets: forgot %v, reset %v", f.offsets.forgotten, f.offsets.reset)
	}

	f.create(t, "d", sourceConfig("t"), "")
	if err := f.s.DeleteConnector(ctx, "d", true); err != nil {
		t.Fatal(err)
	}
	if len(f.offsets.reset) != 1 || f.offsets.reset[0] != "d" {
		t.Errorf("reset %v, want d's offsets reset first", f.offsets.reset)
	}

	// A failed status write leaves the delete done.
	f.create(t, "e", sourceConfig("t"), "")
	f.statuses.fail = errors.New("status topic away")
	if err := f.s.DeleteConnector(ctx, "e", false); err != nil {
		t.Errorf("a failed status tombstone failed the delete: %v", err)
	}
	f.create(t, "g", sourceConfig("t"), "")
	f.mem.Fail = func([]store.Command) error { return errors.New("broker away") }
	wantErr(t, f.s.DeleteConnector(ctx, "g", false), api.CodeInternal, "Failed to delete connector g: broker away")
}

// TestReads: GET of a connector, its config and its tasks.
func TestReads(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	_, err := f.s.GetConnector(ctx, "c")
	wantErr(t, err, api.CodeNotFound, "Connector c not found")
	_, err = f.s.GetConnectorConfig(ctx, "c")
	wantErr(t, err, api.CodeNotFound, "Connector c not found")
	_, err = f.s.TaskConfigs(ctx, "c")
	wantErr(t, err, api.CodeNotFound, "Connector c not found")

	f.create(t, "c", sourceConfig("t"), "")
	if err := f.mem.Apply(ctx, store.PutTaskConfigs{Name: "c", Tasks: []map[string]string{{"task": "0"}}}); err != nil {
		t.Fatal(err)
	}
	info, err := f.s.GetConnector(ctx, "c")
	if err != nil || len(info.Tasks) != 1 || info.Type != api.TypeSource {
		t.Errorf("info %+v %v", info, err)
	}
	tasks, err := f.s.TaskConfigs(ctx, "c")
	if err != nil || len(tasks) != 1 || tasks[0].Config["task"] != "0" {
		t.Errorf("tasks %+v %v", tasks, err)
	}
	names, _ := f.s.ListConnectors(ctx)
	if len(names) != 1 || names[0] != "c" {
		t.Errorf("names %v", names)
	}
	// A stopped connector has no tasks to show.
	if err := f.s.StopConnector(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if info, _ := f.s.GetConnector(ctx, "c"); len(info.Tasks) != 0 {
		t.Errorf("a stopped connector shows tasks %+v", info.Tasks)
	}
}

// TestRestartTask: a task restart names an existing task of a connector
// that is not stopped.
func TestRestartTask(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	wantErr(t, f.s.RestartTask(ctx, "c", 0), api.CodeNotFound, "Unknown connector: c")
	f.create(t, "c", sourceConfig("t"), "")
	if err := f.mem.Apply(ctx, store.PutTaskConfigs{Name: "c", Tasks: []map[string]string{{}}}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, f.s.RestartTask(ctx, "c", 1), api.CodeNotFound, "Unknown task: c-1")
	wantErr(t, f.s.RestartTask(ctx, "c", -1), api.CodeNotFound, "Unknown task: c--1")
	if err := f.s.RestartTask(ctx, "c", 0); err != nil {
		t.Fatal(err)
	}
	if len(f.runner.tasks) != 1 || f.runner.tasks[0] != (api.TaskID{Connector: "c", Task: 0}) {
		t.Errorf("restarted %v", f.runner.tasks)
	}
	_, err := f.s.RestartConnector(ctx, "d", false, false)
	wantErr(t, err, api.CodeNotFound, "Unknown connector: d")
	if st, err := f.s.RestartConnector(ctx, "c", false, false); err != nil || st != nil || len(f.runner.instances) != 1 {
		t.Errorf("connector restart: %v %v, instances %v", st, err, f.runner.instances)
	}
}

// TestBulkAction: the selector's forms, an unknown action, and a refused
// connector answered 403 and left alone.
func TestBulkAction(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.create(t, "a-1", sourceConfig("t"), "")
	f.create(t, "a-2", sourceConfig("t"), "")
	f.create(t, "b-1", sourceConfig("t"), "")
	_, err := f.s.BulkAction(ctx, "nap", api.Selector{Match: "a-*"}, false, false, nil)
	wantErr(t, err, api.CodeNotFound, `Unknown bulk action "nap": give pause, resume, stop or restart`)
	_, err = f.s.BulkAction(ctx, "pause", api.Selector{}, false, false, nil)
	wantErr(t, err, api.CodeBadRequest, msgSelectorForm)
	_, err = f.s.BulkAction(ctx, "pause", api.Selector{Names: []string{"a-1"}, Match: "a-*"}, false, false, nil)
	wantErr(t, err, api.CodeBadRequest, msgSelectorForm)
	_, err = f.s.BulkAction(ctx, "pause", api.Selector{Match: "z-*"}, false, false, nil)
	wantErr(t, err, api.CodeBadRequest, `The selector matches no connector: no connector's name matches "z-*"`)
	_, err = f.s.BulkAction(ctx, "pause", api.Selector{Match: "a-["}, false, false, nil)
	wantErr(t, err, api.CodeBadRequest, "")

	deny := func(c string) error {
		if c == "a-2" {
			return errors.New("not yours")
		}
		return nil
	}
	res, err := f.s.BulkAction(ctx, "pause", api.Selector{Match: "a-*"}, false, false, deny)
	if err != nil {
		t.Fatal(err)
	}
	want := []api.BulkResult{{Connector: "a-1", Status: 202}, {Connector: "a-2", Status: 403, Message: "not yours"}}
	if len(res.Results) != 2 || res.Results[0] != want[0] || res.Results[1] != want[1] {
		t.Errorf("results %+v, want %+v", res.Results, want)
	}
	if c, _ := f.mem.Config.Get("a-2"); c.TargetState != records.TargetStarted {
		t.Errorf("a refused connector was paused")
	}
	res, _ = f.s.BulkAction(ctx, "stop", api.Selector{Names: []string{"b-1", "gone", "b-1"}}, false, false, nil)
	if len(res.Results) != 2 || res.Results[0].Status != 204 || res.Results[1].Status != 404 || res.Results[1].Message != "Unknown connector gone" {
		t.Errorf("results %+v", res.Results)
	}
}

func ptr(s string) *string { return &s }
