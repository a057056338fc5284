package v1

import "fmt"

// Protocol sluice.v1 had no group id in its subjects, so two clusters on one
// NATS server could answer each other's agents. Its agents are not served any
// more; a leader listens on the two subjects an old agent starts with only to
// tell it, with CodeUpgradeRequired, that it must be upgraded — a
// mixed-version cluster fails loudly instead of an agent waiting silently for
// a leader it can never reach.
const (
	// LegacySubjectLeaderRegister is sluice.v1's register subject of a term.
	LegacySubjectLeaderRegister = "sluice.v1.leader.%d.register"
	// LegacySubjectLeaderHeartbeat is sluice.v1's heartbeat subject of a term.
	LegacySubjectLeaderHeartbeat = "sluice.v1.leader.%d.heartbeat"
)

// LegacyLeaderSubject fills a sluice.v1 leader subject template with a term.
func LegacyLeaderSubject(template string, term int64) string {
	return fmt.Sprintf(template, term)
}

// UpgradeRequired is the error a leader answers an agent that speaks an
// older protocol with.
func UpgradeRequired(agentID string) *Error {
	return Errorf(CodeUpgradeRequired, "this coordinator speaks the %s protocol; upgrade agent %s", SubjectPrefix, agentID)
}
