package v1

import (
	"fmt"
	"regexp"
)

// The leader lease lives in a NATS JetStream key-value bucket: creating the
// key acquires it, a compare-and-swap update on its revision renews it, and
// the bucket's max age expires it. Agents read it to learn the current term
// and address the leader's endpoints.
const (
	// LeaderKey is the key holding the lease.
	LeaderKey = "leader"

	// SubjectLeaderRegister and its siblings are the leader-only endpoints of
	// one term; a deposed leader's subscriptions name an older term, so an
	// agent that read the current lease never reaches them.
	SubjectLeaderRegister = "sluice.v1.leader.%d.register"
	// SubjectLeaderHeartbeat is the heartbeat endpoint of a term.
	SubjectLeaderHeartbeat = "sluice.v1.leader.%d.heartbeat"
	// SubjectLeaderStatus is the status-report endpoint of a term.
	SubjectLeaderStatus = "sluice.v1.leader.%d.status"
	// SubjectLeaderDeregister is where an agent that shuts down gracefully
	// hands its tasks back at once.
	SubjectLeaderDeregister = "sluice.v1.leader.%d.deregister"
)

// LeaderLease is the value of the lease key. Term is 0 between acquiring the
// key and stamping it with its revision.
type LeaderLease struct {
	ID   string `json:"id"`
	URL  string `json:"url"`
	Term int64  `json:"term"`
}

var bucketUnsafe = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// LeaderBucket is the key-value bucket of a cluster's lease.
func LeaderBucket(groupID string) string {
	return "sluice-leader-" + bucketUnsafe.ReplaceAllString(groupID, "_")
}

// LeaderSubject fills a leader subject template with a term.
func LeaderSubject(template string, term int64) string { return fmt.Sprintf(template, term) }
