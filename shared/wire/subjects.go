package wire

import (
	"fmt"
	"strconv"
	"strings"
)

// AgentSubject fills an agent subject template (SubjectAgent*) with a group
// id and an agent id, each encoded with SubjectToken.
func AgentSubject(template, groupID, agentID string) string {
	return fmt.Sprintf(template, SubjectToken(groupID), SubjectToken(agentID))
}

// AgentSubjectAll fills an agent subject template with a group id and a
// wildcard for the agent: the endpoint of every agent of the group.
func AgentSubjectAll(template, groupID string) string {
	return fmt.Sprintf(template, SubjectToken(groupID), "*")
}

// AgentInboxPrefix is the prefix of the reply subjects (inboxes) of one
// agent's NATS connection, and CoordinatorInboxPrefix that of a cluster's
// coordinators: each process receives replies only under its own prefix,
// so a NATS server can let an agent subscribe to its own replies and no
// one else's (deploy/nats).
func AgentInboxPrefix(groupID, agentID string) string {
	return "_INBOX.sluice." + SubjectToken(groupID) + ".agent." + SubjectToken(agentID)
}

// CoordinatorInboxPrefix is the inbox prefix of a cluster's coordinators;
// see AgentInboxPrefix.
func CoordinatorInboxPrefix(groupID string) string {
	return "_INBOX.sluice." + SubjectToken(groupID) + ".coordinator"
}

// QueueGroup is the micro queue group of a cluster's endpoints. Each cluster
// has its own, so that two clusters serving the same subject (which their
// group ids already keep apart) never share one queue and a request is
// never load-balanced to the other cluster.
func QueueGroup(groupID string) string {
	return SubjectPrefix + "." + SubjectToken(groupID)
}

// SubjectToken encodes an id — a group id, an agent id — as one NATS
// subject token, the one way every subject does. Letters, digits, '_' and
// '-' stand for themselves; every other byte of the id's UTF-8 text
// (including '.', '*', '>', white space and '%' itself) becomes %XX in upper
// case hex. The encoding is injective (distinct ids never share a token) and
// reversible with ParseSubjectToken. The empty id, which no valid config
// has, encodes to a lone "%" so that a subject never has an empty token.
func SubjectToken(id string) string {
	if id == "" {
		return "%"
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(id))
	for i := 0; i < len(id); i++ {
		c := id[i]
		if tokenSafe(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xF])
	}
	return b.String()
}

// ParseSubjectToken decodes a token made by SubjectToken, so that a tool
// reading subjects (a NATS monitor, a log) can name the group or agent.
func ParseSubjectToken(token string) (string, error) {
	if token == "%" {
		return "", nil
	}
	if token == "" {
		return "", fmt.Errorf("empty subject token")
	}
	var b strings.Builder
	b.Grow(len(token))
	for i := 0; i < len(token); i++ {
		c := token[i]
		switch {
		case tokenSafe(c):
			b.WriteByte(c)
		case c == '%' && i+2 < len(token):
			n, err := strconv.ParseUint(token[i+1:i+3], 16, 8)
			// Only the upper case form is accepted, and only for bytes that
			// need escaping: any other spelling is not SubjectToken's.
			if err != nil || strings.ToUpper(token[i+1:i+3]) != token[i+1:i+3] || tokenSafe(byte(n)) {
				return "", fmt.Errorf("subject token %q: bad escape at byte %d", token, i)
			}
			b.WriteByte(byte(n))
			i += 2
		default:
			return "", fmt.Errorf("subject token %q: byte %d (%q) is not SubjectToken's", token, i, c)
		}
	}
	return b.String(), nil
}

func tokenSafe(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}
