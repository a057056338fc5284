package wire

// The presence endpoint of an agent (SubjectAgentPresence)
// answers every request with an empty message, at once, signed or not,
// from when the agent starts until its NATS connection closes. The
// request's answer carries nothing; what the leader learns is whether
// anyone answers. A NATS server knows at once when a client's connection
// closes (a process killed, a node whose TCP connection was reset) and
// then answers a request to that client's subjects with "no responders":
// so the leader notices a crashed agent within its probe interval, not
// its lease (see FeaturePresence).
//
// The agent keeps answering while it shuts down gracefully: its tasks
// are stopping and committing then, and must not be started elsewhere
// before they have; it deregisters when they have.

// FeaturePresence is an agent's presence endpoint (SubjectAgentPresence).
// The leader probes only agents that list it: an agent of an older version
// has no such endpoint, and "no responders" from it would say nothing.
const FeaturePresence = "presence"
