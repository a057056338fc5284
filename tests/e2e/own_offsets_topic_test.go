package e2e

import (
	"fmt"
	"github.com/sluice-io/sluice/sluicetest/procs"
	"net/http"
	"testing"
	"time"
)

// TestExactlyOnceOwnOffsetsTopicAgentCrash: with exactly-once on, a
// generator source whose offsets topic is its own (offsets.storage.topic)
// loses its agent to kill -9 mid-stream; the task resumes on the other
// agent from the connector's topic, and the read_committed topic holds
// every seq of every stream exactly once. Both offsets topics end at the
// last seq, as Kafka Connect writes both.
func TestExactlyOnceOwnOffsetsTopicAgentCrash(t *testing.T) {
	t.Parallel()
	c := procs.Start(t, procs.Options{Agents: 2, Lease: 3 * time.Second,
		CoordinatorArgs: eosArgs(true), AgentArgs: eosArgs(true)})
	g := procs.Generator{Topic: c.Name("gen"), Streams: 2, Tasks: 1, Count: 2000, Rate: 300, RecordBytes: 50}
	c.CreateTopic(g.Topic, 2)
	name, own := c.Name("src"), c.Name("own-offsets")
	cfg := g.Config()
	cfg["offsets.storage.topic"] = own
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": name, "config": cfg})
	placed := placement(c.WaitRunning(name, g.Tasks))
	c.WaitCommittedRecords(g.Topic, 300, 30*time.Second)

	dead := c.Agent(placed[0])
	dead.Kill()
	c.WaitMoved(name, g.Tasks, 30*time.Second, dead.Name())
	c.WaitComplete(name, g.Streams, g.Count, 90*time.Second)

	seqs := procs.ParseSeqs(c.ReadTopic(g.Topic))
	upTo := map[int64]int64{}
	for st := range int64(g.Streams) {
		upTo[st] = g.Count - 1
	}
	if problems := seqs.Check(g.Streams, upTo, true); len(problems) > 0 {
		t.Fatalf("after kill -9 of %s: %v", dead.Name(), problems)
	}
	for _, topic := range []string{own, c.Prefix + "-offsets"} {
		if got := c.CommittedSeqsIn(topic, name); fmt.Sprint(got) != fmt.Sprint(upTo) {
			t.Errorf("offsets topic %s: last seqs %v, want %v", topic, got, upTo)
		}
	}
}
