package e2e

import (
	"context"
	"fmt"
	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// crashLease is the agent lease of TestAgentCrashTasksRunElsewhereBeforeTheLease:
// far longer than the test waits for the tasks to move, so that they can
// only have moved because the leader saw the agent's connection close.
const crashLease = 2 * time.Minute

// TestAgentCrashTasksRunElsewhereBeforeTheLease kills (SIGKILL) the agent
// that runs an exactly-once generator source and a file sink. Its NATS
// connection closes with the process, the leader's presence probes find
// nobody, and both tasks run on the other agent long before the agent's
// lease could run out: the source's successor fenced its transactional id
// first (every record exactly once), and the sink's successor took the
// killed member's place in the consumer group at once (static membership),
// where a dynamic member's partitions would have waited out its session
// timeout: records produced after the kill reach the file.
func TestAgentCrashTasksRunElsewhereBeforeTheLease(t *testing.T) {
	t.Parallel()
	c := procs.Start(t, procs.Options{Agents: 1, Lease: crashLease,
		CoordinatorArgs: eosArgs(true), AgentArgs: eosArgs(true)})
	g := procs.Generator{Topic: c.Name("gen"), Streams: 2, Tasks: 1, Count: 2000, Rate: 200, RecordBytes: 50}
	c.CreateTopic(g.Topic, 1)
	src := c.Name("src")
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": src, "config": g.Config()})
	in := c.Name("lines")
	c.CreateTopic(in, 1)
	out := filepath.Join(c.WorkDir, "crash-sink.txt")
	sink := c.Name("sink")
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": sink, "config": map[string]string{
		"connector.class": "FileStreamSink", "file": out, "topics": in}})
	c.WaitRunning(src, 1)
	c.WaitRunning(sink, 1)
	produceLines(t, c.Brokers, in, "before", 100)
	waitLines(t, out, "before", 100)
	c.WaitCommittedRecords(g.Topic, 200, 30*time.Second)

	// A second agent joins; nothing moves to it until the first is gone.
	mark := c.Coordinator.Mark()
	c.AddAgent("agent-2", "")
	c.WaitRegistered(mark, "agent-2")
	victim := c.Agent("agent-1")
	cmark := c.Coordinator.Mark()
	killedAt := time.Now()
	victim.Kill()
	// Well under the lease: only the closed connection can have moved them.
	moved := c.WaitMoved(src, 1, 30*time.Second, victim.Name())
	c.WaitMoved(sink, 1, 30*time.Second, victim.Name())
	t.Logf("agent-1 killed: both tasks RUNNING on %v after %v (lease %v)", moved, time.Since(killedAt).Round(time.Millisecond), crashLease)
	if lines := c.Coordinator.LogLinesSince(cmark, "agent lost: its NATS connection closed", "agent=agent-1"); len(lines) != 1 {
		t.Errorf("the coordinator logged %d lines of agent-1's connection closing, want 1:\n%s", len(lines),
			strings.Join(c.Coordinator.LogLinesSince(cmark, "agent"), "\n"))
	}

	metrics := string(c.Must(http.StatusOK, http.MethodGet, "/metrics", nil).Body)
	if !strings.Contains(metrics, `sluice_agents_lost_total{reason="connection"} 1`) || !strings.Contains(metrics, `sluice_agents_lost_total{reason="lease"} 0`) {
		t.Errorf("/metrics counts the lost agents as:\n%s", grepLines(metrics, "sluice_agents_lost_total"))
	}

	// The sink's successor holds the partition now, not after 45 s.
	produceLines(t, c.Brokers, in, "after", 100)
	waitLines(t, out, "after", 100)
	if got := countPrefixed(readLines(out), "before"); got < 100 {
		t.Errorf("the file holds %d of the 100 lines from before the kill", got)
	}

	c.WaitComplete(src, g.Streams, g.Count, 2*time.Minute)
	seqs := checkPrefix(t, c, src, g, true, "after the crash")
	if total := int64(g.Streams) * g.Count; int64(seqs.Records) != total {
		t.Errorf("topic holds %d records, want %d (exactly once)", seqs.Records, total)
	}
}

// TestSinkZombieIsFencedByTheBroker pauses (SIGSTOP) the agent of a file
// sink past its lease: a paused process keeps its NATS connection, so only
// the lease replaces it. Its successor joins the consumer group with the
// task's group.instance.id, and the broker fences the paused member: once
// resumed, the zombie's task stops (fenced, or revoked by the leader)
// without joining the group again — which would fence its successor in
// turn — and the successor keeps running and delivering.
func TestSinkZombieIsFencedByTheBroker(t *testing.T) {
	t.Parallel()
	c := procs.Start(t, procs.Options{Agents: 2, Lease: 3 * time.Second})
	in := c.Name("lines")
	c.CreateTopic(in, 1)
	out := filepath.Join(c.WorkDir, "zombie-sink.txt")
	sink := c.Name("sink")
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": sink, "config": map[string]string{
		"connector.class": "FileStreamSink", "file": out, "topics": in}})
	placed := placement(c.WaitRunning(sink, 1))
	produceLines(t, c.Brokers, in, "before", 50)
	waitLines(t, out, "before", 50)

	zombie := c.Agent(placed[0])
	zmark := zombie.Mark()
	zombie.Pause()
	moved := c.WaitMoved(sink, 1, 30*time.Second, zombie.Name())
	successor := c.Agent(moved[0])
	smark := successor.Mark()
	produceLines(t, c.Brokers, in, "while-paused", 50)
	waitLines(t, out, "while-paused", 50)

	cmark := c.Coordinator.Mark()
	zombie.Resume()
	c.WaitRegistered(cmark, zombie.Name())
	task := sink + "-0"
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		ended := append(zombie.LogLinesSince(zmark, "sink task fenced"), zombie.LogLinesSince(zmark, `msg="task stopped"`, "task="+task+" ")...)
		return len(ended) > 0, fmt.Sprintf("%s logged neither a fence nor a stop of %s since it resumed:\n%s",
			zombie.Name(), task, strings.Join(zombie.LogLinesSince(zmark, "task="+task+" "), "\n"))
	})
	sluicetest.Consistently(t, 3*time.Second, func() (bool, string) {
		got := c.Placement(sink)
		return maps.Equal(got, moved), fmt.Sprintf("the sink runs on %v after the zombie came back, want %v", got, moved)
	})
	if lines := successor.LogLinesSince(smark, "sink task fenced"); len(lines) > 0 {
		t.Errorf("the successor was fenced by the zombie:\n%s", strings.Join(lines, "\n"))
	}
	if lines := zombie.LogLinesSince(zmark, `msg="task started"`); len(lines) > 0 {
		t.Errorf("%s started tasks after it resumed:\n%s", zombie.Name(), strings.Join(lines, "\n"))
	}
	produceLines(t, c.Brokers, in, "after", 50)
	waitLines(t, out, "after", 50)
}

// produceLines writes n records "<prefix>-<i>" to topic and waits until
// the broker has them.
func produceLines(t *testing.T, brokers, topic, prefix string, n int) {
	t.Helper()
	cl, err := kgo.NewClient(append(sluicetest.ClientOpts(brokers, "test-producer"), kgo.DefaultProduceTopic(topic))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = kgo.StringRecord(fmt.Sprintf("%s-%d", prefix, i))
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
}

// waitLines waits until the file holds every line "<prefix>-<i>", i < n.
func waitLines(t *testing.T, path, prefix string, n int) {
	t.Helper()
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		lines := readLines(path)
		var missing []string
		for i := range n {
			if want := fmt.Sprintf("%s-%d", prefix, i); !slices.Contains(lines, want) {
				missing = append(missing, want)
			}
		}
		return len(missing) == 0, fmt.Sprintf("%s lacks %d of the %d %s lines (first %v)", path, len(missing), n, prefix, missing[:min(3, len(missing))])
	})
}

// grepLines returns the lines of text that contain substr.
func grepLines(text, substr string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// countPrefixed counts the distinct lines that start with prefix.
func countPrefixed(lines []string, prefix string) int {
	seen := map[string]bool{}
	for _, l := range lines {
		if strings.HasPrefix(l, prefix+"-") {
			seen[l] = true
		}
	}
	return len(seen)
}
