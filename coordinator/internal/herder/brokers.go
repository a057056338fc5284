package herder

import (
	"fmt"
	"time"

	"github.com/sluice-io/sluice/shared/brokerwatch"
)

// The coordinator pings its brokers in the background so that a REST write
// during a broker outage is refused at once, with a retryable 503 naming the
// outage, instead of waiting on a client that retries until the request's
// own deadline (10–30 s) and then answering 500.
const (
	brokerPingInterval = 500 * time.Millisecond
	// brokerPingTimeout bounds one ping: a broker that accepts no
	// connection (a blackholed address, a paused process) counts as down
	// after this long.
	brokerPingTimeout = time.Second
)

// startBrokerWatch starts pinging the brokers with the admin client.
func (h *Herder) startBrokerWatch() {
	h.brokers = brokerwatch.NewPinger(h.adminCl.Ping, brokerPingInterval, brokerPingTimeout)
	h.brokers.Start()
}

// BrokerOutage returns the outage of the coordinator's brokers, ok false
// while they answer (and before Start).
func (h *Herder) BrokerOutage() (brokerwatch.Outage, bool) {
	if h.brokers == nil {
		return brokerwatch.Outage{}, false
	}
	return h.brokers.Outage()
}

// BrokerDown returns a channel closed as soon as the brokers become
// unreachable: a write in flight then stops waiting on them.
func (h *Herder) BrokerDown() <-chan struct{} {
	if h.brokers == nil {
		return nil
	}
	return h.brokers.Down()
}

// wedgedAfter is how long the ping loop may go without a turn before the
// coordinator counts as wedged: each turn is bounded by brokerPingTimeout,
// whether the brokers answer or not, so only a stuck process misses it.
const wedgedAfter = 10 * (brokerPingInterval + brokerPingTimeout)

// Wedged reports why the coordinator's background work has stopped
// turning, or nil: the liveness half of GET /health. It never depends on
// Kafka or NATS answering.
func (h *Herder) Wedged() error {
	if h.brokers == nil {
		return nil
	}
	if last := h.brokers.LastTurn(); !last.IsZero() && time.Since(last) > wedgedAfter {
		return fmt.Errorf("the broker ping loop has not turned for %s", time.Since(last).Round(time.Second))
	}
	return nil
}
