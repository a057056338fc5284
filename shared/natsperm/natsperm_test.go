package natsperm

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// TestGeneratedConfigLoads: the rendered file is a configuration
// nats-server takes, with a user per coordinator and agent whose
// permissions name the agent's own id; seeds are private and kept across
// runs, so that credentials already handed out stay valid.
func TestGeneratedConfigLoads(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{GroupID: "connect.prod", Listen: "127.0.0.1:4222", StoreDir: filepath.Join(dir, "js")}
	files, err := Generate(dir, cfg, []string{"c1", "c2"}, []string{"web 1", "agent-2"})
	if err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(files.Config)
	if err != nil {
		t.Fatalf("nats-server refuses the generated file: %v", err)
	}
	if len(opts.Nkeys) != 4 || opts.Users != nil || !opts.JetStream {
		t.Fatalf("%d nkey users, users %v, jetstream %v", len(opts.Nkeys), opts.Users, opts.JetStream)
	}
	agent := opts.Nkeys[2]
	if !slices.Contains(agent.Permissions.Subscribe.Allow, "sluice.v3.connect%2Eprod.agent.web%201.>") ||
		!slices.Contains(agent.Permissions.Publish.Allow, "sluice.v3.connect%2Eprod.leader.*.heartbeat.web%201") ||
		!slices.Contains(agent.Permissions.Publish.Allow, "sluice.v3.connect%2Eprod.leader.*.connector.event.web%201") ||
		agent.Permissions.Response == nil {
		t.Fatalf("agent web 1's permissions: %+v", agent.Permissions)
	}
	coordinator := opts.Nkeys[0]
	if !slices.Contains(coordinator.Permissions.Publish.Allow, "sluice.v3.connect%2Eprod.agent.*.connector") ||
		!slices.Contains(coordinator.Permissions.Subscribe.Allow, "sluice.v3.connect%2Eprod.leader.*.connector.event.*") {
		t.Fatalf("coordinator c1's permissions: %+v", coordinator.Permissions)
	}
	for _, p := range agent.Permissions.Publish.Allow {
		if strings.HasPrefix(p, "$KV.") || strings.Contains(p, "STREAM.CREATE") || strings.Contains(p, ".agent.") {
			t.Errorf("an agent may publish %s", p)
		}
	}
	for _, f := range []string{files.Config, files.Agents["web 1"], files.Coordinators["c1"]} {
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v", f, st.Mode(), err)
		}
	}
	before, _ := os.ReadFile(files.Agents["web 1"])
	again, err := Generate(dir, cfg, []string{"c1", "c2"}, []string{"web 1", "agent-2", "agent-3"})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(again.Agents["web 1"])
	if string(before) != string(after) {
		t.Error("a second run changed an existing seed")
	}
	if opts, err := server.ProcessConfigFile(again.Config); err != nil || len(opts.Nkeys) != 5 {
		t.Fatalf("after adding an agent: %v", err)
	}
}

// TestRenderRefusesWhatItCannotWrite: a user without credentials, or a
// value that would break out of its quotes, is refused.
func TestRenderRefusesWhatItCannotWrite(t *testing.T) {
	for _, u := range []User{{Name: "none"}, {Name: "q", User: "a\"b", Password: "p"}, {Name: "n\nx", NKey: "U"}} {
		if _, err := Render(Config{GroupID: "g", Users: []User{u}}); err == nil {
			t.Errorf("user %+v rendered", u)
		}
	}
	if _, err := Render(Config{}); err == nil {
		t.Error("a config without a group rendered")
	}
	b, err := Render(Config{GroupID: "g", Users: []User{{Name: "a", AgentID: "a", User: "a", Password: "$2a$11$hash"}}})
	if err != nil || !strings.Contains(string(b), `password: "$2a$11$hash"`) {
		t.Fatalf("%s, %v", b, err)
	}
	file := filepath.Join(t.TempDir(), "c.conf")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(file)
	if err != nil || len(opts.Users) != 1 || opts.Users[0].Password != "$2a$11$hash" {
		t.Fatalf("password users: %+v, %v", opts, err)
	}
}

// TestGenerateRefusesEmptyAndRepeatedNames: a stray comma in an --agent
// list (an empty id) would make a user of the coordinator role; Generate
// refuses it, and a name given twice, before it writes anything.
func TestGenerateRefusesEmptyAndRepeatedNames(t *testing.T) {
	for _, tc := range []struct {
		coordinators, agents []string
		want                 string
	}{
		{[]string{"coordinator"}, []string{"a1", ""}, "agent id 2 of 2 is empty"},
		{[]string{"coordinator"}, []string{" "}, "agent id 1 of 1 is empty"},
		{[]string{""}, []string{"a1"}, "coordinator name 1 of 1 is empty"},
		{[]string{"coordinator"}, []string{"a1", "a1"}, `agent id "a1" is given twice`},
	} {
		dir := filepath.Join(t.TempDir(), "out")
		_, err := Generate(dir, Config{GroupID: "g"}, tc.coordinators, tc.agents)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: %v, want %q", tc.coordinators, tc.agents, err, tc.want)
		}
		if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
			t.Errorf("%v %v: %s was written", tc.coordinators, tc.agents, dir)
		}
	}
}
