package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// States are the states a connector or task gauge is published for, every
// one of them for every connector and task (as kube-state-metrics does), so
// that sum by (state) and alerts on a state need no absent() guards.
var States = []string{"RUNNING", "PAUSED", "STOPPED", "FAILED", "RESTARTING", "UNASSIGNED"}

// ConnectorState is one connector's state and its tasks', as the status
// view shows them.
type ConnectorState struct {
	Name  string
	State string
	// Tasks maps task numbers to their states.
	Tasks map[int]string
}

var (
	connectorStateDesc = prometheus.NewDesc(Namespace+"_connector_state",
		"1 for the state the connector is in, 0 for the others.", []string{"connector", "state"}, nil)
	taskStateDesc = prometheus.NewDesc(Namespace+"_task_state",
		"1 for the state the task is in, 0 for the others.", []string{"connector", "task", "state"}, nil)
)

// StateCollector publishes sluice_connector_state and sluice_task_state
// from a view of the status topic, read when scraped: a deleted
// connector's series are gone with it, and a follower publishes the same
// states as the leader.
type StateCollector struct {
	states func() []ConnectorState
}

// NewStateCollector returns a collector of the states states returns.
func NewStateCollector(states func() []ConnectorState) *StateCollector {
	return &StateCollector{states: states}
}

// Describe implements prometheus.Collector.
func (c *StateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- connectorStateDesc
	ch <- taskStateDesc
}

// Collect implements prometheus.Collector.
func (c *StateCollector) Collect(ch chan<- prometheus.Metric) {
	for _, cs := range c.states() {
		for _, s := range States {
			ch <- prometheus.MustNewConstMetric(connectorStateDesc, prometheus.GaugeValue, is(cs.State, s), cs.Name, s)
		}
		for n, ts := range cs.Tasks {
			task := strconv.Itoa(n)
			for _, s := range States {
				ch <- prometheus.MustNewConstMetric(taskStateDesc, prometheus.GaugeValue, is(ts, s), cs.Name, task, s)
			}
		}
	}
}

func is(state, want string) float64 {
	if state == want {
		return 1
	}
	return 0
}
