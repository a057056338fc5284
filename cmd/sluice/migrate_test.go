package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/sluice-io/sluice/agent"
	"github.com/sluice-io/sluice/cmd/sluice/internal/transfer"
	"github.com/sluice-io/sluice/connect/converters"
	"github.com/sluice-io/sluice/connect/file"
	"github.com/sluice-io/sluice/connect/plugins"
)

// withoutGenerator gives the agent only the file connectors (and the
// converters), so that a
// cluster lacks a class another one has.
func withoutGenerator(t *testing.T) func(*agent.Config) {
	return func(c *agent.Config) {
		reg, err := plugins.New(append(converters.Plugins(), file.SourcePlugin(), file.SinkPlugin())...)
		if err != nil {
			t.Fatal(err)
		}
		c.Plugins = reg
	}
}

// TestMigrate migrates from one Sluice cluster, which serves Kafka
// Connect's REST API and so stands for a Kafka Connect cluster here, into
// another: a dry run changes nothing on either side; a file source
// half-way through its file continues on the target at the next line and
// is left STOPPED on the source; a class the target lacks is not migrated
// and left running; a name the target has is not migrated;
// --delete-source deletes the source's connector once the target has it.
func TestMigrate(t *testing.T) {
	from := startCluster(t)
	to := startCluster(t, withoutGenerator(t))
	dir := t.TempDir()
	in := writeFile(t, dir, "in.txt", "1\n2\n3\n")
	create(t, from.URL, dir, `{"name":"files-a","config":{"connector.class":"org.apache.kafka.connect.file.FileStreamSourceConnector","file":`+quote(in)+`,"topic":"lines"}}`)
	create(t, from.URL, dir, `{"name":"gen","config":{"connector.class":"GeneratorSource","topic":"gen","count":"5"}}`)
	wantA := []string{`{"offset":{"position":6},"partition":{"filename":` + quote(in) + `}}`}
	eventually(t, 60*time.Second, func() (bool, string) {
		got := offsetsOf(t, from.URL, "files-a")
		return slices.Equal(got, wantA), strings.Join(got, " ")
	})
	eventually(t, 30*time.Second, func() (bool, string) {
		st := stateOf(t, from.URL, "gen")
		return st == "RUNNING", st
	})

	// A dry run: the plan, and nothing changed on either side.
	out, errOut, code := runCLI(t, "migrate", "--from", from.URL, "--url", to.URL, "--dry-run", "-o", "json")
	var plan []transfer.Result
	if err := json.Unmarshal([]byte(out), &plan); code != 0 || err != nil || len(plan) != 2 ||
		plan[0] != (transfer.Result{Name: "files-a", Type: "source", Class: "org.apache.kafka.connect.file.FileStreamSourceConnector", Partitions: 1, State: "RUNNING", Result: "would migrate"}) ||
		plan[1] != (transfer.Result{Name: "gen", Type: "source", Class: "GeneratorSource", Result: "not migrated", Detail: "no Sluice agent runs class GeneratorSource"}) ||
		!strings.Contains(errOut, "files-a (source, RUNNING on Kafka Connect, 1 partition): would stop it there and create it RUNNING in Sluice") {
		t.Fatalf("dry run: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if got := names(t, to.URL); len(got) != 0 {
		t.Fatalf("the dry run created %v", got)
	}
	if st := stateOf(t, from.URL, "files-a"); st != "RUNNING" {
		t.Fatalf("the dry run left files-a %s on the source", st)
	}

	out, errOut, code = runCLI(t, "migrate", "--from", from.URL, "--url", to.URL)
	if code != 0 || row(out, "files-a") != "files-a source org.apache.kafka.connect.file.FileStreamSourceConnector 1 RUNNING migrated" ||
		row(out, "gen") != "gen source GeneratorSource 0 - not migrated: no Sluice agent runs class GeneratorSource" ||
		!strings.Contains(errOut, "files-a: stopping it on Kafka Connect… STOPPED after") || !strings.Contains(errOut, "files-a: creating it in Sluice (source, 1 partition)… created RUNNING") {
		t.Fatalf("migrate: exit %d\n%s%s", code, out, errOut)
	}
	if got := offsetsOf(t, to.URL, "files-a"); !slices.Equal(got, wantA) {
		t.Fatalf("files-a's offsets in the target: %v, want %v", got, wantA)
	}
	if st := stateOf(t, from.URL, "files-a"); st != "STOPPED" {
		t.Fatalf("files-a is %s on the source", st)
	}
	if st := stateOf(t, from.URL, "gen"); st != "RUNNING" {
		t.Fatalf("gen, not migrated, is %s on the source", st)
	}
	// The target's copy goes on at line 4: its topic gets exactly the
	// lines written after the migration, which a sink there shows.
	f, err := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("4\n5\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	create(t, to.URL, dir, `{"name":"lines-sink","config":{"connector.class":"FileStreamSink","file":"out.txt","topics":"lines"}}`)
	outFile := filepath.Join(to.WorkDir, "out.txt")
	eventually(t, 60*time.Second, func() (bool, string) {
		got, _ := os.ReadFile(outFile)
		return string(got) == "4\n5\n", string(got)
	})

	// Already there: not migrated, and the source's connector untouched.
	out, _, code = runCLI(t, "migrate", "--from", from.URL, "--url", to.URL, "--connectors", "files-*")
	if code != 0 || !strings.Contains(out, "not migrated: a connector of that name already exists in Sluice") {
		t.Fatalf("migrate onto an existing name: exit %d\n%s", code, out)
	}

	// --delete-source and --leave-stopped.
	b := writeFile(t, dir, "b.txt", "x\n")
	create(t, from.URL, dir, `{"name":"files-b","config":{"connector.class":"FileStreamSource","file":`+quote(b)+`,"topic":"b"}}`)
	wantB := []string{`{"offset":{"position":2},"partition":{"filename":` + quote(b) + `}}`}
	eventually(t, 60*time.Second, func() (bool, string) {
		got := offsetsOf(t, from.URL, "files-b")
		return slices.Equal(got, wantB), strings.Join(got, " ")
	})
	out, errOut, code = runCLI(t, "migrate", "--from", from.URL, "--url", to.URL, "--connectors", "files-b", "--delete-source", "--leave-stopped")
	if code != 0 || row(out, "files-b") != "files-b source FileStreamSource 1 STOPPED migrated, deleted on the source" || !strings.Contains(errOut, "files-b: deleted on Kafka Connect") {
		t.Fatalf("migrate --delete-source: exit %d\n%s%s", code, out, errOut)
	}
	if got := names(t, from.URL); !slices.Equal(got, []string{"files-a", "gen"}) {
		t.Fatalf("the source's connectors after --delete-source: %v", got)
	}
	if got := offsetsOf(t, to.URL, "files-b"); !slices.Equal(got, wantB) {
		t.Fatalf("files-b's offsets in the target: %v, want %v", got, wantB)
	}
	eventually(t, 30*time.Second, func() (bool, string) {
		st := stateOf(t, to.URL, "files-b")
		return st == "STOPPED", st
	})
}

// TestMigrateFailures: an unreachable --from is exit code 3 and names
// Kafka Connect; a glob that matches nothing is a failure.
func TestMigrateFailures(t *testing.T) {
	cl := startCluster(t)
	_, errOut, code := runCLI(t, "migrate", "--from", "127.0.0.1:1", "--url", cl.URL)
	if code != exitNoServer || !strings.Contains(errOut, "cannot reach Kafka Connect at http://127.0.0.1:1") {
		t.Fatalf("unreachable --from: exit %d\n%s", code, errOut)
	}
	_, errOut, code = runCLI(t, "migrate", "--from", cl.URL, "--url", cl.URL, "--connectors", "nope-*")
	if code != exitRefused || !strings.Contains(errOut, `matches "nope-*"`) {
		t.Fatalf("a glob matching nothing: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := runCLI(t, "migrate", "--url", cl.URL); code != exitUsage || !strings.Contains(errOut, "from") {
		t.Fatalf("no --from: exit %d\n%s", code, errOut)
	}
}

// row is the table row of out that starts with name, its cells separated
// by one space.
func row(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == name {
			return strings.Join(f, " ")
		}
	}
	return ""
}

// quote is s as a JSON string.
func quote(s string) string {
	data, _ := json.Marshal(s)
	return string(data)
}

// securedCluster is a test cluster whose REST API takes only the
// principals of authYAML; the environment variable that sets it is gone
// once the cluster runs, so that a cluster started next is open.
func securedCluster(t *testing.T, authYAML string, agentOpts ...func(*agent.Config)) *testCluster {
	t.Helper()
	t.Setenv("SLUICE_REST_AUTH_FILE", writeFile(t, t.TempDir(), "auth.yaml", authYAML))
	cl := startCluster(t, agentOpts...)
	os.Unsetenv("SLUICE_REST_AUTH_FILE")
	return cl
}

// principal is an auth file entry for user with password pw and grants.
func principal(t *testing.T, user, pw, grants string) string {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return "  - name: " + user + "\n    password_bcrypt: \"" + string(hash) + "\"\n    grants:\n" + grants
}

// TestMigratePutsBack: Kafka Connect's side (a Sluice here) needs its
// own Basic credentials (--from-user, --from-password-file); a create
// that Sluice refuses after the stop puts the connector back to RUNNING
// on the source and reports the step; nothing is left in Sluice.
func TestMigratePutsBack(t *testing.T) {
	dir := t.TempDir()
	pw := writeFile(t, dir, "pw", "s3cret\n")
	from := securedCluster(t, "principals:\n"+principal(t, "mover", "s3cret", "      - role: admin\n"))
	// The target lets this user validate configs but create only
	// connectors named other-*: the create of files-a is refused.
	to := securedCluster(t, "principals:\n"+principal(t, "limited", "s3cret", "      - role: operator\n        connectors: [\"other-*\"]\n      - role: viewer\n"))
	in := writeFile(t, dir, "in.txt", "1\n2\n")
	mustCLI(t, "connectors", "create", "-f", writeFile(t, dir, "c.json", `{"name":"files-a","config":{"connector.class":"FileStreamSource","file":`+quote(in)+`,"topic":"lines"}}`),
		"--url", from.URL, "--user", "mover", "--password-file", pw)
	fromState := func() string { return stateOf(t, from.URL, "files-a", "--user", "mover", "--password-file", pw) }
	eventually(t, 30*time.Second, func() (bool, string) { s := fromState(); return s == "RUNNING", s })

	if _, errOut, code := runCLI(t, "migrate", "--from", from.URL, "--url", to.URL, "--user", "limited", "--password-file", pw); code != exitRefused || !strings.Contains(errOut, "list the connectors of Kafka Connect: 401") {
		t.Fatalf("no --from-user: exit %d\n%s", code, errOut)
	}
	out, errOut, code := runCLI(t, "migrate", "--from", from.URL, "--from-user", "mover", "--from-password-file", pw,
		"--url", to.URL, "--user", "limited", "--password-file", pw, "-o", "json")
	var rs []transfer.Result
	if err := json.Unmarshal([]byte(out), &rs); code != exitRefused || err != nil || len(rs) != 1 || rs[0].Result != "failed" ||
		!strings.HasPrefix(rs[0].Detail, "create in Sluice: create files-a: 403") || !strings.HasSuffix(rs[0].Detail, "; put back to RUNNING on Kafka Connect") ||
		!strings.Contains(errOut, "files-a: stopping it on Kafka Connect… STOPPED") || !strings.Contains(errOut, "1 of 1 connectors failed") {
		t.Fatalf("a refused create: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	eventually(t, 30*time.Second, func() (bool, string) { s := fromState(); return s == "RUNNING", s })
	if out := mustCLI(t, "get", "connectors", "-o", "json", "--url", to.URL, "--user", "limited", "--password-file", pw); strings.TrimSpace(out) != "[]" {
		t.Fatalf("the target has connectors: %s", out)
	}
}
