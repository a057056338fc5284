package wire

// The presence endpoint of an agent (SubjectAgentPresence)
// answers every request with an empty message, at once, signed or not,
// from when the agent starts until its NATS connection closes. The
// request's answer carries nothing; what the leader learns is whether
// anyone answers. A NATS server knows at once when a client's connection
// closes (a process killed, a node whose TCP connection was reset) and
// then answers a request to that client's subjects with "no responders":
// so the leader notices a crashed agent within its probe interval, not
// its lease. Every agent of this protocol level serves it, so the leader
// probes every registered agent.
//
// The agent keeps answering while it shuts down gracefully: its tasks
// are stopping and committing then, and must not be started elsewhere
// before they have; it deregisters when they have.
