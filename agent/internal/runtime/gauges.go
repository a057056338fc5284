package runtime

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/shared/wire"
)

// A task's own gauges (connect.GaugeReporter) reach two readers: the
// agent's /metrics, at every scrape, and the leader's gauges command
// (GET /sluice/connectors/{name}/gauges), through Worker.Gauges.

// reportGauges makes the plugin's task's gauges readable, if it reports
// any, from the moment it started until stopGauges: by the agent's
// metrics and by the gauges command, both through pluginGauges.
func (t *task) reportGauges(plugin any) {
	g, ok := plugin.(connect.GaugeReporter)
	if !ok {
		return
	}
	t.mu.Lock()
	t.gauges = g
	t.mu.Unlock()
	t.metrics.ReportGauges(t.pluginGauges)
}

// stopGauges stops every reader of the task's gauges: call it before the
// plugin's task stops, after which its Gauges may no longer be safe to
// call. A scrape until the task's series are deleted finds none.
func (t *task) stopGauges() {
	t.mu.Lock()
	t.gauges = nil
	t.mu.Unlock()
}

// pluginGauges reads the plugin's task's gauges now; none once stopped.
// Called outside t.mu: a task's Gauges may take its own locks, and must
// not wait on the task's state.
func (t *task) pluginGauges() []connect.Gauge {
	t.mu.Lock()
	g := t.gauges
	t.mu.Unlock()
	if g == nil {
		return nil
	}
	return g.Gauges()
}

// readGauges reads the task's gauges as the gauges command answers them.
func (t *task) readGauges() wire.TaskGauges {
	return wire.TaskGauges{ID: t.id, Generation: t.generation, Gauges: apiGauges(t.pluginGauges())}
}

// Gauges reads the gauges of every task of connector this worker holds,
// sorted by task.
func (w *Worker) Gauges(connector string) []wire.TaskGauges {
	w.mu.Lock()
	var tasks []*task
	for id, t := range w.tasks {
		if id.Connector == connector {
			tasks = append(tasks, t)
		}
	}
	w.mu.Unlock()
	out := make([]wire.TaskGauges, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, t.readGauges())
	}
	slices.SortFunc(out, func(a, b wire.TaskGauges) int { return cmp.Compare(a.ID.Task, b.ID.Task) })
	return out
}

// apiGauges are gauges as the REST API shows them, sorted by name then
// labels. A value JSON cannot carry (NaN, ±Inf) is left out: the agent's
// /metrics still has it.
func apiGauges(gauges []connect.Gauge) []api.Gauge {
	out := make([]api.Gauge, 0, len(gauges))
	for _, g := range gauges {
		if math.IsNaN(g.Value) || math.IsInf(g.Value, 0) {
			continue
		}
		out = append(out, api.Gauge{Name: g.Name, Help: g.Help, Labels: maps.Clone(g.Labels), Value: g.Value})
	}
	slices.SortStableFunc(out, func(a, b api.Gauge) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(labelKey(a.Labels), labelKey(b.Labels)))
	})
	return out
}

// labelKey orders label sets: their pairs, sorted by name.
func labelKey(labels map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(labels[k])
		b.WriteByte(0)
	}
	return b.String()
}
