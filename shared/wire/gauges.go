package wire

import "github.com/sluice-io/sluice/api"

// GaugesRequest asks an agent for the gauges its running tasks of one
// connector report of themselves (connect.GaugeReporter): what GET
// /sluice/connectors/{name}/gauges shows. It changes nothing.
type GaugesRequest struct {
	Term      int64  `json:"term"`
	Connector string `json:"connector"`
}

// GaugesReply lists every task of the connector the agent holds, by id.
type GaugesReply struct {
	Tasks []TaskGauges `json:"tasks"`
}

// TaskGauges are one task's gauges as its agent read them: sorted by name,
// then labels, without the values JSON cannot carry (NaN, ±Inf); none for
// a task that reports none or has not started.
type TaskGauges struct {
	ID         TaskID      `json:"id"`
	Generation int64       `json:"generation"`
	Gauges     []api.Gauge `json:"gauges,omitempty"`
}
