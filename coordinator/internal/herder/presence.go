package herder

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/coordinator/internal/metrics"
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

// presenceLoop probes the agents' presence every AgentProbe until ctx ends
// (leadership is revoked).
func (h *Herder) presenceLoop(ctx context.Context) {
	if every := h.cfg.AgentProbe; every > 0 {
		h.probeAgents(ctx, every, max(4*every, time.Second))
	}
}

// probeAgents probes each registered agent's presence every interval, each
// probe waiting at most timeout, until ctx ends. An agent with
// presenceInFlight probes still waiting (a paused agent, whose probes time
// out) is not probed again meanwhile.
func (h *Herder) probeAgents(ctx context.Context, every, timeout time.Duration) {
	states := map[string]*presenceState{}
	results := make(chan probeResult)
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(every)
	defer tick.Stop()
	reconnects, quietUntil := h.nc.Stats().Reconnects, time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case r := <-results:
			st := states[r.id]
			if st == nil || st != r.st {
				continue // judged, left or gone meanwhile
			}
			st.inFlight--
			if !r.sent.After(st.latest) {
				continue // stale: a later probe's result was taken already
			}
			st.latest = r.sent
			switch {
			case r.ok:
				st.misses, st.answered = 0, r.sent
			case r.absent:
				if st.misses == 0 {
					st.firstMiss = r.sent
				}
				st.misses++
			default:
				// A timeout or a closed connection of our own says nothing
				// of the agent; the lease decides.
				h.log.Debug("presence probe: no answer", "agent", r.id, "sent", r.sent, "took", time.Since(r.sent))
				st.misses = 0
			}
			if st.misses >= presenceMisses && time.Now().After(quietUntil) && othersAnswered(states, r.id, 3*every) {
				switch h.agentAbsent(r.id, st.firstMiss) {
				case absentLost:
					delete(states, r.id)
				case absentAlive:
					st.misses = 0
				case absentWait:
					// Its next liveness beat decides: the misses stand.
				}
			}
		case now := <-tick.C:
			if n := h.nc.Stats().Reconnects; n != reconnects {
				reconnects, quietUntil = n, now.Add(presenceSettle)
				for _, st := range states {
					st.misses = 0
				}
			}
			h.mu.Lock()
			ids := h.agents.Registered(v1.FeaturePresence)
			h.mu.Unlock()
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
					r := h.probePresence(ctx, id, timeout)
					r.st = st
					select {
					case results <- r:
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
func othersAnswered(states map[string]*presenceState, id string, recent time.Duration) bool {
	for other, st := range states {
		if other != id && st.misses == 0 && time.Since(st.answered) <= recent {
			return true
		}
	}
	return false
}

// probePresence asks NATS whether the agent is still connected.
func (h *Herder) probePresence(ctx context.Context, id string, timeout time.Duration) probeResult {
	r := probeResult{id: id, sent: time.Now()}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := h.nc.RequestWithContext(pctx, v1.AgentSubject(v1.SubjectAgentPresence, h.cfg.GroupID, id), nil)
	r.ok = err == nil
	r.absent = errors.Is(err, nats.ErrNoResponders)
	return r
}

// agentAbsent takes the agent for lost because its connection closed,
// unless it was heard (register, heartbeat, liveness beat) since since: it
// came back, or is cut off from NATS alone. An agent that writes liveness
// beats is given livenessGrace after since for one to arrive.
func (h *Herder) agentAbsent(id string, since time.Time) absence {
	h.mu.Lock()
	a, ok := h.agents.Get(id)
	lost := ok && a.Registered && a.LastSeen.Before(since)
	// An agent that writes liveness beats may only be cut off from NATS:
	// while beats reach this leader, it is lost once it has not been heard
	// for livenessGrace (its beats come every livenessEvery).
	if ok && a.Registered && a.Features[v1.FeatureKafkaLiveness] && h.beatsFresh(time.Now()) {
		if time.Since(a.LastSeen) < livenessGrace {
			h.mu.Unlock()
			return absentWait
		}
		lost = true
	}
	if lost {
		h.agents.Remove(id)
	}
	h.mu.Unlock()
	if !lost {
		return absentAlive
	}
	h.log.Warn("agent lost: its NATS connection closed and it wrote no liveness beat since", "agent", id, "last_seen", a.LastSeen)
	h.cfg.Metrics.AgentLost(metrics.LostConnection)
	h.agentsGone([]string{id})
	h.trigger()
	return absentLost
}

// absence is what a run of presence misses means for an agent.
type absence int

const (
	absentAlive absence = iota // heard since the first miss
	absentLost                 // taken for lost: its tasks move
	absentWait                 // not yet known: its liveness beat decides
)
