package reconciler

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluice-io/sluice/coordinator/internal/metrics"
	"github.com/sluice-io/sluice/shared/wire"
)

// A crashed agent (kill -9, OOM, a node whose TCP connection was reset)
// closes its NATS connection, and the NATS server knows at once: a request
// to the agent's presence endpoint then comes back "no responders". The
// leader probes every registered agent that serves the endpoint each
// AgentProbe, and takes one that is absent twice in a row for lost, as if
// its lease had run out — in a fraction of a second instead of the lease.
//
// Absence only makes the agent a suspect, and what follows is what a lease
// expiry does: its tasks are placed elsewhere, and each replacement fences
// its predecessor before it does anything else (a source's transactional
// id; a sink's static group membership, which the broker fences). An agent
// that is alive but paused or cut off keeps its subscription, so its probes
// time out instead: only its lease replaces it, as before.
//
// What guards against a false alarm:
//   - two misses in a row, an interval apart: a client reconnecting to
//     another server of a NATS cluster is back within that;
//   - an agent heard from (register, heartbeat) since the first miss is not
//     lost;
//   - while this coordinator's own connection has just come back
//     (presenceSettle), nobody is judged: a NATS server that restarted
//     dropped every client, and agents reconnect over a few seconds;
//   - when no other agent answered, none is lost: it is NATS, not the
//     agents, and there would be nowhere to move the tasks to.

// presenceSettle is how long after this coordinator's connection came back
// no agent is judged by its probes.
const presenceSettle = 5 * time.Second

// presenceMisses is how many probes in a row must find nobody.
const presenceMisses = 2

// presenceInFlight is how many probes of one agent may wait for an answer
// at once. Two, not one: an agent killed while it held a probe never
// answers it, and a loop that waited for that probe's timeout (a second)
// before it sent the next would take the agent for lost a second late; the
// probes sent meanwhile find it absent. A paused agent's probes all time
// out: no more than this many of them wait at once.
const presenceInFlight = 2

// probeResult is one probe's outcome.
type probeResult struct {
	id     string
	st     *presenceState // the state it was sent for; one made since is not its
	sent   time.Time
	absent bool // no responders: nobody subscribes to the agent's presence
	ok     bool // the agent answered
}

// presenceState is what the loop knows of each probed agent.
type presenceState struct {
	misses    int
	firstMiss time.Time // when the first probe of the current run of misses was sent
	answered  time.Time // when a probe last got an answer
	inFlight  int       // probes waiting for an answer
	// latest is when the newest probe whose result was taken was sent: a
	// result of an earlier probe (one that waited out its timeout while
	// later ones came back) is stale, and says nothing.
	latest time.Time
}

// presence probes the agents' presence for a reconciler.
type presence struct{ r *Reconciler }

// loop probes the agents' presence every AgentProbe until ctx ends
// (leadership is revoked).
func (p presence) loop(ctx context.Context) {
	if every := p.r.cfg.AgentProbe; every > 0 {
		p.probeAgents(ctx, every, max(4*every, time.Second))
	}
}

// probeAgents probes each registered agent's presence every interval, each
// probe waiting at most timeout, until ctx ends. An agent with
// presenceInFlight probes still waiting (a paused agent, whose probes time
// out) is not probed again meanwhile.
func (p presence) probeAgents(ctx context.Context, every, timeout time.Duration) {
	r := p.r
	states := map[string]*presenceState{}
	results := make(chan probeResult)
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(every)
	defer tick.Stop()
	reconnects, quietUntil := r.cfg.Prober.Reconnects(), time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case res := <-results:
			st := states[res.id]
			if st == nil || st != res.st {
				continue // judged, left or gone meanwhile
			}
			st.inFlight--
			if !res.sent.After(st.latest) {
				continue // stale: a later probe's result was taken already
			}
			st.latest = res.sent
			switch {
			case res.ok:
				st.misses, st.answered = 0, res.sent
			case res.absent:
				if st.misses == 0 {
					st.firstMiss = res.sent
				}
				st.misses++
			default:
				// A timeout or a closed connection of our own says nothing
				// of the agent; the lease decides.
				r.log.Debug("presence probe: no answer", "agent", res.id, "sent", res.sent, "took", r.now().Sub(res.sent))
				st.misses = 0
			}
			if st.misses >= presenceMisses && r.now().After(quietUntil) && othersAnswered(states, res.id, 3*every, r.now()) {
				switch p.agentAbsent(res.id, st.firstMiss) {
				case absentLost:
					delete(states, res.id)
				case absentAlive:
					st.misses = 0
				case absentWait:
					// Its next liveness beat decides: the misses stand.
				}
			}
		case <-tick.C:
			now := r.now()
			if n := r.cfg.Prober.Reconnects(); n != reconnects {
				reconnects, quietUntil = n, now.Add(presenceSettle)
				for _, st := range states {
					st.misses = 0
				}
			}
			ids := r.table.Registered()
			probed := make(map[string]bool, len(ids))
			for _, id := range ids {
				probed[id] = true
				st := states[id]
				if st == nil {
					st = &presenceState{answered: now}
					states[id] = st
				}
				if st.inFlight >= presenceInFlight {
					continue
				}
				st.inFlight++
				wg.Add(1)
				go func() {
					defer wg.Done()
					res := p.probePresence(ctx, id, timeout)
					res.st = st
					select {
					case results <- res:
					case <-ctx.Done():
					}
				}()
			}
			for id, st := range states {
				if !probed[id] && st.inFlight == 0 {
					delete(states, id) // left, expired or lost meanwhile
				}
			}
		}
	}
}

// othersAnswered reports whether an agent other than id answered a probe
// within recent.
func othersAnswered(states map[string]*presenceState, id string, recent time.Duration, now time.Time) bool {
	for other, st := range states {
		if other != id && st.misses == 0 && now.Sub(st.answered) <= recent {
			return true
		}
	}
	return false
}

// probePresence asks whether the agent is still connected.
func (p presence) probePresence(ctx context.Context, id string, timeout time.Duration) probeResult {
	r := p.r
	res := probeResult{id: id, sent: r.now()}
	res.ok, res.absent = r.cfg.Prober.Probe(ctx, id, timeout)
	return res
}

// Prober asks NATS whether an agent's connection is up.
type Prober interface {
	// Probe sends agent a presence probe, waiting at most timeout: ok, it
	// answered; absent, nobody subscribes to its presence (its connection
	// closed); neither, the probe timed out or failed on our side.
	Probe(ctx context.Context, agent string, timeout time.Duration) (ok, absent bool)
	// Reconnects counts this coordinator's own reconnections to NATS.
	Reconnects() uint64
}

// natsProber probes over the coordinator's NATS connection.
type natsProber struct {
	nc    *nats.Conn
	group string
}

// Probe implements Prober.
func (p natsProber) Probe(ctx context.Context, agent string, timeout time.Duration) (ok, absent bool) {
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := p.nc.RequestWithContext(pctx, wire.AgentSubject(wire.SubjectAgentPresence, p.group, agent), nil)
	return err == nil, errors.Is(err, nats.ErrNoResponders)
}

// Reconnects implements Prober.
func (p natsProber) Reconnects() uint64 { return p.nc.Stats().Reconnects }

// agentAbsent takes the agent for lost because its connection closed,
// unless it was heard (register, heartbeat, liveness beat) since since: it
// came back, or is cut off from NATS alone. An agent that writes liveness
// beats is given livenessGrace after since for one to arrive.
func (p presence) agentAbsent(id string, since time.Time) absence {
	r := p.r
	now := r.now()
	verdict, a := r.table.judgeAbsent(id, since, now, r.beatsFresh(now))
	if verdict != absentLost {
		return verdict
	}
	r.log.Warn("agent lost: its NATS connection closed and it wrote no liveness beat since", "agent", id, "last_seen", a.LastSeen)
	r.cfg.Metrics.AgentLost(metrics.LostConnection)
	r.cfg.Listener.AgentsGone([]string{id})
	r.Trigger()
	return absentLost
}

// absence is what a run of presence misses means for an agent.
type absence int

const (
	absentAlive absence = iota // heard since the first miss
	absentLost                 // taken for lost: its tasks move
	absentWait                 // not yet known: its liveness beat decides
)
