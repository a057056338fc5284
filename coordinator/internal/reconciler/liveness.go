package reconciler

import (
	"time"
)

// Agents are heard on two paths: NATS (register, heartbeat) and Kafka,
// where each writes a liveness beat every LivenessEvery (v1.LivenessBeat).
// The leader reads the beats (the herder follows the topic) and keeps the
// lease of every agent it hears on either: one cut off from NATS alone
// keeps its tasks instead of having them started elsewhere while it still
// runs them (a task never runs twice). An agent heard on neither fences
// itself (agent/fence.go) before its lease runs out here.
//
// A crashed agent's NATS connection closes, and its presence probe finds
// nobody (presence.go); since an agent cut off from NATS alone looks the
// same, the leader takes it for lost only once it has not been heard for
// livenessGrace — and only while beats reach the leader at all
// (livenessFresh): a leader that reads no beat cannot tell, and judges by
// NATS alone, as before beats.
const (
	// LivenessEvery is how often agents write their liveness beats.
	LivenessEvery = 150 * time.Millisecond
	livenessGrace = 3 * LivenessEvery
	livenessFresh = 2 * LivenessEvery
)

// HeardBeats keeps the lease of every agent whose liveness beat was read
// just now; agents of other groups were filtered out by the caller.
func (r *Reconciler) HeardBeats(agents []string) {
	if len(agents) == 0 {
		return
	}
	now := r.now()
	r.table.Touch(agents, now)
	r.lastBeat.Store(now.UnixNano())
}

// beatsFresh reports whether the leader has read a beat of any agent in the
// last livenessFresh: its view of the liveness path is current.
func (r *Reconciler) beatsFresh(now time.Time) bool {
	last := r.lastBeat.Load()
	return last != 0 && now.Sub(time.Unix(0, last)) <= livenessFresh
}
