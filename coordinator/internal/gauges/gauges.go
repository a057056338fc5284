// Package gauges answers GET /sluice/connectors/{name}/gauges: the gauges a
// connector's running tasks report of themselves (connect.GaugeReporter),
// read from the agents the leader placed them on, one request per agent, at
// the same time. A task whose agent does not answer in time is listed with
// the reason instead of its gauges: one lost agent never fails the answer.
package gauges

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/wire"
)

// Connectors are the connectors' configs (store.ConfigState).
type Connectors interface {
	Get(name string) (store.Connector, bool)
}

// RPC asks one agent for gauges (agentrpc.Client).
type RPC interface {
	Gauges(ctx context.Context, agent string, req wire.GaugesRequest) (wire.GaugesReply, error)
}

// DefaultTimeout bounds the wait for each agent's answer.
const DefaultTimeout = 5 * time.Second

// Config is what a Reader needs.
type Config struct {
	Connectors Connectors
	// Placed is the agent a task is placed on; false when none.
	Placed func(id api.TaskID) (agent string, ok bool)
	RPC    RPC
	// Term is the term this coordinator leads (0: it does not lead).
	Term func() int64
	// Timeout bounds the wait for each agent (0: DefaultTimeout).
	Timeout time.Duration
}

// Reader reads connectors' gauges. The zero value is a Reader to hand the
// REST layer before the coordinator has started; Configure makes it work.
type Reader struct {
	cfg Config
}

// Configure sets what the reader works with; call it once, before the
// first read.
func (r *Reader) Configure(cfg Config) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	r.cfg = cfg
}

// ConnectorGauges answers GET /sluice/connectors/{name}/gauges: every task
// of the connector's current task configs, with the agent it is placed on
// and its gauges or why they could not be read.
func (r *Reader) ConnectorGauges(ctx context.Context, name string) (api.ConnectorGauges, error) {
	c, ok := r.cfg.Connectors.Get(name)
	if !ok {
		return api.ConnectorGauges{}, api.Errorf(api.CodeNotFound, "Connector %s not found", name)
	}
	out := api.ConnectorGauges{Connector: name, Tasks: make([]api.TaskGauges, len(c.Tasks))}
	byAgent := map[string][]int{}
	for i := range c.Tasks {
		out.Tasks[i] = api.TaskGauges{ID: i, Gauges: []api.Gauge{}}
		agent, placed := r.cfg.Placed(api.TaskID{Connector: name, Task: i})
		if !placed {
			out.Tasks[i].Error = "the task is not placed on any agent"
			continue
		}
		out.Tasks[i].WorkerID = agent
		byAgent[agent] = append(byAgent[agent], i)
	}
	term := r.cfg.Term()
	var wg sync.WaitGroup
	for agent, tasks := range byAgent {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each goroutine writes only its own agent's tasks.
			r.fill(ctx, out.Tasks, agent, tasks, wire.GaugesRequest{Term: term, Connector: name})
		}()
	}
	wg.Wait()
	return out, nil
}

// fill asks agent for the gauges of tasks and sets them, or their error,
// in all.
func (r *Reader) fill(ctx context.Context, all []api.TaskGauges, agent string, tasks []int, req wire.GaugesRequest) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	reply, err := r.cfg.RPC.Gauges(ctx, agent, req)
	if err != nil {
		msg := fmt.Sprintf("agent %s: %v", agent, err)
		if timedOut(err) || ctx.Err() != nil {
			// The request's own timeout and this wait's deadline race:
			// either way the agent did not answer in time, said one way.
			msg = fmt.Sprintf("agent %s did not answer within %s", agent, r.cfg.Timeout)
		}
		for _, i := range tasks {
			all[i].Error = msg
		}
		return
	}
	for _, i := range tasks {
		at := slices.IndexFunc(reply.Tasks, func(t wire.TaskGauges) bool { return t.ID.Task == i })
		if at < 0 {
			all[i].Error = fmt.Sprintf("agent %s does not run the task (yet): it is starting, moving or stopping", agent)
			continue
		}
		if g := reply.Tasks[at].Gauges; g != nil {
			all[i].Gauges = g
		}
	}
}

// timedOut reports whether err is a request that ran out of time: the
// context's deadline, or the NATS request's timeout. (A deadline that ends
// the request may also come back as a plain error: the caller checks its
// context too.)
func timedOut(err error) bool {
	var ae *api.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ae) && ae.Code == api.CodeTimeout
}
