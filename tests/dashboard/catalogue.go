package dashboard

import "sort"

// Type is a Prometheus metric type, as far as the series it exposes go.
type Type int

// The metric types of the catalogue.
const (
	// Counter exposes one series per label set, named as the metric.
	Counter Type = iota
	// Gauge exposes one series per label set, named as the metric.
	Gauge
	// Histogram exposes <name>_bucket (with le), <name>_sum and
	// <name>_count.
	Histogram
)

// Process says which Sluice process serves a metric on its /metrics.
type Process string

// The processes that serve metrics.
const (
	// Coordinator is a coordinator's REST listener, GET /metrics.
	Coordinator Process = "coordinator"
	// Agent is an agent's --metrics-listen.
	Agent Process = "agent"
	// Both are the Kafka client metrics: every process runs Kafka clients.
	Both Process = "both"
)

// Metric is one metric of the catalogue the coordinators and agents serve.
type Metric struct {
	// Name is the metric's name; a histogram's series add _bucket, _sum
	// and _count.
	Name string
	// Type is its type.
	Type Type
	// Labels are the labels its series carry (le aside).
	Labels []string
	// Process serves it.
	Process Process
}

// kafkaLabels are the labels franz-go's kprom puts on Sluice's Kafka client
// metrics: node_id on every one (kprom's default), client_id as Sluice
// registers them, topic on the produce and fetch ones.
var (
	kafkaBroker = []string{"client_id", "node_id"}
	kafkaTopic  = []string{"client_id", "node_id", "topic"}
)

// Catalogue is the metrics Sluice serves, as the coordinator's and the
// agent's instrumentation register them (issue 15, docs/observability.md):
// the names, types and labels a dashboard query may use.
var Catalogue = []Metric{
	{"sluice_connector_state", Gauge, []string{"connector", "state"}, Coordinator},
	{"sluice_task_state", Gauge, []string{"connector", "task", "state"}, Coordinator},
	{"sluice_sink_consumer_lag", Gauge, []string{"connector", "topic", "partition"}, Coordinator},
	{"sluice_offsets_operations_total", Counter, []string{"kind", "result"}, Coordinator},
	{"sluice_offsets_operation_duration_seconds", Histogram, []string{"kind"}, Coordinator},
	{"sluice_rest_requests_total", Counter, []string{"route", "method", "code"}, Coordinator},
	{"sluice_rest_request_duration_seconds", Histogram, []string{"route", "method"}, Coordinator},
	{"sluice_coordinator_leader", Gauge, nil, Coordinator},
	{"sluice_coordinator_term", Gauge, nil, Coordinator},
	{"sluice_coordinator_agents", Gauge, nil, Coordinator},
	{"sluice_reconcile_duration_seconds", Histogram, nil, Coordinator},
	{"sluice_nats_request_duration_seconds", Histogram, []string{"kind"}, Coordinator},
	{"sluice_nats_request_errors_total", Counter, []string{"kind"}, Coordinator},

	{"sluice_task_records_polled_total", Counter, []string{"agent", "connector", "task"}, Agent},
	{"sluice_task_records_written_total", Counter, []string{"agent", "connector", "task"}, Agent},
	{"sluice_task_records_put_total", Counter, []string{"agent", "connector", "task"}, Agent},
	{"sluice_task_records_failed_total", Counter, []string{"agent", "connector", "task"}, Agent},
	{"sluice_task_batch_duration_seconds", Histogram, []string{"agent", "connector", "task"}, Agent},
	{"sluice_task_offset_commit_duration_seconds", Histogram, []string{"agent", "connector", "task"}, Agent},
	{"sluice_task_offset_commit_failures_total", Counter, []string{"agent", "connector", "task"}, Agent},
	{"sluice_task_last_commit_timestamp_seconds", Gauge, []string{"agent", "connector", "task"}, Agent},
	{"sluice_task_broker_unreachable_seconds", Gauge, []string{"agent", "connector", "task"}, Agent},
	{"sluice_agent_heartbeat_age_seconds", Gauge, []string{"agent"}, Agent},
	{"sluice_agent_lease_seconds", Gauge, []string{"agent"}, Agent},
	{"sluice_agent_tasks_running", Gauge, []string{"agent"}, Agent},
	{"sluice_agent_registered", Gauge, []string{"agent"}, Agent},

	// franz-go's kprom with namespace sluice, subsystem kafka: the
	// metrics it always registers.
	{"sluice_kafka_connects_total", Counter, kafkaBroker, Both},
	{"sluice_kafka_connect_errors_total", Counter, kafkaBroker, Both},
	{"sluice_kafka_disconnects_total", Counter, kafkaBroker, Both},
	{"sluice_kafka_write_bytes_total", Counter, kafkaBroker, Both},
	{"sluice_kafka_write_errors_total", Counter, kafkaBroker, Both},
	{"sluice_kafka_read_bytes_total", Counter, kafkaBroker, Both},
	{"sluice_kafka_read_errors_total", Counter, kafkaBroker, Both},
	{"sluice_kafka_produce_compressed_bytes_total", Counter, kafkaTopic, Both},
	{"sluice_kafka_produce_batches_total", Counter, kafkaTopic, Both},
	{"sluice_kafka_produce_records_total", Counter, kafkaTopic, Both},
	{"sluice_kafka_fetch_compressed_bytes_total", Counter, kafkaTopic, Both},
	{"sluice_kafka_fetch_batches_total", Counter, kafkaTopic, Both},
	{"sluice_kafka_fetch_records_total", Counter, kafkaTopic, Both},
	// kprom's buffered-records gauges under their conventional names
	// (kprom's own end in _total, kept for a release).
	{"sluice_kafka_buffered_produce_records", Gauge, []string{"client_id"}, Both},
	{"sluice_kafka_buffered_fetch_records", Gauge, []string{"client_id"}, Both},
}

// TargetLabels are the labels Prometheus adds to every series it scrapes:
// a query may group or filter by them whatever the metric.
var TargetLabels = []string{"instance", "job"}

// Series is one series name a metric exposes, with the labels it carries.
type Series struct {
	// Metric is the metric the series belongs to.
	Metric Metric
	// Labels are the series' labels: the metric's, le on a histogram's
	// buckets, and the target labels.
	Labels map[string]bool
}

// CatalogueSeries maps every series name the catalogue's metrics expose
// to its metric and labels.
func CatalogueSeries() map[string]Series {
	out := map[string]Series{}
	for _, m := range Catalogue {
		for name, extra := range seriesOf(m) {
			labels := map[string]bool{}
			for _, l := range append(append(append([]string(nil), m.Labels...), TargetLabels...), extra...) {
				labels[l] = true
			}
			out[name] = Series{Metric: m, Labels: labels}
		}
	}
	return out
}

// seriesOf names the series m exposes, each with the labels it adds to
// m's.
func seriesOf(m Metric) map[string][]string {
	if m.Type == Histogram {
		return map[string][]string{m.Name + "_bucket": {"le"}, m.Name + "_sum": nil, m.Name + "_count": nil}
	}
	return map[string][]string{m.Name: nil}
}

// sortedKeys returns the keys of a set in order, for stable messages.
func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// SubjectLabels are the labels whose values come into being with what
// they name: a connector, a task, a topic or partition it reads or writes,
// a REST route answered with a method and a status code. A series with
// one exists once its subject does; every other series of a process
// exists, at 0 if nothing happened yet, as soon as it started (an agent's
// and a Kafka client's once it registered and connected).
var SubjectLabels = map[string]bool{
	"connector": true, "task": true, "topic": true, "partition": true,
	"route": true, "method": true, "code": true,
}

// FromStart reports whether m's series exist as soon as its process
// started: it has no SubjectLabels label.
func (m Metric) FromStart() bool {
	for _, l := range m.Labels {
		if SubjectLabels[l] {
			return false
		}
	}
	return true
}
