package embedded_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/shared/embedded"
	"github.com/sluice-io/sluice/shared/kafkautil"
)

// TestKafkaKeepsCommitsAfterACrashTornStateLog is a crash of the dev
// broker that a SIGKILL lands in the middle of a write to its groups log:
// the log ends in part of an entry. The commits made after the restart must
// still be there after the next crash. (An abandoned broker stands for a
// crashed one: it is never closed, so nothing is saved on the way out.)
func TestKafkaKeepsCommitsAfterACrashTornStateLog(t *testing.T) {
	dir := t.TempDir()
	first := startKafka(t, dir)
	commit(t, first, 10)
	tearGroupsLog(t, dir)

	second := startKafka(t, dir)
	if got := committed(t, second); got != 10 {
		t.Fatalf("after the first crash the group's offset is %d, want 10", got)
	}
	commit(t, second, 20)

	third := startKafka(t, dir)
	if got := committed(t, third); got != 20 {
		t.Fatalf("after the second crash the group's offset is %d, want 20 (its last commit)", got)
	}
}

// TestKafkaVersionsJavaClientsRead: the broker advertises CreateTopics up
// to v4 and no DescribeTopicPartitions, whose kfake answers Kafka's Java
// admin client cannot read (MirrorMaker 2 failed on both), and the rest as
// before: Produce and Fetch at their newest.
func TestKafkaVersionsJavaClientsRead(t *testing.T) {
	k, err := embedded.Kafka("", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	versions := map[int16]int16{}
	for _, key := range resp.ApiKeys {
		versions[key.ApiKey] = key.MaxVersion
	}
	if v, ok := versions[kmsg.CreateTopics.Int16()]; !ok || v != 4 {
		t.Errorf("CreateTopics advertised up to %d (%v), want 4", v, ok)
	}
	if v, ok := versions[kmsg.DescribeTopicPartitions.Int16()]; ok {
		t.Errorf("DescribeTopicPartitions advertised up to %d, want not at all", v)
	}
	if versions[kmsg.Produce.Int16()] < 11 || versions[kmsg.Fetch.Int16()] < 16 {
		t.Errorf("Produce up to %d and Fetch up to %d, want the newest (11+, 16+)", versions[kmsg.Produce.Int16()], versions[kmsg.Fetch.Int16()])
	}
}

// TestKafkaCleanRestartKeepsCommits: a broker closed cleanly comes back with
// its commits, and a clean start after it needs no recovery.
func TestKafkaCleanRestartKeepsCommits(t *testing.T) {
	dir := t.TempDir()
	k, err := embedded.Kafka("", dir)
	if err != nil {
		t.Fatal(err)
	}
	if k.Recovered() {
		t.Errorf("a fresh data dir was reported as recovered from an unclean stop")
	}
	commit(t, k, 7)
	k.Close()

	again := startKafka(t, dir)
	if again.Recovered() {
		t.Errorf("a data dir closed cleanly was reported as recovered from an unclean stop")
	}
	if got := committed(t, again); got != 7 {
		t.Fatalf("after a clean restart the group's offset is %d, want 7", got)
	}
}

const (
	testTopic = "lines"
	testGroup = "connect-sink"
)

// startKafka starts the embedded broker on dir. It is closed only at the
// end of the test, after every other broker on dir was started: until then
// it stands for a broker that crashed.
func startKafka(t *testing.T, dir string) *embedded.Broker {
	t.Helper()
	k, err := embedded.Kafka("", dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

func admin(t *testing.T, k *embedded.Broker) (*kadm.Client, context.Context) {
	t.Helper()
	cl, err := kgo.NewClient(kafkautil.ClientOpts(k.ListenAddrs()[0], "test", nil)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return kadm.NewClient(cl), ctx
}

// commit commits offset for partition 0 of the test topic in the test
// group, as a sink's consumer does, creating the topic first.
func commit(t *testing.T, k *embedded.Broker, offset int64) {
	t.Helper()
	adm, ctx := admin(t, k)
	if err := kafkautil.EnsureTopicDefaults(ctx, adm, testTopic); err != nil {
		t.Fatal(err)
	}
	var offs kadm.Offsets
	offs.AddOffset(testTopic, 0, offset, -1)
	resp, err := adm.CommitOffsets(ctx, testGroup, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("commit offset %d: %v", offset, err)
	}
}

// committed returns the group's committed offset of partition 0, -1 if none.
func committed(t *testing.T, k *embedded.Broker) int64 {
	t.Helper()
	adm, ctx := admin(t, k)
	resp, err := adm.FetchOffsets(ctx, testGroup)
	if err != nil {
		return -1 // the group is unknown: it has no commits
	}
	o, ok := resp.Lookup(testTopic, 0)
	if !ok || o.Err != nil {
		return -1
	}
	return o.At
}

// tearGroupsLog appends the first bytes of an entry to the groups log, as
// a write cut short by SIGKILL leaves them (Linux may stop a write to a
// file between two pages when the process gets a fatal signal).
func tearGroupsLog(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, "groups.log")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 16 {
		t.Fatalf("groups.log holds %d bytes: no entry to tear", len(data))
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data[:16]); err != nil {
		t.Fatal(err)
	}
}
