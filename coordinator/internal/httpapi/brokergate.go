package httpapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-kit/kit/endpoint"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/brokerwatch"
)

// BrokerGate tells the REST layer whether the coordinator reaches its
// Kafka brokers (health.Monitor implements it).
type BrokerGate interface {
	// BrokerOutage returns the current outage, ok false while the brokers
	// answer.
	BrokerOutage() (brokerwatch.Outage, bool)
	// BrokerDown returns a channel closed as soon as they stop answering.
	BrokerDown() <-chan struct{}
}

// WithBrokerGate answers a write that needs Kafka with a retryable 503 at
// once while the brokers are unreachable, and stops one in flight as soon
// as they become so, instead of leaving the caller waiting on a client
// that retries until the request's deadline and then answers 500.
func WithBrokerGate(g BrokerGate) Option {
	return func(o *options) { o.brokers = g }
}

// gatedByBrokers reports whether route rt writes to Kafka: every write but
// validation and the offsets preview, which only read.
func gatedByBrokers(rt route) bool {
	return !strings.HasPrefix(rt.pattern, "GET ") && rt.op != "validate_config" && rt.op != "preview_offsets"
}

// brokerGate is the endpoint middleware of WithBrokerGate. It runs on the
// coordinator that serves the write (the leader; a follower forwards it
// first), inside authorization, so a refused caller still gets its 403.
func brokerGate(g BrokerGate, op string) endpoint.Middleware {
	return func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, request any) (any, error) {
			if o, down := g.BrokerOutage(); down {
				return nil, brokersUnavailable(op, o, false)
			}
			// The write runs beside a watch of the brokers: if they go
			// away meanwhile, the caller is answered at once. Not every
			// step of a write gives up when its context ends (a Kafka
			// client retries until its own deadline); the write goes on
			// and ends by itself, its outcome unknown to this caller.
			type result struct {
				resp any
				err  error
			}
			done := make(chan result, 1)
			go func() {
				resp, err := next(ctx, request)
				done <- result{resp, err}
			}()
			select {
			case r := <-done:
				return r.resp, r.err
			case <-g.BrokerDown():
			}
			select {
			case r := <-done:
				// Finished as the brokers went: its own answer is the truth.
				return r.resp, r.err
			default:
				o, _ := g.BrokerOutage()
				return nil, brokersUnavailable(op, o, true)
			}
		}
	}
}

// brokersUnavailable is the 503 of a write refused (started false) or
// interrupted (true) by a broker outage. An interrupted write may have
// reached Kafka before the outage: the message says so, since a create
// retried blindly could then answer 409.
func brokersUnavailable(op string, o brokerwatch.Outage, started bool) *api.Error {
	what := fmt.Sprintf("the coordinator cannot reach its Kafka brokers (%v)", o)
	if o.Since.IsZero() {
		what = "the coordinator lost its Kafka brokers"
	}
	if started {
		return api.Errorf(api.CodeUnavailable, "Request %s was interrupted: %s; it may or may not have been applied: read the state back, then retry once Kafka is reachable", op, what)
	}
	return api.Errorf(api.CodeUnavailable, "Request %s was not applied: %s; retry once Kafka is reachable", op, what)
}
