package wire

import (
	"fmt"
	"github.com/sluice-io/sluice/api"
)

// Older protocols are not served any more; a leader listens on the two
// subjects an old agent starts with only to tell it, with
// CodeUpgradeRequired, that it must be upgraded — a mixed-version cluster
// fails loudly instead of an agent waiting silently for a leader it can
// never reach. Protocol sluice.v1 had no group id in its subjects, so two
// clusters on one NATS server could answer each other's agents; sluice.v2
// had no agent id in the subjects agents send to the leader, so NATS
// permissions could not tell one agent from another.
const (
	// LegacySubjectLeaderRegister is sluice.v1's register subject of a term.
	LegacySubjectLeaderRegister = "sluice.v1.leader.%d.register"
	// LegacySubjectLeaderHeartbeat is sluice.v1's heartbeat subject of a term.
	LegacySubjectLeaderHeartbeat = "sluice.v1.leader.%d.heartbeat"
	// LegacyV2SubjectLeaderRegister is sluice.v2's register subject of a
	// group and term.
	LegacyV2SubjectLeaderRegister = "sluice.v2.%s.leader.%d.register"
	// LegacyV2SubjectLeaderHeartbeat is sluice.v2's heartbeat subject of a
	// group and term.
	LegacyV2SubjectLeaderHeartbeat = "sluice.v2.%s.leader.%d.heartbeat"
)

// LegacyLeaderSubject fills a sluice.v1 leader subject template with a term.
func LegacyLeaderSubject(template string, term int64) string {
	return fmt.Sprintf(template, term)
}

// LegacyV2LeaderSubject fills a sluice.v2 leader subject template with a
// group id, encoded with SubjectToken as sluice.v2 did, and a term.
func LegacyV2LeaderSubject(template, groupID string, term int64) string {
	return fmt.Sprintf(template, SubjectToken(groupID), term)
}

// UpgradeRequired is the error a leader answers an agent that speaks an
// older protocol with.
func UpgradeRequired(agentID string) *api.Error {
	return api.Errorf(api.CodeUpgradeRequired, "this coordinator speaks the %s protocol; upgrade agent %s", SubjectPrefix, agentID)
}
