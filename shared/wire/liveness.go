package wire

import (
	"encoding/json"
	"fmt"
	"time"
)

// An agent is alive to the leader while it is heard on either of two paths:
// NATS (register, heartbeat) or Kafka, where it writes a LivenessBeat to the
// cluster's liveness topic every RegisterReply.LivenessMillis. An agent cut
// off from NATS alone keeps its tasks (they are not started elsewhere), and
// an agent that is heard on neither path stops its own tasks (fences itself)
// after half its lease, before the leader, which waits the whole lease, can
// start them elsewhere: a task never runs twice. When NATS is down for
// everyone no leader can move anything, and the data keeps flowing. Every
// agent of this protocol level beats and fences itself so.

// LivenessBeat is the value of a liveness record, keyed by the agent's id.
type LivenessBeat struct {
	Group string `json:"group"`
	Agent string `json:"agent"`
	// Term is the term of the leader the agent last registered with.
	Term int64 `json:"term"`
	// SentMillis is when the agent sent it (Unix milliseconds): for
	// people, never compared across hosts' clocks.
	SentMillis int64 `json:"sent_ms"`
}

// EncodeLivenessBeat encodes a beat of agent in group, sent at now.
func EncodeLivenessBeat(group, agent string, term int64, now time.Time) []byte {
	b, _ := json.Marshal(LivenessBeat{Group: group, Agent: agent, Term: term, SentMillis: now.UnixMilli()})
	return b
}

// DecodeLivenessBeat decodes a liveness record's value.
func DecodeLivenessBeat(value []byte) (LivenessBeat, error) {
	var b LivenessBeat
	if err := json.Unmarshal(value, &b); err != nil {
		return b, fmt.Errorf("liveness beat: %w", err)
	}
	if b.Agent == "" {
		return b, fmt.Errorf("liveness beat: no agent")
	}
	return b, nil
}
