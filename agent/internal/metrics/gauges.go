package metrics

import (
	"maps"
	"regexp"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/connect"
)

// GaugePrefix begins the name of every gauge a task reports of itself.
const GaugePrefix = "sluice_connector_"

// taskGauges collects, at each scrape, the gauges the running tasks report
// of themselves (connect.GaugeReporter). It describes nothing up front —
// the names are the tasks' — which makes it an unchecked collector.
type taskGauges struct {
	constLabels prometheus.Labels
	mu          sync.Mutex
	report      map[[2]string]func() []connect.Gauge
}

// validName is what Prometheus accepts of a metric or label name.
var validName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// Describe implements prometheus.Collector: nothing, as an unchecked
// collector does.
func (*taskGauges) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector. A gauge whose name or labels
// Prometheus would refuse is left out rather than failing the scrape.
func (g *taskGauges) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	reports := maps.Clone(g.report)
	g.mu.Unlock()
	for key, report := range reports {
		for _, gauge := range report() {
			if !validName.MatchString(gauge.Name) {
				continue
			}
			names := slices.Sorted(maps.Keys(gauge.Labels))
			values := []string{key[0], key[1]}
			ok := true
			for _, n := range names {
				ok = ok && validName.MatchString(n) && n != LabelAgent && n != LabelConnector && n != LabelTask
				values = append(values, gauge.Labels[n])
			}
			if !ok {
				continue
			}
			desc := prometheus.NewDesc(GaugePrefix+gauge.Name, gauge.Help, append([]string{LabelConnector, LabelTask}, names...), g.constLabels)
			if m, err := prometheus.NewConstMetric(desc, prometheus.GaugeValue, gauge.Value, values...); err == nil {
				ch <- m
			}
		}
	}
}

// ReportGauges makes the task's gauges part of the agent's metrics until
// Delete: report is called at every scrape.
func (t *Task) ReportGauges(report func() []connect.Gauge) {
	if t == nil {
		return
	}
	t.a.gauges.mu.Lock()
	defer t.a.gauges.mu.Unlock()
	t.a.gauges.report[[2]string{t.labels[0], t.labels[1]}] = report
}

// stopGauges forgets the task's gauges.
func (t *Task) stopGauges() {
	t.a.gauges.mu.Lock()
	defer t.a.gauges.mu.Unlock()
	delete(t.a.gauges.report, [2]string{t.labels[0], t.labels[1]})
}
