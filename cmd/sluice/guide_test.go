package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/agent"
	"github.com/sluice-io/sluice/api"
)

// example is one command of a guide's runnable examples, with the output
// the guide shows for it (checked when it shows one).
type example struct {
	docLine
	// section is the heading the example is under.
	section    string
	output     []string
	showOutput bool
	// exit is the exit code the example's comment says it ends with
	// ("# … exit 1"), 0 if it says none.
	exit int
}

// exitComment is a command's comment that names its exit code.
var exitComment = regexp.MustCompile(`#.*\bexit (\d)\b`)

// guideExamples reads the runnable examples of a Markdown file: the code
// blocks whose info string has sluice-example. In them a line "$ CMD" is
// a command whose output follows it (up to the next "$ " line or the
// block's end); any other line, but blank ones and # comments, is a
// command whose output is not shown.
func guideExamples(t *testing.T, path string) []example {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []example
	// in: inside a block; runnable: a block of examples; collecting: the
	// lines are the output of the last "$ " command.
	in, runnable, collecting, n, section := false, false, false, 0, ""
	add := func(text string, shown bool) {
		e := example{docLine: docLine{line: n, text: text}, section: section, showOutput: shown}
		if m := exitComment.FindStringSubmatch(text); m != nil {
			e.exit, _ = strconv.Atoi(m[1])
		}
		out = append(out, e)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```"):
			in, collecting = !in, false
			runnable = in && strings.Contains(l, "sluice-example")
			continue
		case !in && strings.HasPrefix(l, "#"):
			section = strings.TrimSpace(strings.TrimLeft(l, "#"))
			continue
		case !runnable:
			continue
		case strings.HasPrefix(l, "$ "):
			add(strings.TrimPrefix(l, "$ "), true)
			collecting = true
		case collecting:
			out[len(out)-1].output = append(out[len(out)-1].output, l)
		default:
			if tl := strings.TrimSpace(l); tl != "" && !strings.HasPrefix(tl, "#") {
				add(tl, false)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// guideSkip is a command of docs/cli.md that TestCLIGuideExamples does not
// run (TestDocsCLICommands still parses it), and why.
type guideSkip struct {
	prefix, why string
}

// guideSkips are the guide's commands outside its runnable examples, by
// their first words. TestCLIGuideSkips fails when a command of the guide
// is neither run nor named here, so that the list is the whole story of
// what is not run.
var guideSkips = []guideSkip{
	{"sluice migrate --from https://connect:8443", "needs a Kafka Connect behind HTTPS; TestMigratePutsBack runs --from-user and --from-password-file against an in-process one"},
	{"sluice fleet roll", "rolls agent-1 too, the test cluster's own agent, which runs in the cluster's process and cannot be restarted alone; the guide's roll of web-0 and web-1 runs"},
	{"sluice fleet roll --restart-cmd", "needs kubectl or ssh to the agents' hosts; TestRebalanceAndRoll runs --restart-cmd against in-process agents"},
	{"sluice agents list", "its output's TASKS and LEASE change with placement and heartbeats, and it shows an agent that is away; TestAgentsCLI checks the table"},
	{"sluice agents drain web-1 --wait", "its output's progress lines depend on when the moves are seen; TestAgentsCLI checks a drain --wait"},
	{"sluice rebalance --dry-run", "its output's moves depend on the scheduler's placement; TestRebalanceAndRoll checks the table"},
	{"sluice connectors --url https://sluice.example.com:8083", "needs a Sluice serving HTTPS with bearer tokens; TestClientCredentials runs --ca and --token-file against one"},
	{"sluice get gauges inventory-cdc", "needs the native PostgreSQL connector mid-snapshot and an agent that does not answer; TestCLIGauges runs get gauges against a generator, TestGaugeTable checks the progress and error lines"},
	{"sluice snapshot inventory-cdc", "needs the native PostgreSQL connector with a signal table; TestNativePostgresSignals (tests/plugins) runs snapshot and connector snapshot-stop against one"},
	{"sluice snapshot-stop inventory-cdc", "as sluice snapshot"},
	{"sluice describe connector --generate-bash-completion", "the completion script's call, which urfave/cli reads from os.Args; TestRestartDescribePluginInfo checks the names it prints"},
}

// shellComment is a command line's comment.
var shellComment = regexp.MustCompile(`\s+#.*$`)

// guideCommands are the `sluice` lines of the guide outside its runnable
// examples: of its sh blocks and, as "$ sluice …", of its other blocks.
func guideCommands(t *testing.T, path string) []docLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []docLine
	in, skip, sh := false, false, false
	for i, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "```") {
			in = !in
			skip = in && strings.Contains(l, "sluice-example")
			sh = in && strings.HasPrefix(l, "```sh")
			continue
		}
		if strings.HasPrefix(l, "<!-- BEGIN GENERATED REFERENCE") {
			break
		}
		if !in || skip {
			continue
		}
		tl := strings.TrimSpace(l)
		if c, ok := strings.CutPrefix(tl, "$ "); ok {
			tl = c
		} else if !sh {
			continue
		}
		if strings.HasPrefix(tl, "sluice ") || tl == "sluice" {
			out = append(out, docLine{line: i + 1, text: tl})
		}
	}
	return out
}

// TestCLIGuideSkips: every command of the guide is run by
// TestCLIGuideExamples or is one of guideSkips, and every skip names a
// command that is there.
func TestCLIGuideSkips(t *testing.T) {
	used := map[string]bool{}
	for _, d := range guideCommands(t, cliDoc) {
		found, cmd := false, shellComment.ReplaceAllString(d.text, "")
		for _, s := range guideSkips {
			if cmd == s.prefix || strings.HasPrefix(cmd, s.prefix+" ") {
				found, used[s.prefix] = true, true
			}
		}
		if !found {
			t.Errorf("docs/cli.md:%d: %s: neither a runnable example (sluice-example) nor in guideSkips with a reason", d.line, d.text)
		}
	}
	for _, s := range guideSkips {
		if !used[s.prefix] {
			t.Errorf("guideSkips names %q, which the guide does not show outside its examples", s.prefix)
		}
	}
}

// TestCLIGuideExamples runs docs/cli.md's runnable examples in order,
// against a real cluster, in the agent's work directory: each sluice
// command exits 0 (or the code its comment names) and prints what the
// guide shows after it, if it shows anything; the others (printf > file)
// run with sh. Before the first example of some sections the test builds
// what the guide's story assumes there (guideFixtures).
//
// What varies between runs is made the same on both sides before they are
// compared (see guideRun.normalize): the coordinator's address, times,
// and the ids of maintenance windows, offsets history entries and
// rollouts, each real id standing for the id the guide shows at the same
// place — and a command of the guide that names an id gets the real one
// it stands for.
func TestCLIGuideExamples(t *testing.T) {
	examples := guideExamples(t, cliDoc)
	if len(examples) < 10 {
		t.Fatalf("only %d runnable examples in docs/cli.md", len(examples))
	}
	cl := startCluster(t)
	t.Chdir(cl.WorkDir)
	t.Setenv("SLUICE_URL", cl.URL)
	g := &guideRun{t: t, cl: cl, ids: map[string]string{}, last: map[*regexp.Regexp]string{}, hosts: map[string]string{}}
	done := map[string]bool{}
	for _, e := range examples {
		if f := guideFixtures[e.section]; f != nil && !done[e.section] {
			done[e.section] = true
			f(g)
		}
		g.run(e)
	}
}

// guideRun is the state of a run of the guide's examples.
type guideRun struct {
	t  *testing.T
	cl *testCluster
	// ids maps an id the guide shows to the real one it stands for;
	// last is the newest real id of each kind printed so far.
	ids  map[string]string
	last map[*regexp.Regexp]string
	// hosts maps the guide's other clusters (other:8083) to the URLs of
	// the test's.
	hosts map[string]string
}

// another starts another cluster, whose agent works in a directory of its
// own where the orders-* connectors' files are too.
func (g *guideRun) another() *testCluster {
	url := os.Getenv("SLUICE_URL")
	c := startCluster(g.t)
	g.t.Setenv("SLUICE_URL", url)
	writeFile(g.t, c.WorkDir, "orders.txt", "o1\no2\no3\n")
	writeFile(g.t, c.WorkDir, "users.txt", "u1\nu2\n")
	return c
}

// idKinds are the ids that differ between runs: of maintenance windows,
// rollouts and fleet rolls (one kind), and of offsets history entries.
var idKinds = []*regexp.Regexp{
	regexp.MustCompile(`\b\d{8}-\d{6}\.\d{3}-[0-9a-f]{8}\b`),
	regexp.MustCompile(`\b\d{13}-[0-9a-f]{16}\b`),
}

// shownError is the CLI's error among the lines the guide shows.
var shownError = regexp.MustCompile(`(?m)^sluice: `)

// guideTimes are the times tables and messages show, local or UTC.
var guideTimes = regexp.MustCompile(`\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?Z?`)

// run runs one example and checks what it printed.
func (g *guideRun) run(e example) {
	t := g.t
	t.Helper()
	text := g.realIDs(e.text)
	for doc, real := range g.hosts {
		text = strings.ReplaceAll(text, doc, real)
	}
	args := sluiceArgs(t, docLine{line: e.line, text: text})
	if args == nil {
		if out, err := exec.Command("sh", "-c", text).CombinedOutput(); err != nil {
			t.Fatalf("docs/cli.md:%d: %s: %v\n%s", e.line, e.text, err, out)
		}
		return
	}
	out, errOut, code := runCLI(t, args...)
	want := strings.Join(e.output, "\n")
	// An output that ends in the CLI's error is a command that fails.
	if exit := e.exit; code != exit && !(exit == 0 && code == exitRefused && shownError.MatchString(want)) {
		t.Fatalf("docs/cli.md:%d: %s: exit %d, want %d\n%s%s", e.line, e.text, code, exit, out, errOut)
	}
	if e.showOutput && want != "" {
		// The guide shows stdout, or stdout then stderr.
		got := g.normalize(out, want)
		if trimLines(got) != trimLines(want) {
			if both := g.normalize(out+errOut, want); trimLines(both) == trimLines(want) {
				got = both
			} else {
				t.Fatalf("docs/cli.md:%d: %s printed\n%s\nthe guide shows\n%s", e.line, e.text, got+errOut, want)
			}
		}
	}
	g.remember(out + errOut)
}

// realIDs is a command of the guide with each id it names replaced by
// the real one it stands for: the one seen in its place in an output
// before, or else the newest of its kind printed so far.
func (g *guideRun) realIDs(text string) string {
	for _, kind := range idKinds {
		text = kind.ReplaceAllStringFunc(text, func(doc string) string {
			if real, ok := g.ids[doc]; ok {
				return real
			}
			if real := g.last[kind]; real != "" {
				g.ids[doc] = real
				return real
			}
			return doc
		})
	}
	return text
}

// remember notes the newest id of each kind in out: each kind's ids
// start with their time, so the newest is the greatest.
func (g *guideRun) remember(out string) {
	for _, kind := range idKinds {
		for _, id := range kind.FindAllString(out, -1) {
			g.last[kind] = max(g.last[kind], id)
		}
	}
}

// normalize is out as the guide would show it: the coordinator's address
// as 127.0.0.1:8083; times as in want (each time replaced by the one at
// the same place in want, both having the same width); each id as the
// guide's id it stands for — the ids of each kind in out paired in order
// with those in want, which binds a guide's id to a real one for the
// commands that follow.
func (g *guideRun) normalize(out, want string) string {
	out = strings.ReplaceAll(out, strings.TrimPrefix(g.cl.URL, "http://"), "127.0.0.1:8083")
	wantTimes := guideTimes.FindAllString(want, -1)
	i := 0
	out = guideTimes.ReplaceAllStringFunc(out, func(s string) string {
		if i < len(wantTimes) {
			i++
			return wantTimes[i-1]
		}
		return s
	})
	for _, kind := range idKinds {
		wantIDs := kind.FindAllString(want, -1)
		i := 0
		out = kind.ReplaceAllStringFunc(out, func(real string) string {
			for doc, r := range g.ids {
				if r == real {
					return doc
				}
			}
			if i < len(wantIDs) {
				doc := wantIDs[i]
				i++
				if _, taken := g.ids[doc]; !taken {
					g.ids[doc] = real
					return doc
				}
			}
			return real
		})
	}
	return out
}

// guideFixtures builds, before the first example of a section, what the
// guide's story assumes there, keyed by the section's heading.
var guideFixtures = map[string]func(g *guideRun){
	// A config key for patch --unset to remove.
	"Output and exit codes": func(g *guideRun) {
		g.orders()
		mustCLI(g.t, "patch", "connector", "orders-src", "--set", "topic.prefix=old")
	},
	// The connectors as they were made, running.
	"get": func(g *guideRun) { g.orders() },
	// The files apply reads: orders-src as it is (and in orders-src.yaml
	// with a new topic), a directory of the others.
	"apply": func(g *guideRun) {
		t, dir := g.t, g.cl.WorkDir
		src := "name: orders-src\nconfig:\n  connector.class: FileStreamSource\n  file: orders.txt\n  topic: orders\n"
		sink := "name: orders-sink\nconfig:\n  connector.class: FileStreamSink\n  file: orders-out.txt\n  topics: orders\n"
		writeFile(t, dir, "orders-src.json", `{"name":"orders-src","config":{"connector.class":"FileStreamSource","file":"orders.txt","topic":"orders"}}`)
		writeFile(t, dir, "orders-src.yaml", strings.Replace(src, "topic: orders", "topic: orders-2", 1))
		writeFile(t, dir, "a.yaml", src)
		writeFile(t, dir, "b.json", `{"name":"orders-sink","connector.class":"FileStreamSink","file":"orders-out.txt","topics":"orders"}`)
		if err := os.Mkdir(filepath.Join(dir, "connectors"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, "connectors/orders-sink.yaml", sink)
		writeFile(t, dir, "connectors/users-src.yaml", "name: users-src\nconnector.class: FileStreamSource\nfile: users.txt\ntopic: users\n")
	},
	// After patch: the connectors as they were made, running.
	"pause, resume, stop, restart, delete": func(g *guideRun) { g.orders() },
	// The connectors running, orders-sink paused, and one more,
	// orders-old, for the window's close to find deleted.
	"maintenance": func(g *guideRun) {
		g.orders()
		writeFile(g.t, g.cl.WorkDir, "orders-old.yaml", "name: orders-old\nconnector.class: FileStreamSource\nfile: orders.txt\ntopic: orders-old\n")
		mustCLI(g.t, "apply", "-f", "orders-old.yaml", "--wait")
		mustCLI(g.t, "pause", "orders-sink")
	},
	// file-src, a file source of orders.txt, and offsets.json, a position
	// in it.
	"offsets": func(g *guideRun) {
		g.orders()
		writeFile(g.t, g.cl.WorkDir, "file-src.yaml", "name: file-src\nconnector.class: FileStreamSource\nfile: orders.txt\ntopic: file\n")
		writeFile(g.t, g.cl.WorkDir, "offsets.json", `{"offsets":[{"partition":{"filename":"orders.txt"},"offset":{"position":3}}]}`)
		mustCLI(g.t, "apply", "-f", "file-src.yaml", "--wait")
		eventually(g.t, 30*time.Second, func() (bool, string) {
			p := positions(g.t, g.cl.URL, "file-src")
			return p == `{"filename":"orders.txt"}={"position":9}`, p
		})
	},
	// orders-sink-2, a stopped sink for restore to write into.
	"offsets undo, offsets restore": func(g *guideRun) {
		writeFile(g.t, g.cl.WorkDir, "orders-sink-2.json", `{"name":"orders-sink-2","config":{"connector.class":"FileStreamSink","file":"orders-out-2.txt","topics":"orders"},"initial_state":"STOPPED"}`)
		mustCLI(g.t, "connectors", "create", "-f", "orders-sink-2.json")
	},
	// orders-src running again.
	"move, copy": func(g *guideRun) { mustCLI(g.t, "resume", "orders-src", "--wait") },
	// rollout.json rolls a patch out in two batches, each healthy after a
	// second; rollout-2.json waits a minute on its first batch, so that it
	// is still running when it is paused.
	"rollout": func(g *guideRun) {
		writeFile(g.t, g.cl.WorkDir, "rollout.json", `{"match":"orders-*","patch":{"batch.size":"500"},"batches":[1,"rest"],"health":{"running_for":"1s"}}`)
		writeFile(g.t, g.cl.WorkDir, "rollout-2.json", `{"match":"orders-*","patch":{"batch.size":"250"},"batches":[1,"rest"],"health":{"running_for":"1m"}}`)
	},
	// Only orders-src, orders-sink and users-src, as made, their first
	// positions committed; and another cluster, the guide's other:8083, to
	// import into, whose Kafka has the topic orders-sink reads (a sink's
	// positions are checked against its topics).
	"offsets export, offsets import": func(g *guideRun) {
		mustCLI(g.t, "delete", "--match", "*")
		g.makeOrders()
		eventually(g.t, 30*time.Second, func() (bool, string) {
			p := positions(g.t, g.cl.URL, "orders-sink")
			return p != "", "orders-sink has no position yet"
		})
		other := g.another()
		createTopic(g.t, other.Brokers, "orders", 1)
		g.hosts["other:8083"] = other.URL
	},
	// Another cluster, the guide's Kafka Connect at connect:8083 (a Sluice
	// serves Kafka Connect's REST API, as in TestMigrate), running
	// orders-legacy and users-legacy, file sources of its own files.
	"migrate": func(g *guideRun) {
		c := g.another()
		g.hosts["http://connect:8083"] = c.URL
		writeFile(g.t, c.WorkDir, "legacy.txt", "l1\nl2\n")
		for _, n := range []string{"orders-legacy", "users-legacy"} {
			writeFile(g.t, c.WorkDir, n+".yaml", "name: "+n+"\nconnector.class: FileStreamSource\nfile: "+filepath.Join(c.WorkDir, "legacy.txt")+"\ntopic: "+n+"\n")
			mustCLI(g.t, "apply", "-f", filepath.Join(c.WorkDir, n+".yaml"), "--wait", "--url", c.URL)
		}
	},
	// connector.json, for the REST-mirroring create.
	"The REST-mirroring spelling": func(g *guideRun) {
		writeFile(g.t, g.cl.WorkDir, "connector.json", `{"name":"lines-src","config":{"connector.class":"FileStreamSource","file":"in.txt","topic":"lines"}}`)
	},
	// Two more agents, web-0 and web-1, labelled app=web and their host;
	// SLUICE_ID names web-1, as in its pod; and an operator who restarts
	// the agent a fleet roll waits for.
	"Agents and the fleet": func(g *guideRun) {
		f := g.webAgents()
		g.t.Setenv("SLUICE_ID", "web-1")
		g.restartRolled(f)
	},
}

// orders makes the connectors the guide's examples after its first
// session name, as they name them: orders-src (a file source of
// orders.txt, three lines, into topic orders), orders-sink (a file sink of
// orders into orders-out.txt) and users-src (users.txt into users), or
// puts back their configs and resumes them; and waits until they run and
// their positions are committed: at the end of the files and the topic.
func (g *guideRun) orders() {
	g.t.Helper()
	g.makeOrders()
	eventually(g.t, 30*time.Second, func() (bool, string) {
		p := positions(g.t, g.cl.URL, "orders-src") + " " + positions(g.t, g.cl.URL, "users-src") + " " + positions(g.t, g.cl.URL, "orders-sink")
		return p == `{"filename":"orders.txt"}={"position":9} {"filename":"users.txt"}={"position":6} {"kafka_partition":0,"kafka_topic":"orders"}={"kafka_offset":3}`, p
	})
}

// makeOrders is orders without waiting for the positions, which are no
// longer the same in every run once the story wrote to the topic again.
func (g *guideRun) makeOrders() {
	t, dir := g.t, g.cl.WorkDir
	t.Helper()
	writeFile(t, dir, "orders.txt", "o1\no2\no3\n")
	writeFile(t, dir, "users.txt", "u1\nu2\n")
	spec := t.TempDir()
	writeFile(t, spec, "orders-src.yaml", "name: orders-src\nconfig:\n  connector.class: FileStreamSource\n  file: orders.txt\n  topic: orders\n")
	writeFile(t, spec, "orders-sink.yaml", "name: orders-sink\nconfig:\n  connector.class: FileStreamSink\n  file: orders-out.txt\n  topics: orders\n")
	writeFile(t, spec, "users-src.yaml", "name: users-src\nconfig:\n  connector.class: FileStreamSource\n  file: users.txt\n  topic: users\n")
	mustCLI(t, "apply", "-f", spec)
	mustCLI(t, "resume", "--match", "*", "--wait")
}

// webAgents starts agents web-0 and web-1 beside the cluster's agent-1, as
// startFleet does, and waits until they are registered.
func (g *guideRun) webAgents() *fleet {
	t := g.t
	t.Helper()
	f := &fleet{testCluster: g.cl, agents: map[string]*agent.Agent{}, labels: map[string]map[string]string{
		"web-0": {"app": "web", "host": "web-0"}, "web-1": {"app": "web", "host": "web-1"}}}
	t.Cleanup(func() {
		for id := range f.labels {
			_ = f.stopAgent(id)
		}
	})
	for id := range f.labels {
		f.start(t, id)
	}
	eventually(t, 30*time.Second, func() (bool, string) {
		n := 0
		for _, a := range agentsJSON(t, g.cl.URL) {
			if a.Registered {
				n++
			}
		}
		return n == 3, fmt.Sprintf("%d agents registered", n)
	})
	return f
}

// stopAgent stops agent id if it runs, as SIGTERM does.
func (f *fleet) stopAgent(id string) error {
	f.mu.Lock()
	a := f.agents[id]
	delete(f.agents, id)
	f.mu.Unlock()
	if a == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return a.Stop(ctx)
}

// restartRolled restarts, until the test ends, each agent of f a fleet roll
// waits for (step waiting_restart), once per roll: the operator, script or
// Kubernetes the guide says restarts it.
func (g *guideRun) restartRolled(f *fleet) {
	c, err := api.NewClient(api.Config{Address: g.cl.URL})
	if err != nil {
		g.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	g.t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		restarted := map[string]bool{}
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			rolls, err := c.Fleet().AgentRolls(ctx)
			if err != nil {
				continue
			}
			for _, r := range rolls.Rolls {
				for _, a := range r.Agents {
					if key := r.ID + "/" + a.ID; a.Step == api.RollWaitingRestart && !restarted[key] && f.labels[a.ID] != nil {
						restarted[key] = true
						if err := errors.Join(f.stopAgent(a.ID), f.run(a.ID)); err != nil {
							g.t.Errorf("restart agent %s: %v", a.ID, err)
						}
					}
				}
			}
		}
	}()
}

// trimLines is s without trailing spaces on its lines and blank lines at
// its ends.
func trimLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Join(lines, "\n")
}
