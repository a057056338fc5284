package metrics

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// PartitionLag is a sink's consumer lag on one partition.
type PartitionLag struct {
	Topic     string
	Partition int32
	Lag       int64
}

// SinkLag is one sink connector's consumer lag.
type SinkLag struct {
	Connector  string
	Partitions []PartitionLag
}

// Defaults of a LagCollector.
const (
	DefaultLagRefresh = 5 * time.Second
	DefaultLagTimeout = 5 * time.Second
)

// lagHelp is the help text of sluice_sink_consumer_lag.
const lagHelp = "Records of the partition the sink's consumer group has not committed yet: end offset minus committed offset (minus the log start offset when the group committed none)."

var lagDesc = prometheus.NewDesc(Namespace+"_sink_consumer_lag", lagHelp, []string{"connector", "topic", "partition"}, nil)

// LagCollector publishes sluice_sink_consumer_lag. Lag is read from Kafka
// when a scrape comes and the last reading is older than the refresh
// interval, within a timeout; scrapes in between are served the last
// reading. So a scrape never waits longer than the timeout, and however
// often Prometheus (or several) scrapes, Kafka is asked at most once per
// interval.
type LagCollector struct {
	read    func(ctx context.Context) []SinkLag
	refresh time.Duration
	timeout time.Duration
	now     func() time.Time

	mu   sync.Mutex
	last time.Time
	lags []SinkLag
}

// NewLagCollector returns a collector of what read returns, read at most
// every refresh and given timeout each time (zero: the defaults). read
// leaves out a connector whose lag it could not read: its series are
// missing from that reading rather than stale.
func NewLagCollector(read func(ctx context.Context) []SinkLag, refresh, timeout time.Duration) *LagCollector {
	if refresh <= 0 {
		refresh = DefaultLagRefresh
	}
	if timeout <= 0 {
		timeout = DefaultLagTimeout
	}
	return &LagCollector{read: read, refresh: refresh, timeout: timeout, now: time.Now}
}

// Describe implements prometheus.Collector.
func (c *LagCollector) Describe(ch chan<- *prometheus.Desc) { ch <- lagDesc }

// Collect implements prometheus.Collector.
func (c *LagCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.current() {
		for _, p := range s.Partitions {
			ch <- prometheus.MustNewConstMetric(lagDesc, prometheus.GaugeValue, float64(p.Lag),
				s.Connector, p.Topic, strconv.Itoa(int(p.Partition)))
		}
	}
}

// current returns the last reading, read again first when it is older
// than the refresh interval. Concurrent scrapes wait for one reading.
func (c *LagCollector) current() []SinkLag {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := c.now(); c.last.IsZero() || now.Sub(c.last) >= c.refresh {
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		c.lags = c.read(ctx)
		cancel()
		c.last = c.now()
	}
	return c.lags
}
