package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// envName finds every environment variable a manifest names, set or in
// a commented-out line a reader is told to uncomment.
var envName = regexp.MustCompile(`name: (SLUICE_[A-Z0-9_]+)`)

// TestManifestsEnv checks the environment of the Sluice containers: every
// SLUICE_ variable they set, or offer in a comment, is one their command
// (or, for the agent, its preStop hook's CLI) reads; and none sets
// GOMEMLIMIT: the binary takes 90% of the container's memory limit, which
// a fixed value would stop following when the limit changes.
func TestManifestsEnv(t *testing.T) {
	for _, tc := range []struct {
		file, container string
		// hook are the commands of the container's hooks, whose flags
		// its environment sets too: the drain and its parent's session
		// flags (--url, --token-file).
		hook [][]string
	}{
		{"coordinator.yaml", "coordinator", nil},
		{"agent-sidecar.yaml", "sluice-agent", [][]string{{"agents", "drain"}, {"agents"}}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(manifestDir, tc.file)
			c := container(t, decodeManifest(t, path), tc.container)
			commands := append([][]string{c.Args}, tc.hook...)
			known := knownEnv(t, commands...)
			var names []string
			for _, e := range c.Env {
				names = append(names, e.Name)
				if e.Name == "GOMEMLIMIT" {
					t.Errorf("%s sets GOMEMLIMIT (%+v): the binary derives it from limits.memory", tc.container, e)
				}
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range envName.FindAllStringSubmatch(string(raw), -1) {
				names = append(names, m[1])
			}
			if bad := unknownEnv(names, known); len(bad) > 0 {
				t.Errorf("%s sets or offers %v, which sluice %v does not read", tc.file, bad, commands)
			}
			if q, ok := c.Resources.Limits["memory"]; !ok || q.Value() < 64<<20 {
				t.Errorf("%s: memory limit %v: the binary's GOMEMLIMIT is 90%% of it", tc.container, q.String())
			}
		})
	}
}

// unit is a systemd unit file's settings: each key's values in order
// (Environment= and the like repeat), comments and sections left out.
type unit map[string][]string

func readUnit(t *testing.T, name string) unit {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "systemd", name))
	if err != nil {
		t.Fatal(err)
	}
	u := unit{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' || line[0] == '[' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: %q is no key=value line", name, line)
		}
		u[k] = append(u[k], v)
	}
	return u
}

// last is a setting's effective value: its last.
func (u unit) last(key string) string {
	if v := u[key]; len(v) > 0 {
		return v[len(v)-1]
	}
	return ""
}

// TestSystemdUnits checks deploy/systemd: no unit runs as root — the agent
// as its own user, which the shipped sysusers.d file makes, in a state
// directory systemd makes it and that is its working directory, on a file
// system otherwise read-only to it, without privileges; the coordinator
// with a dynamic user — and every SLUICE_ variable a unit sets is one its
// command reads.
func TestSystemdUnits(t *testing.T) {
	for _, name := range []string{"sluice-agent.service", "sluice-coordinator.service"} {
		t.Run(name, func(t *testing.T) {
			u := readUnit(t, name)
			user := u.last("User")
			if user == "root" || user == "0" || (user == "" && u.last("DynamicUser") != "yes") {
				t.Errorf("runs as user %q (DynamicUser=%q): want its own, not root", user, u.last("DynamicUser"))
			}
			exec := strings.Fields(u.last("ExecStart"))
			if len(exec) < 2 || filepath.Base(exec[0]) != "sluice" {
				t.Fatalf("ExecStart=%q: want the sluice binary", u.last("ExecStart"))
			}
			var names []string
			for _, e := range u["Environment"] {
				k, _, _ := strings.Cut(e, "=")
				names = append(names, k)
			}
			if bad := unknownEnv(names, knownEnv(t, exec[1:])); len(bad) > 0 {
				t.Errorf("sets %v, which sluice %v does not read", bad, exec[1:])
			}
		})
	}

	u := readUnit(t, "sluice-agent.service")
	user := u.last("User")
	if user != "sluice-agent" || u.last("Group") != user {
		t.Errorf("the agent runs as User=%q Group=%q, want sluice-agent", user, u.last("Group"))
	}
	sysusers, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "systemd", "sluice-agent.sysusers"))
	if err != nil {
		t.Fatal(err)
	}
	declared := false
	for _, line := range strings.Split(string(sysusers), "\n") {
		f := strings.Fields(line)
		declared = declared || len(f) >= 2 && f[0] == "u" && f[1] == user
	}
	if !declared {
		t.Errorf("sluice-agent.sysusers does not make user %q", user)
	}
	state := u.last("StateDirectory")
	if state == "" || u.last("WorkingDirectory") != "/var/lib/"+state {
		t.Errorf("StateDirectory=%q, WorkingDirectory=%q: the working directory must be the state directory systemd makes for the user", state, u.last("WorkingDirectory"))
	}
	for key, want := range map[string]string{"NoNewPrivileges": "yes", "ProtectSystem": "strict", "CapabilityBoundingSet": "", "PrivateTmp": "yes"} {
		if got, set := u[key]; !set || u.last(key) != want {
			t.Errorf("%s=%q (set: %v), want %q", key, u.last(key), got != nil, want)
		}
	}
	if !slices.Contains(u["Environment"], "SLUICE_FILE_ALLOWED_PATHS=/var/lib/sluice/files,/etc/sluice/secrets") {
		t.Errorf("the agent's allowed paths are %v: it may write only its state directory", u["Environment"])
	}
}
