package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/sluicetest"
)

// wait bounds how long a test waits for a state the cluster reaches by
// itself (a task running, an audit record written).
const wait = 30 * time.Second

// newClient is a client of the package's cluster.
func newClient(t *testing.T) *api.Client {
	t.Helper()
	c, err := api.NewClient(api.Config{Address: cluster.URL, UserAgent: "sluice-client-e2e"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ctxFor is a context bounded for one subtest.
func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// must fails the test on err, naming what failed.
func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// waitState waits until the connector shows state, with tasks tasks all in
// it.
func waitState(t *testing.T, c *api.Client, name, state string, tasks int) api.ConnectorStateInfo {
	t.Helper()
	var st api.ConnectorStateInfo
	sluicetest.Eventually(t, wait, func() (bool, string) {
		var err error
		if st, err = c.Connectors().Status(context.Background(), name); err != nil {
			return false, err.Error()
		}
		if st.Connector.State != state || len(st.Tasks) != tasks {
			return false, fmt.Sprintf("%+v", st)
		}
		for _, ts := range st.Tasks {
			if ts.State != state {
				return false, fmt.Sprintf("%+v", st)
			}
		}
		return true, ""
	})
	return st
}

// sourceConfig is a file source's config reading file into topic.
func sourceConfig(file, topic string) map[string]string {
	return map[string]string{"connector.class": "FileStreamSource", "file": file, "topic": topic}
}

// TestAdmin: the coordinator's own endpoints.
func TestAdmin(t *testing.T) {
	c, ctx := newClient(t), ctxFor(t)
	info, err := c.Admin().ServerInfo(ctx)
	must(t, "server info", err)
	if info.Version != api.KafkaConnectVersion || info.SluiceVersion == "" || info.KafkaClusterID == "" {
		t.Fatalf("server info %+v, want the Kafka Connect level %s and Sluice's own version", info, api.KafkaConnectVersion)
	}
	h, err := c.Admin().Health(ctx)
	must(t, "health", err)
	if h.Status != "healthy" || h.Role != "leader" {
		t.Fatalf("health %+v", h)
	}
	ready, err := c.Admin().Readiness(ctx)
	must(t, "readiness", err)
	if ready.Role != "leader" || len(ready.Checks) == 0 {
		t.Fatalf("readiness %+v", ready)
	}
	metrics, err := c.Admin().Metrics(ctx)
	must(t, "metrics", err)
	if !strings.Contains(metrics, "sluice_") {
		t.Fatalf("metrics without a sluice_ family: %.200s", metrics)
	}
	doc, err := c.Admin().OpenAPIDocument(ctx)
	must(t, "openapi", err)
	if !bytes.Equal(doc, api.OpenAPI()) {
		t.Fatalf("GET /openapi.json (%d bytes) is not this module's document (%d bytes)", len(doc), len(api.OpenAPI()))
	}
	changed, err := c.Admin().SetLoggerLevel(ctx, "org.example.client", "DEBUG")
	must(t, "set logger level", err)
	if !slices.Contains(changed, "org.example.client") {
		t.Fatalf("changed loggers %v", changed)
	}
	lvl, err := c.Admin().Logger(ctx, "org.example.client")
	must(t, "logger", err)
	if lvl.Level != "DEBUG" || lvl.LastModified == nil {
		t.Fatalf("logger %+v", lvl)
	}
	all, err := c.Admin().Loggers(ctx)
	must(t, "loggers", err)
	if all["org.example.client"].Level != "DEBUG" {
		t.Fatalf("loggers %v", all)
	}
	must(t, "cluster logger level", c.Admin().SetClusterLoggerLevel(ctx, "org.example.client", "WARN"))
	sluicetest.Eventually(t, wait, func() (bool, string) {
		lvl, err := c.Admin().Logger(ctx, "org.example.client")
		return err == nil && lvl.Level == "WARN", fmt.Sprintf("%+v %v", lvl, err)
	})
	if _, err := c.Admin().Logger(ctx, "no.such.logger"); !api.IsCode(err, api.CodeNotFound) {
		t.Fatalf("unknown logger: %v", err)
	}
}

// TestPlugins: the plugins and a config's validation.
func TestPlugins(t *testing.T) {
	c, ctx := newClient(t), ctxFor(t)
	plugins, err := c.Plugins().List(ctx)
	must(t, "list", err)
	if !slices.ContainsFunc(plugins, func(p api.PluginInfo) bool { return strings.HasSuffix(p.Class, "FileStreamSourceConnector") }) {
		t.Fatalf("plugins %+v: no file source", plugins)
	}
	every, err := c.Plugins().ListAll(ctx)
	must(t, "list all", err)
	if len(every) <= len(plugins) {
		t.Fatalf("%d plugins with the transformations, %d without", len(every), len(plugins))
	}
	keys, err := c.Plugins().Config(ctx, "FileStreamSource")
	must(t, "config", err)
	if !slices.ContainsFunc(keys, func(k api.ConfigKeyInfo) bool { return k.Name == "file" }) {
		t.Fatalf("config keys %+v: no file", keys)
	}
	res, err := c.Plugins().Validate(ctx, "FileStreamSource", map[string]string{"connector.class": "FileStreamSource", "topic": "t"})
	must(t, "validate", err)
	if res.ErrorCount == 0 {
		t.Fatalf("a file source without a file validated: %+v", res)
	}
}

// TestConnectorsAndOffsets: a connector's whole life, and its offsets'.
func TestConnectorsAndOffsets(t *testing.T) {
	c, ctx := newClient(t), ctxFor(t)
	name, topic, file := cluster.Name("src"), cluster.Name("lines"), "client-src.txt"
	sluicetest.CreateTopic(t, cluster.Brokers, topic, 1)
	must(t, "write the file", os.WriteFile(filepath.Join(cluster.WorkDir, file), []byte("one\ntwo\nthree\n"), 0o644))
	partition := map[string]any{"filename": file}

	created, err := c.Connectors().Create(ctx, api.CreateConnectorRequest{Name: name, Config: sourceConfig(file, topic),
		InitialState: api.StateStopped, InitialOffsets: []api.ConnectorOffset{{Partition: partition, Offset: map[string]any{"position": 4}}}})
	must(t, "create", err)
	if created.Name != name || created.OffsetsStatus == nil || created.Type != api.TypeSource {
		t.Fatalf("created %+v", created)
	}
	_, err = c.Connectors().Create(ctx, api.CreateConnectorRequest{Name: name, Config: sourceConfig(file, topic)})
	if e, ok := err.(*api.Error); !ok || e.Code != api.CodeConflict || e.Message != "Connector "+name+" already exists" {
		t.Fatalf("second create: %T %v", err, err)
	}
	_, err = c.Connectors().Get(ctx, name+"-none")
	if e, ok := err.(*api.Error); !ok || e.Code != api.CodeNotFound || e.Message != "Connector "+name+"-none not found" {
		t.Fatalf("get of an unknown connector: %T %v", err, err)
	}

	names, err := c.Connectors().List(ctx)
	must(t, "list", err)
	if !slices.Contains(names, name) {
		t.Fatalf("list %v", names)
	}
	// A connector whose first status record is still on its way is left
	// out of ?expand=status, as Kafka Connect leaves it out.
	sluicetest.Eventually(t, wait, func() (bool, string) {
		expanded, err := c.Connectors().ListExpanded(ctx, true, true)
		if err != nil {
			return false, "list expanded: " + err.Error()
		}
		e := expanded[name]
		return e.Status != nil && e.Info != nil && e.Status.Connector.State == api.StateStopped, fmt.Sprintf("expanded %+v", e)
	})
	cfg, err := c.Connectors().Config(ctx, name)
	must(t, "config", err)
	if cfg["file"] != file {
		t.Fatalf("config %v", cfg)
	}

	// Offsets while STOPPED: read, alter, preview, history, undo.
	off, err := c.Offsets().Get(ctx, name)
	must(t, "offsets", err)
	if len(off.Offsets) != 1 || off.Offsets[0].Offset["position"] != json.Number("4") {
		t.Fatalf("offsets %+v", off)
	}
	msg, err := c.Offsets().Alter(api.WithReason(ctx, "client e2e"), name, []api.ConnectorOffset{{Partition: partition, Offset: map[string]any{"position": 8}}})
	must(t, "alter", err)
	if !strings.Contains(msg.Message, "altered successfully") {
		t.Fatalf("alter: %q", msg.Message)
	}
	preview, err := c.Offsets().Preview(ctx, name, api.OffsetsPreviewRequest{Reset: true})
	must(t, "preview", err)
	if !preview.DryRun || len(preview.Changes) != 1 || preview.Changes[0].To != nil {
		t.Fatalf("preview %+v", preview)
	}
	hist, err := c.Offsets().History(ctx, name, api.HistoryQuery{Limit: 10})
	must(t, "history", err)
	if len(hist.Entries) != 2 || hist.Entries[0].Operation != api.HistoryAlter || hist.Entries[0].Reason != "client e2e" || hist.Entries[1].Operation != api.HistoryCreate {
		t.Fatalf("history %+v", hist)
	}
	entry, err := c.Offsets().HistoryEntry(ctx, name, hist.Entries[0].ID)
	must(t, "history entry", err)
	if entry.ID != hist.Entries[0].ID || len(entry.Changes) != 1 {
		t.Fatalf("entry %+v", entry)
	}
	undo, err := c.Offsets().Undo(ctx, name, entry.ID, api.UndoOptions{DryRun: true})
	must(t, "undo", err)
	if !undo.DryRun || len(undo.Changes) != 1 || undo.Changes[0].To["position"] != json.Number("4") {
		t.Fatalf("undo %+v", undo)
	}
	restore, err := c.Offsets().Restore(ctx, name, api.OffsetsRestoreRequest{From: name, Entry: entry.ID, Positions: "before", DryRun: true})
	must(t, "restore", err)
	if !restore.DryRun || len(restore.Changes) != 1 {
		t.Fatalf("restore %+v", restore)
	}

	// Running: resume, tasks, topics, pause, restarts.
	must(t, "resume", c.Connectors().Resume(ctx, name))
	waitState(t, c, name, api.StateRunning, 1)
	tasks, err := c.Connectors().Tasks(ctx, name)
	must(t, "tasks", err)
	if len(tasks) != 1 || tasks[0].ID.Connector != name {
		t.Fatalf("tasks %+v", tasks)
	}
	ts, err := c.Connectors().TaskStatus(ctx, name, 0)
	must(t, "task status", err)
	if ts.State != api.StateRunning {
		t.Fatalf("task status %+v", ts)
	}
	// The file source reports no gauges of its own: its task is listed,
	// on its agent, with none.
	gauges, err := c.Connectors().Gauges(ctx, name)
	must(t, "gauges", err)
	if gauges.Connector != name || len(gauges.Tasks) != 1 || gauges.Tasks[0].WorkerID != ts.WorkerID ||
		gauges.Tasks[0].Error != "" || gauges.Tasks[0].Gauges == nil || len(gauges.Tasks[0].Gauges) != 0 {
		t.Fatalf("gauges %+v", gauges)
	}
	sluicetest.Eventually(t, wait, func() (bool, string) {
		topics, err := c.Connectors().Topics(ctx, name)
		return err == nil && slices.Contains(topics, topic), fmt.Sprintf("%v %v", topics, err)
	})
	must(t, "pause", c.Connectors().Pause(ctx, name))
	waitState(t, c, name, api.StatePaused, 1)
	must(t, "resume", c.Connectors().Resume(ctx, name))
	waitState(t, c, name, api.StateRunning, 1)
	st, err := c.Connectors().Restart(ctx, name, api.RestartOptions{IncludeTasks: true})
	must(t, "restart", err)
	if st == nil || st.Name != name {
		t.Fatalf("restart status %+v", st)
	}
	if st, err := c.Connectors().Restart(ctx, name, api.RestartOptions{}); err != nil || st != nil {
		t.Fatalf("restart of the connector alone: %+v %v", st, err)
	}
	waitState(t, c, name, api.StateRunning, 1)
	must(t, "restart task", c.Connectors().RestartTask(ctx, name, 0))
	waitState(t, c, name, api.StateRunning, 1)

	// Config changes.
	size := "10"
	patched, err := c.Connectors().PatchConfig(ctx, name, map[string]*string{"batch.size": &size})
	must(t, "patch config", err)
	if patched.Config["batch.size"] != "10" {
		t.Fatalf("patched %+v", patched)
	}
	info, created2, err := c.Connectors().PutConfig(ctx, name, patched.Config)
	must(t, "put config", err)
	if created2 || info.Name != name {
		t.Fatalf("put config: %+v created %v", info, created2)
	}
	got, err := c.Connectors().Get(ctx, name)
	must(t, "get", err)
	if got.Config["batch.size"] != "10" || got.Type != api.TypeSource {
		t.Fatalf("get %+v", got)
	}

	// Stopped again: topics reset, a dry-run move, an offsets reset, delete.
	must(t, "stop", c.Connectors().Stop(ctx, name))
	waitState(t, c, name, api.StateStopped, 0)
	must(t, "reset topics", c.Connectors().ResetTopics(ctx, name))
	move, err := c.Offsets().Move(ctx, name, api.MoveRequest{To: name + "-moved", DryRun: true})
	must(t, "move", err)
	if !move.DryRun || move.To != name+"-moved" || len(move.Steps) == 0 {
		t.Fatalf("move %+v", move)
	}
	reset, err := c.Offsets().Reset(ctx, name)
	must(t, "reset", err)
	if !strings.Contains(reset.Message, "reset successfully") {
		t.Fatalf("reset %q", reset.Message)
	}
	if off, err := c.Offsets().Get(ctx, name); err != nil || len(off.Offsets) != 0 {
		t.Fatalf("offsets after the reset: %+v %v", off, err)
	}
	must(t, "delete", c.Connectors().Delete(ctx, name))
	if _, err := c.Connectors().Status(ctx, name); !api.IsCode(err, api.CodeNotFound) {
		t.Fatalf("status after the delete: %v", err)
	}
}

// TestSinkOffsets: a sink's lag and its positions reset by rule.
func TestSinkOffsets(t *testing.T) {
	c, ctx := newClient(t), ctxFor(t)
	name, topic := cluster.Name("sink"), cluster.Name("sink-in")
	sluicetest.CreateTopic(t, cluster.Brokers, topic, 2)
	_, err := c.Connectors().Create(ctx, api.CreateConnectorRequest{Name: name, InitialState: api.StateStopped,
		Config: map[string]string{"connector.class": "FileStreamSink", "file": "client-sink.txt", "topics": topic}})
	must(t, "create", err)
	lag, err := c.Connectors().Lag(ctx, name)
	must(t, "lag", err)
	if lag.Connector != name || len(lag.Partitions) != 2 {
		t.Fatalf("lag %+v", lag)
	}
	plan, err := c.Offsets().ResetTo(ctx, name, api.OffsetsResetRequest{To: api.ResetEarliest, DryRun: true})
	must(t, "reset to", err)
	if !plan.DryRun {
		t.Fatalf("reset to %+v", plan)
	}
	must(t, "delete resetting offsets", c.Connectors().DeleteResettingOffsets(ctx, name))
}

// TestFleet: agents, drains, rebalances, bulk actions, maintenance
// windows and rollouts.
func TestFleet(t *testing.T) {
	c, ctx := newClient(t), ctxFor(t)
	agents, err := c.Fleet().Agents(ctx)
	must(t, "agents", err)
	if len(agents.Agents) != 2 {
		t.Fatalf("agents %+v", agents)
	}
	id := agents.Agents[0].ID
	a, err := c.Fleet().Agent(ctx, id)
	must(t, "agent", err)
	if a.ID != id || !a.Registered {
		t.Fatalf("agent %+v", a)
	}
	if a, err = c.Fleet().Cordon(ctx, id); err != nil || a.State != api.AgentCordoned {
		t.Fatalf("cordon: %+v %v", a, err)
	}
	if a, err = c.Fleet().Uncordon(ctx, id); err != nil || a.State != api.AgentActive {
		t.Fatalf("uncordon: %+v %v", a, err)
	}

	// Generators that keep running, for the bulk actions and a rollout.
	topic := cluster.Name("gen")
	sluicetest.CreateTopic(t, cluster.Brokers, topic, 1)
	var names []string
	for i := range 2 {
		n := cluster.Name(fmt.Sprintf("gen-%d", i))
		names = append(names, n)
		_, err := c.Connectors().Create(ctx, api.CreateConnectorRequest{Name: n,
			Config: map[string]string{"connector.class": "GeneratorSource", "topic": topic, "rate": "5"}})
		must(t, "create "+n, err)
		waitState(t, c, n, api.StateRunning, 1)
	}
	sel := api.Selector{Names: names}

	drain, err := c.Fleet().Drain(ctx, id, false)
	must(t, "drain", err)
	if drain.Agent != id {
		t.Fatalf("drain %+v", drain)
	}
	sluicetest.Eventually(t, wait, func() (bool, string) {
		d, err := c.Fleet().DrainStatus(ctx, id)
		return err == nil && d.State == api.DrainDone, fmt.Sprintf("%+v %v", d, err)
	})
	_, err = c.Fleet().Uncordon(ctx, id)
	must(t, "uncordon after the drain", err)
	plan, err := c.Fleet().Rebalance(ctx, api.RebalanceOptions{MaxMoves: 1, DryRun: true})
	must(t, "rebalance plan", err)
	if !plan.DryRun {
		t.Fatalf("plan %+v", plan)
	}
	started, err := c.Fleet().Rebalance(ctx, api.RebalanceOptions{MaxMoves: 1})
	must(t, "rebalance", err)
	sluicetest.Eventually(t, wait, func() (bool, string) {
		r, err := c.Fleet().RebalanceStatus(ctx)
		return err == nil && r.ID == started.ID && r.State == "done", fmt.Sprintf("%+v %v", r, err)
	})

	for _, bulk := range []struct {
		verb, state string
		send        func(context.Context, api.Selector) (api.BulkResults, error)
	}{{"pause", api.StatePaused, c.Fleet().PauseConnectors}, {"resume", api.StateRunning, c.Fleet().ResumeConnectors}} {
		res, err := bulk.send(ctx, sel)
		must(t, bulk.verb, err)
		if len(res.Results) != 2 || res.Results[0].Status >= 300 || res.Results[1].Status >= 300 {
			t.Fatalf("%s: %+v", bulk.verb, res)
		}
		for _, n := range names {
			waitState(t, c, n, bulk.state, 1)
		}
	}
	res, err := c.Fleet().RestartConnectors(ctx, sel, api.RestartOptions{IncludeTasks: true})
	must(t, "bulk restart", err)
	if len(res.Results) != 2 {
		t.Fatalf("bulk restart %+v", res)
	}
	for _, n := range names {
		waitState(t, c, n, api.StateRunning, 1)
	}

	// A rollout held at its health gate, paused, resumed and aborted.
	rate := "6"
	r, err := c.Fleet().CreateRollout(ctx, api.RolloutRequest{Selector: sel, Patch: map[string]*string{"rate": &rate},
		Batches: []json.RawMessage{json.RawMessage(`"rest"`)}, Health: api.RolloutHealth{RunningFor: "1h"}})
	must(t, "create rollout", err)
	if r.ID == "" || r.State != api.RolloutRunning {
		t.Fatalf("rollout %+v", r)
	}
	list, err := c.Fleet().Rollouts(ctx)
	must(t, "rollouts", err)
	if !slices.ContainsFunc(list.Rollouts, func(x api.Rollout) bool { return x.ID == r.ID }) {
		t.Fatalf("rollouts %+v", list)
	}
	if r, err = c.Fleet().PauseRollout(ctx, r.ID); err != nil || r.State != api.RolloutPaused {
		t.Fatalf("pause rollout: %+v %v", r, err)
	}
	if r, err = c.Fleet().ResumeRollout(ctx, r.ID); err != nil || r.State != api.RolloutRunning {
		t.Fatalf("resume rollout: %+v %v", r, err)
	}
	if r, err = c.Fleet().AbortRollout(ctx, r.ID); err != nil || r.State != api.RolloutAborted {
		t.Fatalf("abort rollout: %+v %v", r, err)
	}
	if got, err := c.Fleet().Rollout(ctx, r.ID); err != nil || got.State != api.RolloutAborted {
		t.Fatalf("rollout: %+v %v", got, err)
	}

	// A maintenance window over both.
	w, err := c.Fleet().OpenMaintenance(ctx, api.MaintenanceRequest{Selector: sel, State: api.StatePaused, Reason: "client e2e"})
	must(t, "open maintenance", err)
	if w.ID == "" || len(w.Connectors) != 2 {
		t.Fatalf("window %+v", w)
	}
	windows, err := c.Fleet().MaintenanceWindows(ctx)
	must(t, "maintenance windows", err)
	if !slices.ContainsFunc(windows.Windows, func(x api.MaintenanceWindow) bool { return x.ID == w.ID }) {
		t.Fatalf("windows %+v", windows)
	}
	if got, err := c.Fleet().MaintenanceWindow(ctx, w.ID); err != nil || got.Reason != "client e2e" {
		t.Fatalf("window: %+v %v", got, err)
	}
	closed, err := c.Fleet().CloseMaintenance(ctx, w.ID)
	must(t, "close maintenance", err)
	if len(closed.Connectors) != 2 || closed.Connectors[0].Outcome != "restored" {
		t.Fatalf("closed %+v", closed)
	}

	stopped, err := c.Fleet().StopConnectors(ctx, sel)
	must(t, "bulk stop", err)
	if len(stopped.Results) != 2 {
		t.Fatalf("bulk stop %+v", stopped)
	}
	for _, n := range names {
		must(t, "delete "+n, c.Connectors().Delete(ctx, n))
	}
}

// TestAudit: the writes of the other tests are in the audit trail.
func TestAudit(t *testing.T) {
	c, ctx := newClient(t), ctxFor(t)
	name := cluster.Name("audited")
	_, err := c.Connectors().Create(ctx, api.CreateConnectorRequest{Name: name, InitialState: api.StateStopped,
		Config: map[string]string{"connector.class": "GeneratorSource", "topic": cluster.Name("gen")}})
	must(t, "create", err)
	must(t, "delete", c.Connectors().Delete(ctx, name))
	sluicetest.Eventually(t, wait, func() (bool, string) {
		log, err := c.Audit().Log(ctx, api.AuditQuery{Connector: name, Since: time.Now().Add(-time.Hour), Limit: 10})
		if err != nil || len(log.Records) != 2 {
			return false, fmt.Sprintf("%+v %v", log, err)
		}
		newest, oldest := log.Records[0], log.Records[1]
		return newest.Operation == "connector.delete" && oldest.Operation == "connector.create" && oldest.Status == 201,
			fmt.Sprintf("%+v", log.Records)
	})
}

// TestRetriesAcrossARestart: a call made while the coordinator is down is
// sent again until it is back, within the call's deadline.
func TestRetriesAcrossARestart(t *testing.T) {
	refused := make(chan struct{}, 1)
	c, err := api.NewClient(api.Config{Address: cluster.URL, HTTPClient: &http.Client{Transport: &noticeRefusals{refused: refused}},
		Retry: &api.RetryPolicy{MaxAttempts: 1000, MinBackoff: 50 * time.Millisecond, MaxBackoff: 300 * time.Millisecond}})
	must(t, "client", err)
	cluster.StopCoordinator()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.Connectors().List(ctx)
		done <- err
	}()
	select {
	case <-refused:
	case err := <-done:
		t.Fatalf("a call to a stopped coordinator ended: %v", err)
	}
	must(t, "restart the coordinator", cluster.TryStartCoordinator())
	if err := <-done; err != nil {
		t.Fatalf("the call made during the restart: %v", err)
	}
	sluicetest.Eventually(t, wait, func() (bool, string) {
		n := cluster.Coordinator.RegisteredAgents()
		return n == 2, fmt.Sprintf("%d agents registered again", n)
	})
	// Once back, a short deadline still ends a call the server holds: here,
	// a refused address that never comes back.
	dead, err := api.NewClient(api.Config{Address: "127.0.0.1:1"})
	must(t, "client", err)
	short, cancel2 := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel2()
	_, err = dead.Connectors().List(short)
	var ce *api.ConnError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ce) || ce.Address != "http://127.0.0.1:1" {
		t.Fatalf("error %v: want the deadline and the refused address", err)
	}
}

// noticeRefusals is a transport that says, once, that a connection was
// refused.
type noticeRefusals struct{ refused chan struct{} }

// RoundTrip implements http.RoundTripper.
func (n *noticeRefusals) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if errors.Is(err, syscall.ECONNREFUSED) {
		select {
		case n.refused <- struct{}{}:
		default:
		}
	}
	return resp, err
}

// TestCreateKeepsOrWipesOffsets: a nil InitialOffsets leaves the field out,
// so a new connector of a deleted one's name resumes from its offsets; an
// empty one sends [], which wipes them.
func TestCreateKeepsOrWipesOffsets(t *testing.T) {
	c, ctx := newClient(t), ctxFor(t)
	name, file := cluster.Name("again"), "client-again.txt"
	cfg := sourceConfig(file, cluster.Name("again-lines"))
	partition := map[string]any{"filename": file}
	positions := func() []api.ConnectorOffset {
		t.Helper()
		off, err := c.Offsets().Get(ctx, name)
		must(t, "offsets", err)
		return off.Offsets
	}
	_, err := c.Connectors().Create(ctx, api.CreateConnectorRequest{Name: name, Config: cfg, InitialState: api.StateStopped,
		InitialOffsets: []api.ConnectorOffset{{Partition: partition, Offset: map[string]any{"position": 3}}}})
	must(t, "create", err)
	must(t, "delete", c.Connectors().Delete(ctx, name))
	_, err = c.Connectors().Create(ctx, api.CreateConnectorRequest{Name: name, Config: cfg, InitialState: api.StateStopped})
	must(t, "create again", err)
	if got := positions(); len(got) != 1 || got[0].Offset["position"] != json.Number("3") {
		t.Fatalf("offsets kept: %+v", got)
	}
	must(t, "delete again", c.Connectors().Delete(ctx, name))
	_, err = c.Connectors().Create(ctx, api.CreateConnectorRequest{Name: name, Config: cfg, InitialState: api.StateStopped,
		InitialOffsets: []api.ConnectorOffset{}})
	must(t, "create wiping", err)
	if got := positions(); len(got) != 0 {
		t.Fatalf("offsets after a create with []: %+v", got)
	}
	must(t, "delete at last", c.Connectors().Delete(ctx, name))
}

// TestFailoverToAnotherCoordinator: with two coordinators' addresses, a
// write made once the leader is gone is refused a connection there and
// goes to the other one (the client stays on it), which answers 409 until
// it leads, and then applies it. The first coordinator comes back after,
// as a follower, for the examples.
func TestFailoverToAnotherCoordinator(t *testing.T) {
	_, second := cluster.StartExtraCoordinator()
	sluicetest.WaitKnowsLeader(t, second)
	c, err := api.NewClient(api.Config{Address: cluster.URL, Addresses: []string{second},
		Retry: &api.RetryPolicy{MaxAttempts: 500, MinBackoff: 50 * time.Millisecond, MaxBackoff: 500 * time.Millisecond}})
	must(t, "client", err)
	ctx := ctxFor(t)
	name, topic := cluster.Name("failover"), cluster.Name("failover-gen")
	sluicetest.CreateTopic(t, cluster.Brokers, topic, 1)
	_, err = c.Connectors().Create(ctx, api.CreateConnectorRequest{Name: name, InitialState: api.StateStopped,
		Config: map[string]string{"connector.class": "GeneratorSource", "topic": topic}})
	must(t, "create", err)

	cluster.StopCoordinator() // the leader
	must(t, "resume during the failover", c.Connectors().Resume(ctx, name))
	if c.Address() != second {
		t.Fatalf("the client is on %s, want the surviving %s", c.Address(), second)
	}
	sluicetest.Eventually(t, wait, func() (bool, string) {
		agents, err := c.Fleet().Agents(ctx)
		if err != nil {
			return false, err.Error()
		}
		registered := 0
		for _, a := range agents.Agents {
			if a.Registered {
				registered++
			}
		}
		return registered == 2, fmt.Sprintf("%d agents registered with the new leader", registered)
	})
	waitState(t, c, name, api.StateRunning, 1)
	must(t, "delete", c.Connectors().Delete(ctx, name))

	must(t, "restart the first coordinator", cluster.TryStartCoordinator())
	sluicetest.WaitKnowsLeader(t, cluster.URL)
}
