package wire_test

import (
	"strings"
	"testing"

	"github.com/sluice-io/sluice/shared/wire"
)

// validToken reports whether tok can stand as one token of a NATS subject
// that is published to: non-empty, no separator, no wildcard, no white space.
func validToken(tok string) bool {
	return tok != "" && !strings.ContainsAny(tok, ".*> \t\r\n\f\v")
}

func TestSubjectToken(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"sluice", "sluice"},
		{"agent-1", "agent-1"},
		{"a_b", "a_b"},
		{"connect.prod", "connect%2Eprod"},
		{"a*b", "a%2Ab"},
		{">", "%3E"},
		{"web 1", "web%201"},
		{"tab\there", "tab%09here"},
		{"100%", "100%25"},
		{"%2E", "%252E"},
		{"zoné", "zon%C3%A9"},
		{"節点", "%E7%AF%80%E7%82%B9"},
		{"", "%"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			got := wire.SubjectToken(tc.id)
			if got != tc.want {
				t.Errorf("SubjectToken(%q) = %q, want %q", tc.id, got, tc.want)
			}
			if !validToken(got) {
				t.Errorf("SubjectToken(%q) = %q is not a valid subject token", tc.id, got)
			}
			back, err := wire.ParseSubjectToken(got)
			if err != nil || back != tc.id {
				t.Errorf("ParseSubjectToken(%q) = %q, %v; want %q", got, back, err, tc.id)
			}
		})
	}
}

// TestSubjectTokenInjective checks that ids which a lossy encoding (such as
// replacing every unsafe character with '_') would merge stay distinct.
func TestSubjectTokenInjective(t *testing.T) {
	ids := []string{
		"connect.prod", "connect_prod", "connect-prod", "connect prod", "connect*prod", "connect>prod",
		"connect%2Eprod", "connect%prod", "connectprod", "Connect.prod", "connect.prod.", ".connect.prod",
		"a*b", "a.b", "a>b", "a b", "a_b", "*", ">", ".", " ", "_", "%", "", "é", "e\u0301", "%C3%A9",
	}
	seen := map[string]string{}
	for _, id := range ids {
		tok := wire.SubjectToken(id)
		if other, ok := seen[tok]; ok {
			t.Errorf("%q and %q share the token %q", id, other, tok)
		}
		seen[tok] = id
	}
	// Every byte value round-trips, alone and next to safe characters.
	for c := 0; c < 256; c++ {
		id := "x" + string([]byte{byte(c)}) + "y"
		tok := wire.SubjectToken(id)
		if !validToken(tok) {
			t.Errorf("byte %#x: token %q is not a valid subject token", c, tok)
		}
		if back, err := wire.ParseSubjectToken(tok); err != nil || back != id {
			t.Errorf("byte %#x: ParseSubjectToken(%q) = %q, %v", c, tok, back, err)
		}
	}
}

// TestParseSubjectTokenRejects checks that only SubjectToken's own spelling
// decodes, so decoding stays the inverse of encoding.
func TestParseSubjectTokenRejects(t *testing.T) {
	for _, tok := range []string{"", "a.b", "a*b", "%2", "%G1", "%2e", "%41", "a b", "é"} {
		if id, err := wire.ParseSubjectToken(tok); err == nil {
			t.Errorf("ParseSubjectToken(%q) = %q, want an error", tok, id)
		}
	}
}

func TestSubjects(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{wire.AgentSubject(wire.SubjectAgentAssign, "connect.prod", "web 1"), "sluice.v3.connect%2Eprod.agent.web%201.task.assign"},
		{wire.AgentSubject(wire.SubjectAgentRevoke, "sluice", "agent-1"), "sluice.v3.sluice.agent.agent-1.task.revoke"},
		{wire.AgentSubject(wire.SubjectAgentSourceOffsets, "g", "a*b"), "sluice.v3.g.agent.a%2Ab.offsets.source"},
		{wire.AgentSubject(wire.SubjectAgentSinkOffsets, "g", "a"), "sluice.v3.g.agent.a.offsets.sink"},
		{wire.AgentSubjectAll(wire.SubjectAgentAssign, "connect.prod"), "sluice.v3.connect%2Eprod.agent.*.task.assign"},
		{wire.LeaderSubject(wire.SubjectLeaderRegister, "connect.prod", 7, "web 1"), "sluice.v3.connect%2Eprod.leader.7.register.web%201"},
		{wire.LeaderSubject(wire.SubjectLeaderHeartbeat, "g", 1, "a"), "sluice.v3.g.leader.1.heartbeat.a"},
		{wire.LeaderSubject(wire.SubjectLeaderStatus, "g", 12, "a"), "sluice.v3.g.leader.12.status.a"},
		{wire.LeaderSubject(wire.SubjectLeaderDeregister, "g", 3, "a"), "sluice.v3.g.leader.3.deregister.a"},
		{wire.LeaderSubject(wire.SubjectLeaderChunk, "g", 3, "a.b"), "sluice.v3.g.leader.3.chunk.a%2Eb"},
		{wire.LeaderSubjectAgents(wire.SubjectLeaderStatus, "g", 12), "sluice.v3.g.leader.12.status.*"},
		{wire.LeaderSubjectAll(wire.SubjectLeaderRegister, ">"), "sluice.v3.%3E.leader.*.register.*"},
		{wire.QueueGroup("connect.prod"), "sluice.v3.connect%2Eprod"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	// The agent id comes back from the subject it was put in.
	for _, id := range []string{"a", "web 1", "x.y*z", "é"} {
		if got, err := wire.LeaderSubjectAgent(wire.LeaderSubject(wire.SubjectLeaderHeartbeat, "g", 9, id)); err != nil || got != id {
			t.Errorf("LeaderSubjectAgent of %q: %q, %v", id, got, err)
		}
	}
	if _, err := wire.LeaderSubjectAgent("other.subject"); err == nil {
		t.Error("LeaderSubjectAgent accepted a foreign subject")
	}
	// The same agent id in two groups is two subjects.
	if wire.AgentSubject(wire.SubjectAgentAssign, "a", "agent-1") == wire.AgentSubject(wire.SubjectAgentAssign, "b", "agent-1") {
		t.Error("two groups share an agent subject")
	}
}
