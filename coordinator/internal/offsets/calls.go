package offsets

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/wire"
)

// Calls stops a connector's tasks before a change and has an agent make
// it: the service's side of the agents.
type Calls struct {
	cfg   *Config
	log   *slog.Logger
	clock Clock
}

// AwaitTasksStopped waits, up to the task shutdown timeout, until every
// agent confirmed that it runs no task of the connector (DESIGN §4). The
// agents' last reports are not enough: a task assigned since the last
// heartbeat, or one whose revoke is still under way, is in none. So every
// known agent is asked to revoke every task id the connector may have had;
// an agent confirms a task it does not hold at once, and one it holds only
// after the task stopped, committed and closed its clients. Past the
// timeout the operation proceeds: source tasks are fenced by it, and a live
// sink member makes the agent answer the retry message. It reports whether
// every agent confirmed (or is gone).
func (c *Calls) AwaitTasksStopped(ctx context.Context, name string, conn store.Connector) bool {
	ids := map[api.TaskID]bool{}
	for i := range len(fenceIDs(c.cfg, name, conn)) {
		ids[api.TaskID{Connector: name, Task: i}] = true
	}
	agents, held := c.cfg.Agents.Holders(name)
	for _, id := range held {
		ids[id] = true
	}
	list := make([]api.TaskID, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Task < list[j].Task })

	rctx, cancel := context.WithTimeout(ctx, c.cfg.TaskShutdownTimeout)
	defer cancel()
	var wg sync.WaitGroup
	var unconfirmed atomic.Bool
	for _, agent := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reply, err := c.cfg.Agents.Revoke(rctx, agent, list)
			switch {
			case err != nil && api.IsCode(err, api.CodeUnavailable):
				// The agent is gone: its tasks are fenced by the operation.
				c.cfg.Agents.ForgetReported(agent, list)
			case err != nil:
				unconfirmed.Store(true)
				c.log.Warn("offsets: an agent did not confirm the connector's tasks stopped", "connector", name, "agent", agent, "err", err)
			case len(reply.Stopped) < len(list):
				unconfirmed.Store(true)
				c.log.Warn("offsets: tasks did not stop within the task shutdown timeout", "connector", name, "agent", agent, "failed", reply.Failed)
			}
		}()
	}
	wg.Wait()
	return !unconfirmed.Load()
}

// SendSource hands a source connector's offsets change to a live agent,
// trying the next one when an agent cannot be reached.
func (c *Calls) SendSource(ctx context.Context, req wire.SourceOffsetsRequest) error {
	_, err := c.sendSourceWritten(ctx, req)
	return err
}

// sendSourceWritten is SendSource, returning what the agent wrote (for a
// request with CallerWaits: wire.OffsetsReply.Written).
func (c *Calls) sendSourceWritten(ctx context.Context, req wire.SourceOffsetsRequest) ([]wire.WrittenOffset, error) {
	var written []wire.WrittenOffset
	err := c.tryAgents(ctx, req.Op, req.Connector, func(ctx context.Context, agent string) error {
		var err error
		written, err = c.cfg.RPC.SourceOffsets(ctx, agent, req)
		return err
	})
	return written, err
}

// SendSink hands a sink connector's offsets change to a live agent, as
// SendSource.
func (c *Calls) SendSink(ctx context.Context, req wire.SinkOffsetsRequest) error {
	return c.tryAgents(ctx, req.Op, req.Connector, func(ctx context.Context, agent string) error {
		return c.cfg.RPC.SinkOffsets(ctx, agent, req)
	})
}

// SendReplace has a live agent replace every source offset of a connector
// (wire.OffsetsReplaceRequest): with req.Writes, an alter; without, a
// reset.
func (c *Calls) SendReplace(ctx context.Context, req wire.OffsetsReplaceRequest) error {
	_, err := c.sendReplaceWritten(ctx, req)
	return err
}

// sendReplaceWritten is SendReplace, returning what the agent wrote (as
// sendSourceWritten).
func (c *Calls) sendReplaceWritten(ctx context.Context, req wire.OffsetsReplaceRequest) ([]wire.WrittenOffset, error) {
	op := wire.OffsetsOpAlter
	if len(req.Writes) == 0 {
		op = wire.OffsetsOpReset
	}
	var written []wire.WrittenOffset
	err := c.tryAgents(ctx, op, req.Connector, func(ctx context.Context, agent string) error {
		var err error
		written, err = c.cfg.RPC.ReplaceOffsets(ctx, agent, req)
		return err
	})
	return written, err
}

// tryAgents runs call on a live agent, trying the next one when an agent
// cannot be reached; op and connector name the operation in the answer
// when none can.
func (c *Calls) tryAgents(ctx context.Context, op, connector string, call func(ctx context.Context, agent string) error) error {
	for _, agent := range c.cfg.Agents.Registered() {
		err := c.callWhileAlive(ctx, agent, call)
		if err == nil {
			return nil
		}
		if !api.IsCode(err, api.CodeUnavailable) {
			return err
		}
		c.log.Warn("agent unreachable for an offsets operation; trying another", "connector", connector, "operation", op, "agent", agent, "err", err)
	}
	return api.Errorf(api.CodeUnavailable, "No agent is available to %s offsets for connector %s", op, connector)
}

// CallTimeout bounds one offsets operation on one agent.
const CallTimeout = 60 * time.Second

// lossCheck is how often a call checks that its agent is still alive.
const lossCheck = 100 * time.Millisecond

// callWhileAlive sends req to agent and waits for the answer while the
// agent holds its lease: an agent that dies mid-operation never answers, and
// waiting out the whole timeout would hold the request for a minute. Its
// loss — once its lease is over, whatever made the leader take it for lost —
// is answered as "unavailable", so the caller moves to another agent;
// retrying is safe, as every offsets operation is idempotent (fence, then
// one transaction; or group commits of fixed values).
func (c *Calls) callWhileAlive(ctx context.Context, agent string, call func(ctx context.Context, agent string) error) error {
	// The timeout travels to the agent, bounded by the agent lease; an
	// agent paused past its lease refuses the request when it wakes (its
	// transport checks that its lease is current), so it cannot write
	// after the operation moved to another agent.
	// The wait does not end with the caller's context: a REST client that
	// leaves must not release the connector while the agent may still
	// commit; the agent itself stops once its lease is no longer current.
	octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(CallTimeout, c.cfg.AgentLease))
	defer cancel()
	lost := make(chan struct{})
	seen, known := c.cfg.Agents.LastSeen(agent)
	if !known {
		seen = c.clock.Now() // gone since it was chosen: wait, as for a closed connection
	}
	go func() {
		for {
			select {
			case <-octx.Done():
				return
			case <-c.clock.After(lossCheck):
				last, alive := c.cfg.Agents.LastSeen(agent)
				if alive {
					seen = last
					continue
				}
				close(lost)
				if leaseOver(seen, c.clock.Now(), c.cfg.AgentLease) {
					cancel()
				}
				return
			}
		}
	}()
	err := call(octx, agent)
	if err == nil {
		return nil
	}
	select {
	case <-lost:
		return api.Errorf(api.CodeUnavailable, "agent %s was lost during the operation", agent)
	default:
	}
	if ctx.Err() == nil && errors.Is(octx.Err(), context.DeadlineExceeded) {
		// The agent did not answer within its deadline, which it was sent:
		// past it the agent cannot commit, so another agent may take over.
		return api.Errorf(api.CodeUnavailable, "agent %s did not answer in time", agent)
	}
	return err
}

// leaseOver reports whether an agent lost at now, last heard from at seen,
// has stopped an operation itself. One lost by its lease has: its own
// lease, timed from its heartbeats' sending, ends before the leader's. One
// lost by its closed connection (presence probes) may still hold its lease
// and be at work — its Kafka connection may well be up — and taking the
// operation elsewhere now would let its late commit land after, and fence,
// its successor's; then the call runs out its deadline, which the agent
// holds too.
func leaseOver(seen, now time.Time, lease time.Duration) bool {
	return now.Sub(seen) >= lease
}
