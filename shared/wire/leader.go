package wire

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The leader lease lives in a NATS JetStream key-value bucket: creating the
// key acquires it, a compare-and-swap update on its revision renews it, and
// the bucket's max age expires it. Agents read it to learn the current term
// and address the leader's endpoints.
const (
	// LeaderKey is the key holding the lease.
	LeaderKey = "leader"
)

// LeaderLease is the value of the lease key. Term orders leaders: a new
// leader's is above every term it has seen and above the key's revision, so
// it keeps growing when the bucket is deleted and made again.
type LeaderLease struct {
	ID   string `json:"id"`
	URL  string `json:"url"`
	Term int64  `json:"term"`
	// Key is the public half (base64 of an ed25519 public key) of the key
	// pair the leader made for this term; it signs every command it sends
	// to agents (SignatureHeader), and agents refuse a command that it did
	// not sign. Only coordinators may write the lease bucket, so only a
	// coordinator can name a key here.
	Key string `json:"key,omitempty"`
	// Nonce is new for every attempt to take the lease: the coordinator
	// that made an attempt tells its own leases from one an abandoned
	// attempt left (a create whose answer it stopped waiting for), which
	// it deletes at once.
	Nonce string `json:"nonce,omitempty"`
	// Sig is base64 of the ed25519 signature, by a leader key pinned on
	// every process (--leader-key-file; agents and followers trust its
	// public half), of LeaseSigned: a lease without a valid one is ignored
	// wherever keys are pinned, so whoever can merely write the bucket
	// cannot lead.
	Sig string `json:"sig,omitempty"`
}

// MaxLeaderTerm is the largest term taken: a lease naming a larger one is
// forged (real terms grow by one an election), and refusing it keeps a
// forged term from pushing real ones toward overflow.
const MaxLeaderTerm = int64(1) << 53

// leaseSignedPrefix keeps a lease signature from being valid as the
// signature of anything else a leader key signs.
const leaseSignedPrefix = "sluice-lease\n"

// LeaseSigned is what a lease's signature covers: the cluster it belongs to
// (a lease of one cluster is worthless in another's bucket) and every field
// but the signature.
func LeaseSigned(groupID string, l LeaderLease) []byte {
	return fmt.Appendf(nil, "%s%q\n%q\n%q\n%d\n%q\n%q", leaseSignedPrefix, groupID, l.ID, l.URL, l.Term, l.Key, l.Nonce)
}

var bucketUnsafe = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// LeaderBucket is the key-value bucket of a cluster's lease.
func LeaderBucket(groupID string) string {
	return "sluice-leader-" + bucketUnsafe.ReplaceAllString(groupID, "_")
}

// LeaderSubject fills a leader subject template (SubjectLeader*) with a
// group id and the calling agent's id, each encoded with SubjectToken, and
// a term.
func LeaderSubject(template, groupID string, term int64, agentID string) string {
	return fmt.Sprintf(template, SubjectToken(groupID), strconv.FormatInt(term, 10), SubjectToken(agentID))
}

// LeaderSubjectAgents fills a leader subject template with a group id, a
// term and a wildcard for the agent: what the leader of that term serves.
func LeaderSubjectAgents(template, groupID string, term int64) string {
	return fmt.Sprintf(template, SubjectToken(groupID), strconv.FormatInt(term, 10), "*")
}

// LeaderSubjectAll fills a leader subject template with a group id and
// wildcards for the term and the agent: the endpoint of the group's leader
// of any term, for any agent.
func LeaderSubjectAll(template, groupID string) string {
	return fmt.Sprintf(template, SubjectToken(groupID), "*", "*")
}

// LeaderSubjectAgent returns the agent id a leader subject (one filled by
// LeaderSubject) names in its last token.
func LeaderSubjectAgent(subject string) (string, error) {
	i := strings.LastIndexByte(subject, '.')
	if i < 0 || !strings.HasPrefix(subject, SubjectPrefix+".") {
		return "", fmt.Errorf("subject %q is not a %s leader subject", subject, SubjectPrefix)
	}
	return ParseSubjectToken(subject[i+1:])
}

// SignatureHeader carries the leader's signature of a command it sends to
// an agent: base64 of the ed25519 signature, by the key of its term's lease
// (LeaderLease.Key), of SignedCommand(subject, body). A command sent in
// chunks is signed whole, before it is cut, and checked once put together.
const SignatureHeader = "Sluice-Signature"

// signedCommandPrefix keeps a command signature from being valid as the
// signature of anything else the key might ever sign.
const signedCommandPrefix = "sluice-command\n"

// SignedCommand is what a command's signature covers: the subject it is
// sent on (so that a command for one agent cannot be replayed to another)
// and its JSON body, which holds its term.
func SignedCommand(subject string, body []byte) []byte {
	out := make([]byte, 0, len(signedCommandPrefix)+len(subject)+1+len(body))
	out = append(out, signedCommandPrefix...)
	out = append(out, subject...)
	out = append(out, '\n')
	return append(out, body...)
}
