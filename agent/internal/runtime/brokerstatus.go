package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"
)

// A task whose Kafka clients cannot reach a broker stays RUNNING, as in
// Kafka Connect (its clients retry, and it goes on the moment the broker
// is back), but says so: its status's trace names the outage and since
// when, and sluice_task_broker_unreachable_seconds counts it. The task's
// clients feed t.brokers through their hook (kafkaOpts); watchBrokers
// reads it every brokerWatchTick.
const (
	brokerWatchTick = time.Second
	// brokerGrace is how long a failure must last, unanswered, before the
	// task reports it: a connection the broker closed and the client
	// reopened at once is no outage.
	brokerGrace = time.Second
)

// brokerTracePrefix begins the trace of a task whose broker is
// unreachable; the rest says since when and the first failure.
const brokerTracePrefix = "Kafka broker unreachable"

// watchBrokers reports the task's broker outages until ctx ends.
func (t *task) watchBrokers(ctx context.Context) {
	tick := time.NewTicker(brokerWatchTick)
	defer tick.Stop()
	var trace string
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		o, down := t.brokers.Outage()
		if down && time.Since(o.Since) < brokerGrace {
			down = false
		}
		if !down {
			t.metrics.BrokerUnreachable(0)
			if trace != "" {
				trace = ""
				t.setBrokerTrace("")
			}
			continue
		}
		t.metrics.BrokerUnreachable(time.Since(o.Since))
		if trace == "" {
			// Fixed for the outage's length: a trace that changed every
			// tick would be a status write every second.
			trace = fmt.Sprintf("%s since %s: the task's Kafka clients keep retrying, and it goes on once the broker answers (first failure: %v)",
				brokerTracePrefix, o.Since.UTC().Format(time.RFC3339), o.Err)
			t.log.Warn("Kafka broker unreachable", "since", o.Since, "err", o.Err)
		}
		t.setBrokerTrace(trace)
	}
}

// setBrokerTrace sets the trace of a RUNNING task to trace ("" clears it)
// and reports it; a task in any other state keeps its own.
func (t *task) setBrokerTrace(trace string) {
	t.reportMu.Lock()
	defer t.reportMu.Unlock()
	t.mu.Lock()
	if t.state != api.StateRunning || t.trace == trace {
		t.mu.Unlock()
		return
	}
	t.trace = trace
	t.mu.Unlock()
	t.cfg.Report(wire.StatusReport{AgentID: t.cfg.AgentID, ID: t.id, Generation: t.generation, State: api.StateRunning, Trace: trace})
}
