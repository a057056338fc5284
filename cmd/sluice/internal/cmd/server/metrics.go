package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// NewRegistry is the one Prometheus registry of a sluice process, with the
// Go runtime's and the process's own series (go_…, process_…). The
// coordinator serves it at GET /metrics; in sluice dev its agents register
// on it too, so that one scrape of the coordinator shows the whole process.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}
