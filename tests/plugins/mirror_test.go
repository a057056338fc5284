package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/sluicetest"
)

const mirrorSourceClass = "org.apache.kafka.connect.mirror.MirrorSourceConnector"

// TestMirrorSourceReplicatesTopic: MirrorMaker 2's MirrorSourceConnector,
// unchanged, through the connector host, replicates a topic of 10,000
// records between two cluster aliases of the one test broker, as MM2 allows
// (its default replication policy names the copy "src.<topic>"): every
// record arrives once, in its partition and order, and GET …/offsets shows
// MM2's own source offsets ({"cluster", "partition", "topic"} →
// {"offset"}), which account for every record.
func TestMirrorSourceReplicatesTopic(t *testing.T) {
	c := start(t, 1)
	var list []struct{ Class string }
	c.Must(http.StatusOK, "GET", "/connector-plugins", nil).JSON(t, &list)
	if !slices.ContainsFunc(list, func(p struct{ Class string }) bool { return p.Class == mirrorSourceClass }) {
		t.Fatalf("GET /connector-plugins does not list %s: %+v", mirrorSourceClass, list)
	}

	const n, partitions = 10000, 3
	topic := c.Name("mirrored")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := kafkautil.EnsureTopics(ctx, c.Admin(), kafkautil.TopicSpec{Name: topic, Partitions: partitions}); err != nil {
		t.Fatal(err)
	}
	// Distinct keys spread the records over the partitions (the producer
	// hashes keys); distinct values let the copy be checked record by record.
	recs := make([]sluicetest.Record, n)
	for i := range recs {
		recs[i] = sluicetest.Record{Key: fmt.Appendf(nil, "k%05d", i), Value: fmt.Appendf(nil, "v%05d", i)}
	}
	c.ProduceRecords(topic, recs...)
	produced := c.ReadTopic(topic)
	source := byPartition(produced)
	if len(produced) != n || len(source) != partitions {
		t.Fatalf("source has %d records in %d partitions, want %d in %d", len(produced), len(source), n, partitions)
	}

	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": "mm2", "config": map[string]string{
		"connector.class": mirrorSourceClass, "tasks.max": "2",
		"topics":               topic,
		"source.cluster.alias": "src", "target.cluster.alias": "dst",
		"source.cluster.bootstrap.servers": c.Brokers, "target.cluster.bootstrap.servers": c.Brokers,
		// Bytes in, the same bytes out, as an MM2 deployment configures it.
		"key.converter":   "org.apache.kafka.connect.converters.ByteArrayConverter",
		"value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
		// One broker: replication factor 1 for the copy and MM2's offset
		// syncs topic; no ACLs to copy; a new topic is noticed within a second.
		"replication.factor": "1", "offset-syncs.topic.replication.factor": "1",
		"sync.topic.acls.enabled":         "false",
		"refresh.topics.interval.seconds": "1",
	}})

	// The end offsets are a cheap gate to poll; the copy itself is
	// compared once they show every record.
	target := "src." + topic
	adm := c.Admin()
	sluicetest.Eventually(t, 45*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		got := int64(0)
		ends, err := adm.ListEndOffsets(ctx, target)
		if err == nil {
			ends.Each(func(o kadm.ListedOffset) { got += o.Offset })
		}
		return got >= n, fmt.Sprintf("%s has %d of %d records (%v)", target, got, n, err)
	})
	copied := byPartition(c.ReadTopic(target))
	for p, want := range source {
		if got := copied[p]; !slices.Equal(got, want) {
			t.Fatalf("%s partition %d: %d records, want the source partition's %d, once each and in order", target, p, len(got), len(want))
		}
	}
	if len(copied) != len(source) {
		t.Fatalf("%s has records in %d partitions, want %d", target, len(copied), len(source))
	}

	// MM2's source offset is the offset of the last record it copied from
	// the partition, so offset + 1 is the partition's count of records.
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		offsets, body := connectorOffsets(c, "mm2")
		next := map[int32]int{}
		for _, o := range offsets {
			part, _ := o.Partition["partition"].(json.Number)
			off, _ := o.Offset["offset"].(json.Number)
			pn, err1 := part.Int64()
			on, err2 := off.Int64()
			if err1 != nil || err2 != nil || o.Partition["cluster"] != "src" || o.Partition["topic"] != topic {
				return false, "offsets not MM2's: " + body
			}
			next[int32(pn)] = int(on) + 1
		}
		for p, recs := range source {
			if next[p] != len(recs) {
				return false, fmt.Sprintf("partition %d's offset counts %d of its %d records: %s", p, next[p], len(recs), body)
			}
		}
		return len(next) == len(source), "offsets of other partitions: " + body
	})
}

// byPartition is the values of records by partition, in offset order.
func byPartition(recs []sluicetest.Record) map[int32][]string {
	out := map[int32][]string{}
	for _, r := range recs {
		out[r.Partition] = append(out[r.Partition], string(r.Value))
	}
	return out
}
