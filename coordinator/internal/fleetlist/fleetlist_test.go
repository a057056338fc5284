package fleetlist

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/coordinator/internal/lag"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
)

// builtins finds plugins among the built-in ones, as the coordinator's
// plugin chooser does for a Go plugin.
type builtins struct{ reg *plugins.Registry }

func (b builtins) PluginOf(config map[string]string) (*connect.Plugin, bool) {
	return b.reg.LookupConnector(config["connector.class"])
}

// lags are canned last lag readings.
type lags map[string]lag.Reading

func (l lags) Last(name string) (lag.Reading, bool) { r, ok := l[name]; return r, ok }

// world is the config and status topics as a coordinator holds them,
// written record by record with their timestamps.
type world struct {
	configs  *store.ConfigState
	statuses *store.StatusState
	lags     lags
	l        *Lister
}

func newWorld(threshold int64) *world {
	w := &world{configs: store.NewConfigState(), statuses: store.NewStatusState(), lags: lags{}}
	w.l = New(Config{Configs: w.configs, Statuses: w.statuses, Plugins: builtins{plugins.Builtin()}, Lags: w.lags, LagThreshold: threshold})
	return w
}

var t0 = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)

// connector writes a connector's config, target state and n task configs
// at at.
func (w *world) connector(name, class, target string, n int, labels string, at time.Time) {
	cfg := map[string]string{"connector.class": class, "name": name}
	if labels != "" {
		cfg["sluice.labels"] = labels
	}
	w.configs.ApplyAt(records.ConfigRecord{Kind: records.KindConnector, Connector: name, Properties: cfg}, at)
	w.configs.ApplyAt(records.ConfigRecord{Kind: records.KindTargetState, Connector: name, TargetState: target}, at)
	for i := 0; i < n; i++ {
		w.configs.ApplyAt(records.ConfigRecord{Kind: records.KindTask, Connector: name, Task: i, Properties: map[string]string{}}, at)
	}
	w.configs.ApplyAt(records.ConfigRecord{Kind: records.KindCommit, Connector: name, Count: n}, at)
}

// status writes the connector's status at at.
func (w *world) status(name, state string, at time.Time) {
	w.statuses.ApplyAt(records.StatusRecord{Kind: records.StatusConnector, Connector: name, Status: &records.Status{State: state, WorkerID: "coordinator-1:8083"}}, at)
}

// task writes a task's status at at.
func (w *world) task(name string, id int, state, agent, trace string, at time.Time) {
	w.statuses.ApplyAt(records.StatusRecord{Kind: records.StatusTask, Connector: name, Task: id,
		Status: &records.Status{State: state, WorkerID: agent, Trace: &trace, Generation: 1}}, at)
}

// running writes a running connector whose tasks run on agents, one each.
func (w *world) running(name, class string, labels string, at time.Time, agents ...string) {
	w.connector(name, class, records.TargetStarted, len(agents), labels, at)
	w.status(name, api.StateRunning, at)
	for i, a := range agents {
		w.task(name, i, api.StateRunning, a, "", at)
	}
}

const (
	fileSource = "org.apache.kafka.connect.file.FileStreamSourceConnector"
	fileSink   = "org.apache.kafka.connect.file.FileStreamSinkConnector"
)

func (w *world) list(t *testing.T, q api.FleetQuery, visible func(string) bool) api.FleetConnectors {
	t.Helper()
	out, err := w.l.List(context.Background(), q, visible)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func names(out api.FleetConnectors) string {
	var ns []string
	for _, c := range out.Connectors {
		ns = append(ns, c.Name)
	}
	return strings.Join(ns, ",")
}

// TestRows: a row shows the plugin, state, tasks and their agents, labels,
// a sink's last lag, and its last change, config or status.
func TestRows(t *testing.T) {
	w := newWorld(0)
	w.running("orders-sink", "FileStreamSink", "team=orders, env=prod", t0, "agent-2", "agent-1", "agent-2")
	w.task("orders-sink", 2, api.StateFailed, "agent-2", "java.io.IOException: disk full\n\tat x", t0.Add(time.Minute))
	w.lags["orders-sink"] = lag.Reading{Total: 42, At: t0.Add(30 * time.Second)}
	w.connector("orders-src", "FileStreamSource", records.TargetStopped, 0, "", t0.Add(2*time.Minute))
	w.status("orders-src", api.StateStopped, t0.Add(time.Minute))
	w.connector("mystery", "com.example.Nope", records.TargetStarted, 0, "", t0)

	out := w.list(t, api.FleetQuery{Sort: api.SortName}, nil)
	sinkChanged, srcChanged, lagAt, mysteryChanged := t0.Add(time.Minute), t0.Add(2*time.Minute), t0.Add(30*time.Second), t0
	v := builtins{plugins.Builtin()}
	sink, _ := v.PluginOf(map[string]string{"connector.class": fileSink})
	want := []api.FleetConnector{
		{Name: "mystery", Type: api.TypeUnknown, Class: "com.example.Nope", State: api.StateUnassigned, Health: api.HealthUnassigned,
			Reason: "connector has no status yet", Agents: []string{}, Labels: map[string]string{}, Changed: &mysteryChanged},
		{Name: "orders-sink", Type: api.TypeSink, Class: fileSink, Version: sink.Version, State: api.StateRunning, Health: api.HealthDegraded,
			Reason: "task 2 FAILED: java.io.IOException: disk full", TasksRunning: 2, TasksTotal: 3, Agents: []string{"agent-1", "agent-2"},
			Labels: map[string]string{"team": "orders", "env": "prod"}, SinkLag: lagOf(42), SinkLagAt: &lagAt, Changed: &sinkChanged},
		{Name: "orders-src", Type: api.TypeSource, Class: fileSource, Version: sink.Version, State: api.StateStopped, Health: api.HealthStopped,
			Reason: "stopped", Agents: []string{}, Labels: map[string]string{}, Changed: &srcChanged},
	}
	if !reflect.DeepEqual(out.Connectors, want) {
		t.Fatalf("rows\n got %+v\nwant %+v", out.Connectors, want)
	}
	if out.Total != 3 || out.Offset != 0 || out.Limit != api.DefaultFleetLimit {
		t.Fatalf("paging %d %d %d", out.Total, out.Offset, out.Limit)
	}
	// A sink's lag from the default threshold on degrades it.
	w.task("orders-sink", 2, api.StateRunning, "agent-1", "", t0.Add(3*time.Minute))
	w.lags["orders-sink"] = lag.Reading{Total: DefaultLagThreshold, At: t0}
	if got := w.list(t, api.FleetQuery{Q: "sink"}, nil).Connectors[0]; got.Health != api.HealthDegraded || got.Reason != "sink lag 100000 records" ||
		got.Changed == nil || !got.Changed.Equal(t0.Add(3*time.Minute)) {
		t.Fatalf("a lagging sink: %+v", got)
	}
}

// fleet writes one connector of each health, two sinks, labels and agents.
func fleet(w *world) {
	w.running("a-healthy", fileSource, "team=a", t0.Add(1*time.Minute), "agent-1")
	w.running("b-degraded", fileSink, "team=b", t0.Add(2*time.Minute), "agent-1", "agent-2")
	w.task("b-degraded", 1, api.StateFailed, "agent-2", "boom", t0.Add(2*time.Minute))
	w.running("c-failed", "FileStreamSource", "team=a,env=prod", t0.Add(3*time.Minute), "agent-2")
	w.task("c-failed", 0, api.StateFailed, "agent-2", "bang", t0.Add(3*time.Minute))
	w.connector("d-paused", fileSink, records.TargetPaused, 1, "team=b", t0.Add(4*time.Minute))
	w.status("d-paused", api.StatePaused, t0.Add(4*time.Minute))
	w.task("d-paused", 0, api.StatePaused, "agent-1", "", t0.Add(4*time.Minute))
	w.connector("e-stopped", fileSource, records.TargetStopped, 0, "team=a,env=prod", t0.Add(5*time.Minute))
	w.status("e-stopped", api.StateStopped, t0.Add(5*time.Minute))
	w.running("f-unassigned", fileSource, "", t0.Add(6*time.Minute), "agent-1")
	w.task("f-unassigned", 0, api.StateUnassigned, "", "No live agent has the plugin X", t0.Add(6*time.Minute))
	w.connector("g-old", fileSource, records.TargetStarted, 0, "", time.Time{}) // no time known
	w.status("g-old", api.StateRunning, time.Time{})
}

// TestFiltersSortAndPages: every filter, alone and together; the three
// orders; offset and limit; and counts over the whole fleet whatever the
// filters.
func TestFiltersSortAndPages(t *testing.T) {
	w := newWorld(0)
	fleet(w)
	wantCounts := api.FleetCounts{
		Health: map[string]int{"healthy": 2, "degraded": 1, "failed": 1, "paused": 1, "stopped": 1, "unassigned": 1},
		State:  map[string]int{"RUNNING": 5, "PAUSED": 1, "STOPPED": 1},
		Type:   map[string]int{"source": 5, "sink": 2}}
	cases := []struct {
		name string
		q    api.FleetQuery
		want string
	}{
		{"attention by default", api.FleetQuery{}, "c-failed,b-degraded,f-unassigned,d-paused,e-stopped,a-healthy,g-old"},
		{"by name", api.FleetQuery{Sort: api.SortName}, "a-healthy,b-degraded,c-failed,d-paused,e-stopped,f-unassigned,g-old"},
		{"latest change first, unknown last", api.FleetQuery{Sort: api.SortChanged}, "f-unassigned,e-stopped,d-paused,c-failed,b-degraded,a-healthy,g-old"},
		{"q in any case", api.FleetQuery{Q: "ED"}, "c-failed,b-degraded,f-unassigned,d-paused,e-stopped"},
		{"states", api.FleetQuery{States: []string{"PAUSED", "STOPPED"}}, "d-paused,e-stopped"},
		{"healths", api.FleetQuery{Healths: []string{"healthy", "failed"}}, "c-failed,a-healthy,g-old"},
		{"type", api.FleetQuery{Types: []string{"sink"}}, "b-degraded,d-paused"},
		{"agent", api.FleetQuery{Agent: "agent-2", Sort: api.SortName}, "b-degraded,c-failed"},
		{"unassigned tasks run nowhere", api.FleetQuery{Agent: "agent-1", Sort: api.SortName}, "a-healthy,b-degraded,d-paused"},
		{"plugin by alias", api.FleetQuery{Plugin: "filestreamsink"}, "b-degraded,d-paused"},
		{"plugin by simple name", api.FleetQuery{Plugin: "FileStreamSourceConnector", Healths: []string{"failed"}}, "c-failed"},
		{"plugin by class", api.FleetQuery{Plugin: fileSink, Sort: api.SortName}, "b-degraded,d-paused"},
		{"labels, all of them", api.FleetQuery{Labels: map[string]string{"team": "a", "env": "prod"}, Sort: api.SortName}, "c-failed,e-stopped"},
		{"a label value", api.FleetQuery{Labels: map[string]string{"team": "b"}}, "b-degraded,d-paused"},
		{"nothing matches", api.FleetQuery{Q: "zzz"}, ""},
		{"a page", api.FleetQuery{Sort: api.SortName, Offset: 2, Limit: 3}, "c-failed,d-paused,e-stopped"},
		{"past the end", api.FleetQuery{Offset: 7}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := w.list(t, c.q, nil)
			if got := names(out); got != c.want {
				t.Fatalf("rows %s, want %s", got, c.want)
			}
			if !reflect.DeepEqual(out.Counts, wantCounts) {
				t.Fatalf("counts %+v, want %+v", out.Counts, wantCounts)
			}
		})
	}
	out := w.list(t, api.FleetQuery{Sort: api.SortName, Offset: 2, Limit: 3}, nil)
	if out.Total != 7 || out.Offset != 2 || out.Limit != 3 {
		t.Fatalf("paging %d %d %d", out.Total, out.Offset, out.Limit)
	}
	if out := w.list(t, api.FleetQuery{Types: []string{"sink"}, Limit: 1}, nil); out.Total != 2 || len(out.Connectors) != 1 {
		t.Fatalf("total counts the filtered rows of every page: %d, %d rows", out.Total, len(out.Connectors))
	}
}

// TestOnlyVisible: rows and counts hold only what visible lets through.
func TestOnlyVisible(t *testing.T) {
	w := newWorld(0)
	fleet(w)
	out := w.list(t, api.FleetQuery{}, func(name string) bool { return strings.HasPrefix(name, "b-") || strings.HasPrefix(name, "d-") })
	if names(out) != "b-degraded,d-paused" || out.Total != 2 {
		t.Fatalf("rows %s (%d)", names(out), out.Total)
	}
	want := api.FleetCounts{Health: map[string]int{"degraded": 1, "paused": 1}, State: map[string]int{"RUNNING": 1, "PAUSED": 1}, Type: map[string]int{"sink": 2}}
	if !reflect.DeepEqual(out.Counts, want) {
		t.Fatalf("counts %+v", out.Counts)
	}
}

// bigFleet is 5,000 connectors of which 500 run (two tasks each, on 10
// agents), every tenth of those with a failed task, the rest stopped.
func bigFleet() *world {
	w := newWorld(0)
	for i := 0; i < 5000; i++ {
		name := fmt.Sprintf("conn-%04d", i)
		team := fmt.Sprintf("team=t%d", i%20)
		if i%10 != 0 {
			w.connector(name, fileSource, records.TargetStopped, 0, team, t0)
			w.status(name, api.StateStopped, t0)
			continue
		}
		w.running(name, fileSink, team, t0.Add(time.Duration(i)*time.Second), fmt.Sprintf("agent-%d", i/10%10), fmt.Sprintf("agent-%d", (i/10+1)%10))
		if i%100 == 0 {
			w.task(name, 1, api.StateFailed, "agent-1", "boom", t0)
		}
		w.lags[name] = lag.Reading{Total: int64(i), At: t0}
	}
	return w
}

// BenchmarkFleetListAttention is the console's home page: the first page
// of a 5,000-connector fleet by attention.
func BenchmarkFleetListAttention(b *testing.B) {
	w := bigFleet()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := w.l.List(ctx, api.FleetQuery{}, nil)
		if err != nil || out.Total != 5000 || len(out.Connectors) != api.DefaultFleetLimit || out.Connectors[0].Health != api.HealthDegraded {
			b.Fatalf("%v %d %d", err, out.Total, len(out.Connectors))
		}
	}
}

// BenchmarkFleetListFiltered is a filtered page of the same fleet: one
// team's running sinks on one agent, under a viewer's grant check.
func BenchmarkFleetListFiltered(b *testing.B) {
	w := bigFleet()
	ctx := context.Background()
	q := api.FleetQuery{States: []string{api.StateRunning}, Types: []string{api.TypeSink}, Agent: "agent-0", Labels: map[string]string{"team": "t0"}, Sort: api.SortChanged}
	visible := func(name string) bool { return strings.HasPrefix(name, "conn-") }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := w.l.List(ctx, q, visible)
		if err != nil || out.Total != 50 {
			b.Fatalf("%v %d", err, out.Total)
		}
	}
}
