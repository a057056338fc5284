package v1

import (
	"fmt"
	"regexp"
	"strconv"
)

// The leader lease lives in a NATS JetStream key-value bucket: creating the
// key acquires it, a compare-and-swap update on its revision renews it, and
// the bucket's max age expires it. Agents read it to learn the current term
// and address the leader's endpoints.
const (
	// LeaderKey is the key holding the lease.
	LeaderKey = "leader"

	// SubjectLeaderRegister and its siblings are the leader-only endpoints of
	// one term of a group; a deposed leader's subscriptions name an older
	// term, so an agent that read the current lease never reaches them.
	SubjectLeaderRegister = SubjectPrefix + ".%s.leader.%s.register"
	// SubjectLeaderHeartbeat is the heartbeat endpoint of a term.
	SubjectLeaderHeartbeat = SubjectPrefix + ".%s.leader.%s.heartbeat"
	// SubjectLeaderStatus is the status-report endpoint of a term.
	SubjectLeaderStatus = SubjectPrefix + ".%s.leader.%s.status"
	// SubjectLeaderDeregister is where an agent that shuts down gracefully
	// hands its tasks back at once.
	SubjectLeaderDeregister = SubjectPrefix + ".%s.leader.%s.deregister"
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

// LeaderSubject fills a leader subject template (SubjectLeader*) with a
// group id, encoded with SubjectToken, and a term.
func LeaderSubject(template, groupID string, term int64) string {
	return fmt.Sprintf(template, SubjectToken(groupID), strconv.FormatInt(term, 10))
}

// LeaderSubjectAll fills a leader subject template with a group id and a
// wildcard for the term: the endpoint of the group's leader of any term.
func LeaderSubjectAll(template, groupID string) string {
	return fmt.Sprintf(template, SubjectToken(groupID), "*")
}
