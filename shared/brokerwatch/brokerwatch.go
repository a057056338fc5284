// Package brokerwatch tells whether a process can reach its Kafka brokers,
// and since when it cannot, so that health answers, task statuses and REST
// writes can say so instead of waiting on a client that retries forever.
//
// Two sources feed a State:
//
//	Hook   a kgo hook on clients that already talk to the brokers (a task's
//	       producer and consumer): a failed dial or request marks the
//	       broker down, the next good answer from it marks it up again
//	Pinger a loop that pings the brokers every interval, for a process
//	       whose clients may sit idle (the coordinator)
//
// A State is "unreachable since T" from the first failure with no success
// after it; it never guesses ahead of what a client saw.
package brokerwatch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Outage is a broker outage as one State saw it: unreachable since Since,
// the last failure Err.
type Outage struct {
	Since time.Time
	Err   error
}

// Error says what was unreachable since when.
func (o Outage) Error() string {
	return fmt.Sprintf("Kafka brokers unreachable since %s (%s): %v",
		o.Since.UTC().Format(time.RFC3339), time.Since(o.Since).Round(time.Second), o.Err)
}

// Unwrap is the last failure.
func (o Outage) Unwrap() error { return o.Err }

// State is what a process knows of its brokers' reachability. The zero
// value is reachable.
type State struct {
	mu sync.Mutex
	// down holds, per broker node, when its failures began; a node leaves
	// it on its next success. Seed brokers count under their negative ids.
	down map[int32]time.Time
	err  error
	// changed is closed and replaced whenever the state goes from
	// reachable to unreachable, so waiters learn it at once.
	changed chan struct{}
}

// fail records a failure of node.
func (s *State) fail(node int32, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down == nil {
		s.down = map[int32]time.Time{}
	}
	s.err = err
	if _, ok := s.down[node]; ok {
		return
	}
	s.down[node] = time.Now()
	if len(s.down) == 1 && s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// ok records a success of node.
func (s *State) ok(node int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.down, node)
}

// Outage returns the current outage: the earliest failure of a node that
// has not answered since, and ok false while every node answers.
func (s *State) Outage() (Outage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.down) == 0 {
		return Outage{}, false
	}
	var first time.Time
	for _, t := range s.down {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	return Outage{Since: first, Err: s.err}, true
}

// Down returns a channel closed as soon as the brokers become unreachable
// (at once when they are now).
func (s *State) Down() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.down) > 0 {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

// Hook returns a kgo hook that feeds s from a client's dials and requests:
// add it with kgo.WithHooks to every client whose view should count.
func (s *State) Hook() kgo.Hook { return hook{s} }

type hook struct{ s *State }

var (
	_ kgo.HookBrokerConnect = hook{}
	_ kgo.HookBrokerE2E     = hook{}
)

// OnBrokerConnect implements kgo.HookBrokerConnect: a failed dial is a
// failure, a good one only a start (the request on it decides).
func (h hook) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err != nil && !ignorable(err) {
		h.s.fail(meta.NodeID, err)
	}
}

// OnBrokerE2E implements kgo.HookBrokerE2E: a request answered is a
// success; one that could not be written or read is a failure.
func (h hook) OnBrokerE2E(meta kgo.BrokerMetadata, _ int16, e kgo.BrokerE2E) {
	switch err := e.Err(); {
	case err == nil:
		h.s.ok(meta.NodeID)
	case !ignorable(err):
		h.s.fail(meta.NodeID, err)
	}
}

// ignorable are errors of the client's own making: a request it cancelled
// (a fetch cut short by a rebalance, a client closing) says nothing of the
// broker.
func ignorable(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, kgo.ErrClientClosed)
}

// Pinger pings a client's brokers every interval and keeps the result in
// a State; the client's own hook (if any) feeds the same State.
type Pinger struct {
	State
	ping     func(context.Context) error
	interval time.Duration
	timeout  time.Duration

	mu   sync.Mutex
	last time.Time // when the last ping ended

	stop context.CancelFunc
	done chan struct{}
}

// pingNode is the node a Pinger's results count under: the brokers as a
// whole, whichever answered.
const pingNode = -1 << 20

// NewPinger makes a Pinger of ping (e.g. a kgo.Client's Ping) every
// interval, each bounded by timeout.
func NewPinger(ping func(context.Context) error, interval, timeout time.Duration) *Pinger {
	return &Pinger{ping: ping, interval: interval, timeout: timeout}
}

// LastTurn is when the last ping ended, answered or not (zero before the
// first): a heartbeat of the loop. Every turn is bounded by the timeout,
// so a loop that stops turning is stuck, whatever the brokers do.
func (p *Pinger) LastTurn() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// Start pings now and then every interval, until Stop.
func (p *Pinger) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	p.stop, p.done = cancel, make(chan struct{})
	go func() {
		defer close(p.done)
		for {
			cctx, ccancel := context.WithTimeout(ctx, p.timeout)
			err := p.ping(cctx)
			ccancel()
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				p.fail(pingNode, fmt.Errorf("ping: %w", err))
			} else {
				p.ok(pingNode)
			}
			p.mu.Lock()
			p.last = time.Now()
			p.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-time.After(p.interval):
			}
		}
	}()
}

// Stop ends the pings.
func (p *Pinger) Stop() {
	if p.stop != nil {
		p.stop()
		<-p.done
	}
}
