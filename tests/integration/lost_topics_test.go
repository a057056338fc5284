package integration

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/sluicetest"
)

// Sluice never silently recreates a topic it lost (Kafka Connect 4.4's
// internal.topics.automatic.creation.enable, KIP-1209, and more; see
// docs/reliability.md): a vanished offsets topic stops the coordinator
// with an error naming it, instead of every source starting over.

// deleteTopic deletes topic and waits until the broker no longer lists it.
func deleteTopic(t testing.TB, c *sluicetest.Cluster, topic string) {
	t.Helper()
	adm := c.Admin()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := adm.DeleteTopics(ctx, topic)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("delete topic %s: %v", topic, err)
	}
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		return !topicExists(t, adm, topic), topic + " still listed"
	})
}

// topicExists reports whether the broker lists topic.
func topicExists(t testing.TB, adm *kadm.Client, topic string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	td, err := adm.ListTopics(ctx, topic)
	if err != nil {
		t.Fatalf("list topic %s: %v", topic, err)
	}
	d, ok := td[topic]
	return ok && d.Err == nil
}

// wantAll fails unless s holds every one of parts.
func wantAll(t testing.TB, what, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Fatalf("%s does not say %q:\n%s", what, p, s)
		}
	}
}

// TestLostOffsetsTopicNotRecreated: the offsets topic is deleted while the
// coordinator is down; the coordinator's next start refuses with an error
// that names the topic, its flag and what recreating it would lose, and
// creates nothing. Restored (here: created by hand, the way the error
// says), the coordinator starts again.
func TestLostOffsetsTopicNotRecreated(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	offsets := c.Prefix + "-offsets"
	lines := lines(1, 5)
	writeLines(t, workPath(c, "a.txt"), lines)
	fileSource(c, "src", "a.txt", c.Name("data"), "")
	waitOffsets(c, "src", []offset{filePos("a.txt", bytesOf(lines))})

	c.StopCoordinator()
	deleteTopic(t, c, offsets)
	err := c.TryStartCoordinator()
	if err == nil {
		t.Fatalf("the coordinator started without its offsets topic %s (it recreated it empty: every source would start over)", offsets)
	}
	wantAll(t, "the start-up error", err.Error(), "Topic '"+offsets+"'", "--offsets-topic", "has been deleted",
		"does not create it again", "restart every source connector from scratch", "kafka-topics.sh --bootstrap-server <brokers> --create --topic "+offsets+" --partitions ")
	if topicExists(t, c.Admin(), offsets) {
		t.Fatalf("the refused start created %s", offsets)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Admin().CreateTopic(ctx, -1, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, offsets); err != nil {
		t.Fatal(err)
	}
	// A broker answers the creation before its metadata shows the topic
	// (Apache Kafka: a few milliseconds later); an operator starts the
	// coordinator after that.
	sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
		return topicExists(t, c.Admin(), offsets), "the created offsets topic is not in the broker's metadata yet"
	})
	if err := c.TryStartCoordinator(); err != nil {
		t.Fatalf("the offsets topic is back, yet: %v", err)
	}
}

// TestLostConfigTopicNotRecreated: the config topic's loss shows in the
// other topics' records; the start refuses rather than come up with no
// connector at all.
func TestLostConfigTopicNotRecreated(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	fileSource(c, "src", "a.txt", c.Name("data"), "STOPPED")
	c.WaitState("src", "STOPPED", 0, "")
	c.StopCoordinator()
	configs := c.Prefix + "-configs"
	deleteTopic(t, c, configs)
	err := c.TryStartCoordinator()
	if err == nil {
		t.Fatalf("the coordinator started without its config topic %s, with no connector at all", configs)
	}
	wantAll(t, "the start-up error", err.Error(), "Topic '"+configs+"'", "--config-topic", "lose every connector's config")
}

// TestInternalTopicsCreationOff: with --internal-topics-automatic-creation
// =false (Kafka Connect's internal.topics.automatic.creation.enable=false)
// a topic that never existed is not created either: the start fails naming
// it and the switch, until someone creates it. With the switch on, such a
// topic is created as before.
func TestInternalTopicsCreationOff(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	history := c.Name("history-2")
	c.StopCoordinator()
	c.ChangeCoordinatorConfig(func(cfg *coordinator.Config) {
		cfg.DisableInternalTopicCreation = true
		cfg.OffsetsHistory.Topic = history
	})
	err := c.TryStartCoordinator()
	if err == nil {
		t.Fatalf("the coordinator started with creation off and no topic %s", history)
	}
	wantAll(t, "the start-up error", err.Error(), "Topic '"+history+"'", "--offsets-history-topic",
		"--internal-topics-automatic-creation=false", "internal.topics.automatic.creation.enable=false", "kafka-topics.sh")
	if topicExists(t, c.Admin(), history) {
		t.Fatalf("creation is off, yet %s was created", history)
	}

	// Switched on, a topic that never existed is created.
	c.ChangeCoordinatorConfig(func(cfg *coordinator.Config) { cfg.DisableInternalTopicCreation = false })
	if err := c.TryStartCoordinator(); err != nil {
		t.Fatal(err)
	}
	if !topicExists(t, c.Admin(), history) {
		t.Fatalf("creation is on, yet %s was not created", history)
	}
}

// TestLostConnectorOffsetsTopic: a source connector's own offsets topic
// (offsets.storage.topic) is deleted; the next start of the connector
// fails it with a trace naming the topic instead of creating it empty and
// running the source from scratch, and GET …/offsets answers 500 saying
// so.
func TestLostConnectorOffsetsTopic(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	own := c.Name("own-offsets")
	lines := lines(1, 5)
	writeLines(t, workPath(c, "a.txt"), lines)
	ownSource(c, "src", "a.txt", c.Name("data"), own, "")
	waitOffsets(c, "src", []offset{filePos("a.txt", bytesOf(lines))})

	c.StopCoordinator()
	deleteTopic(t, c, own)
	c.StartCoordinator()
	var st sluicetest.Status
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		st, _ = c.Status("src")
		return st.Connector.State == "FAILED", "connector " + st.Connector.State + ": " + st.Connector.Trace
	})
	wantAll(t, "the connector's trace", st.Connector.Trace, "Topic '"+own+"'", "offsets.storage.topic", "has been deleted", "from scratch")
	if topicExists(t, c.Admin(), own) {
		t.Fatalf("the connector's lost offsets topic %s was created again", own)
	}
	r := c.Do(http.MethodGet, "/connectors/src/offsets", nil)
	if r.Status != http.StatusInternalServerError {
		t.Fatalf("GET offsets with the connector's topic gone: %s, want 500", r)
	}
	wantAll(t, "GET offsets", r.Message(), "Topic '"+own+"'", "has been deleted")
	if topicExists(t, c.Admin(), own) {
		t.Fatalf("GET offsets created the lost topic %s again", own)
	}

	// Deleted, the connector no longer holds on to its topic: a new one
	// of the same name starts afresh with a new topic.
	c.Must(http.StatusNoContent, "DELETE", "/connectors/src", nil)
	ownSource(c, "src", "a.txt", c.Name("data"), own, "STOPPED")
	c.WaitState("src", "STOPPED", 0, "")
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		return topicExists(t, c.Admin(), own), own + " not created for the new connector"
	})
}
