package wire_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"
)

// TestSubjectTable checks every row of the subject table: its template is
// a subject of this protocol, filled the way its direction says, named
// by the tokens after the agent or term, and each template is in the table
// once per direction.
func TestSubjectTable(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range wire.Subjects {
		if seen[s.Template] {
			t.Errorf("%s: template %s is in the table twice", s.Name, s.Template)
		}
		seen[s.Template] = true
		var subject, want string
		switch s.Direction {
		case wire.ToAgent:
			subject = wire.AgentSubject(s.Template, "g", "a")
			want = "sluice.v3.g.agent.a." + s.Name
		case wire.ToLeader:
			subject = wire.LeaderSubject(s.Template, "g", 7, "a")
			want = "sluice.v3.g.leader.7." + s.Name + ".a"
		default:
			t.Errorf("%s: no direction", s.Name)
			continue
		}
		if subject != want {
			t.Errorf("%s (%s): filled %q, want %q", s.Name, s.Direction, subject, want)
		}
		if got, ok := wire.SubjectOf(s.Template); !ok || got.Name != s.Name {
			t.Errorf("SubjectOf(%s) = %+v, %v", s.Template, got, ok)
		}
		if (s.Request == nil) != (s.Reply == nil) {
			t.Errorf("%s: a request without a reply type, or the reverse", s.Name)
		}
	}
	if _, ok := wire.SubjectOf("sluice.v3.%s.agent.%s.nothing"); ok {
		t.Error("SubjectOf found a template not in the table")
	}
}

// TestRequestsValidate checks that every request type of the table
// validates itself, refuses its zero value with a CodeBadRequest naming a
// field, and is a command (to agents) or names its agent (to the leader),
// which the receivers' guards rely on.
func TestRequestsValidate(t *testing.T) {
	validator := reflect.TypeFor[wire.Validator]()
	command := reflect.TypeFor[wire.Command]()
	report := reflect.TypeFor[wire.AgentReport]()
	for _, s := range wire.Subjects {
		if s.Request == nil {
			continue
		}
		ptr := reflect.PointerTo(s.Request)
		if !ptr.Implements(validator) {
			t.Errorf("%s: *%s has no Validate", s.Name, s.Request.Name())
			continue
		}
		err := reflect.New(s.Request).Interface().(wire.Validator).Validate()
		if !api.IsCode(err, api.CodeBadRequest) {
			t.Errorf("%s: the zero %s validates: %v", s.Name, s.Request.Name(), err)
		}
		if s.Name == "chunk" {
			continue // chunks name their endpoint, which is checked whole
		}
		switch {
		case s.Direction == wire.ToAgent && !ptr.Implements(command):
			t.Errorf("%s: *%s is not a wire.Command", s.Name, s.Request.Name())
		case s.Direction == wire.ToLeader && !ptr.Implements(report):
			t.Errorf("%s: *%s is not a wire.AgentReport", s.Name, s.Request.Name())
		}
	}
}

// TestValidateNamesTheField checks requests the receivers refuse, each by
// the field that is wrong, and that well-formed ones pass.
func TestValidateNamesTheField(t *testing.T) {
	v := "1"
	for _, tc := range []struct {
		name  string
		req   wire.Validator
		field string // "" for valid
	}{
		{"assign ok", &wire.AssignRequest{Term: 1, Tasks: []wire.TaskAssignment{{ID: wire.TaskID{Connector: "c"}, Generation: 1}}}, ""},
		{"assign no connector", &wire.AssignRequest{Term: 1, Tasks: []wire.TaskAssignment{{Generation: 1}}}, "tasks[].id.connector"},
		{"assign term", &wire.AssignRequest{Term: 0}, "term"},
		{"assign forged term", &wire.AssignRequest{Term: wire.MaxLeaderTerm + 1}, "term"},
		{"revoke ok, none", &wire.RevokeRequest{Term: 2, Tasks: []wire.TaskID{}}, ""},
		{"revoke negative task", &wire.RevokeRequest{Term: 2, Tasks: []wire.TaskID{{Connector: "c", Task: -1}}}, "tasks[].task"},
		{"source fence only", &wire.SourceOffsetsRequest{Term: 1, Connector: "c", Op: wire.OffsetsOpAlter, FenceIDs: []string{"g-c-0"}}, ""},
		{"source op", &wire.SourceOffsetsRequest{Term: 1, Connector: "c", Op: "delete"}, "op"},
		{"source writes without txn", &wire.SourceOffsetsRequest{Term: 1, Connector: "c", Op: wire.OffsetsOpAlter, Topic: "o", Writes: []wire.OffsetWrite{{Key: "k", Value: &v}}}, "txn_id"},
		{"source write without key", &wire.SourceOffsetsRequest{Term: 1, Connector: "c", Op: wire.OffsetsOpAlter, TxnID: "t", Topic: "o", Writes: []wire.OffsetWrite{{Value: &v}}}, "writes[].key"},
		{"source confined without connector topic", &wire.SourceOffsetsRequest{Term: 1, Connector: "c", Op: wire.OffsetsOpAlter, TxnID: "t", Topic: "o", Writes: []wire.OffsetWrite{{Key: "k", Topic: "o"}}}, "writes[].topic"},
		{"sink reset ok", &wire.SinkOffsetsRequest{Term: 1, Connector: "c", Op: wire.OffsetsOpReset, Group: "connect-c"}, ""},
		{"sink no group", &wire.SinkOffsetsRequest{Term: 1, Connector: "c", Op: wire.OffsetsOpReset}, "group"},
		{"sink partition", &wire.SinkOffsetsRequest{Term: 1, Connector: "c", Op: wire.OffsetsOpAlter, Group: "g", Offsets: []wire.SinkPartitionOffset{{Topic: "t", Partition: -1}}}, "offsets[].partition"},
		{"replace reset ok", &wire.OffsetsReplaceRequest{Term: 1, Connector: "c", TxnID: "t", Topic: "o"}, ""},
		{"replace no topic", &wire.OffsetsReplaceRequest{Term: 1, Connector: "c", TxnID: "t"}, "topic"},
		{"loggers ok", &wire.LoggersRequest{Term: 1, Levels: []wire.LoggerSetting{{Logger: "", Level: "DEBUG"}}}, ""},
		{"loggers level", &wire.LoggersRequest{Term: 1, Levels: []wire.LoggerSetting{{Logger: "x"}}}, "levels[].level"},
		{"connector stop ok", &wire.PluginConnectorRequest{Term: 1, Op: wire.PluginOpStop, Name: "c"}, ""},
		{"connector start no config", &wire.PluginConnectorRequest{Term: 1, Op: wire.PluginOpStart, Name: "c"}, "config.connector.class"},
		{"connector validate ok", &wire.PluginConnectorRequest{Term: 1, Op: wire.PluginOpValidate, Config: map[string]string{"connector.class": "X"}}, ""},
		{"connector unknown op", &wire.PluginConnectorRequest{Term: 1, Op: "restart"}, "op"},
		{"connector config_def no class", &wire.PluginConnectorRequest{Term: 1, Op: wire.PluginOpConfigDef}, "class"},
		{"event ok", &wire.PluginConnectorEvent{AgentID: "a", Name: "c", Kind: wire.PluginEventReconfigure}, ""},
		{"event kind", &wire.PluginConnectorEvent{AgentID: "a", Name: "c", Kind: "boom"}, "kind"},
		{"register ok", &wire.RegisterRequest{AgentID: "a", Tasks: []wire.RunningTask{{ID: wire.TaskID{Connector: "c"}}}}, ""},
		{"register task", &wire.RegisterRequest{AgentID: "a", Tasks: []wire.RunningTask{{}}}, "tasks[].id.connector"},
		{"status state", &wire.StatusReport{AgentID: "a", ID: wire.TaskID{Connector: "c"}, State: "DONE"}, "state"},
		{"status ok", &wire.StatusReport{AgentID: "a", ID: wire.TaskID{Connector: "c"}, State: api.StateRunning}, ""},
		{"chunk stream", &wire.RequestChunk{Stream: strings.Repeat("s", 65), Subject: "x"}, "stream"},
		{"chunk ok", &wire.RequestChunk{Stream: "s", Subject: "x", Size: 1}, ""},
	} {
		err := tc.req.Validate()
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.field != "" && (!api.IsCode(err, api.CodeBadRequest) || !strings.Contains(err.Error(), tc.field)):
			t.Errorf("%s: got %v, want a bad request naming %s", tc.name, err, tc.field)
		}
	}
}

// TestRepliesHaveNoType checks that replies carry the leader's level where
// the agent reads it, and no per-message type strings, which no receiver
// read.
func TestRepliesHaveNoType(t *testing.T) {
	for _, s := range wire.Subjects {
		if s.Reply == nil {
			continue
		}
		b, err := json.Marshal(reflect.New(s.Reply).Interface())
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"type"`) {
			t.Errorf("%s: the reply %s has a type field: %s", s.Name, s.Reply.Name(), b)
		}
	}
	b, _ := json.Marshal(wire.RegisterReply{Level: wire.ProtocolLevel, Term: 4})
	var back wire.RegisterReply
	if err := json.Unmarshal(b, &back); err != nil || back.Level != wire.ProtocolLevel || !strings.Contains(string(b), `"level":3`) {
		t.Errorf("register reply %s: %+v, %v", b, back, err)
	}
}

// TestRegisterIgnoresFeatures: an agent of an earlier build of this level
// also sent the features it served; a receiver decodes and accepts its
// registration and ignores them, since the level alone states them.
func TestRegisterIgnoresFeatures(t *testing.T) {
	in := `{"agent_id":"a","tasks":[],"version":"0.1.0","features":["connector-offsets-topic","kafka-liveness","presence"]}`
	var req wire.RegisterRequest
	if err := json.Unmarshal([]byte(in), &req); err != nil {
		t.Fatal(err)
	}
	if err := req.Validate(); err != nil || req.AgentID != "a" || req.Version != "0.1.0" {
		t.Fatalf("register request %+v: %v", req, err)
	}
	if b, _ := json.Marshal(req); strings.Contains(string(b), "features") {
		t.Errorf("a registration sends features: %s", b)
	}
}
