// Package signals answers POST /sluice/connectors/{name}/signals: a signal
// (Debezium's execute-snapshot, stop-snapshot) for a running connector,
// handed to its task 0 on the agent the leader placed it on. The task
// makes the signal durable its own way — the native PostgreSQL connector
// inserts it into its signal table, so it takes effect at its place in the
// WAL, as a row a user inserts would — and the answer comes once it has:
//
//	REST ─► leader: connector? running? task 0 placed? ─► agent ─► task.Signal ─► INSERT … signal table
//
// A stopped connector, a task not running (yet) and a connector that takes
// no signals are refused with a message that says which.
package signals

import (
	"context"
	"errors"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// Connectors are the connectors' configs (store.ConfigState).
type Connectors interface {
	Get(name string) (store.Connector, bool)
}

// RPC hands a signal to one agent (agentrpc.Client).
type RPC interface {
	Signal(ctx context.Context, agent string, req wire.SignalRequest) (wire.SignalReply, error)
}

// DefaultTimeout bounds the wait for the agent's answer: the task writes
// the signal to its database.
const DefaultTimeout = 30 * time.Second

// Config is what a Sender needs.
type Config struct {
	Connectors Connectors
	// Placed is the agent a task is placed on; false when none.
	Placed func(id api.TaskID) (agent string, ok bool)
	RPC    RPC
	// Term is the term this coordinator leads (0: it does not lead).
	Term func() int64
	// Timeout bounds the wait for the agent (0: DefaultTimeout).
	Timeout time.Duration
}

// Sender sends signals. The zero value is a Sender to hand the REST layer
// before the coordinator has started; Configure makes it work.
type Sender struct {
	cfg Config
}

// Configure sets what the sender works with; call it once, before the
// first signal.
func (s *Sender) Configure(cfg Config) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	s.cfg = cfg
}

// Signal hands sig to the running task 0 of connector name and answers
// once the task made it durable.
func (s *Sender) Signal(ctx context.Context, name string, sig api.ConnectorSignal) (api.SignalSent, error) {
	c, ok := s.cfg.Connectors.Get(name)
	if !ok {
		return api.SignalSent{}, api.Errorf(api.CodeNotFound, "Connector %s not found", name)
	}
	if c.TargetState == records.TargetStopped {
		return api.SignalSent{}, api.Errorf(api.CodeConflict, "Connector %s is stopped: a signal is handed to its running task; resume it first", name)
	}
	if len(c.Tasks) == 0 {
		return api.SignalSent{}, api.Errorf(api.CodeConflict, "Connector %s has no tasks yet: send the signal once its task runs", name)
	}
	id := api.TaskID{Connector: name, Task: 0}
	agent, placed := s.cfg.Placed(id)
	if !placed {
		return api.SignalSent{}, api.Errorf(api.CodeConflict, "Connector %s's task 0 is not placed on any agent: send the signal once it runs", name)
	}
	term := s.cfg.Term()
	if term == 0 {
		return api.SignalSent{}, api.Errorf(api.CodeUnavailable, "This coordinator is not the leader: send the signal again")
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	reply, err := s.cfg.RPC.Signal(ctx, agent, wire.SignalRequest{Term: term, Task: id, Signal: sig})
	if err != nil {
		var ae *api.Error
		if errors.As(err, &ae) && ae.Code != api.CodeTimeout {
			return api.SignalSent{}, ae
		}
		if errors.As(err, &ae) || ctx.Err() != nil {
			// 500, as Kafka Connect answers a request that timed out.
			return api.SignalSent{}, api.Errorf(api.CodeInternal, "Request timed out: agent %s did not answer within %s, and the signal may or may not have been written (GET /sluice/connectors/%s/gauges shows a snapshot it started)", agent, s.cfg.Timeout, name)
		}
		return api.SignalSent{}, api.Errorf(api.CodeInternal, "Agent %s: %v", agent, err)
	}
	return api.SignalSent{Connector: name, ID: reply.ID, Type: sig.Type, Task: 0, WorkerID: agent}, nil
}
