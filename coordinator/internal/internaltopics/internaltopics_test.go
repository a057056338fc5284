package internaltopics

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/kafkautil"
)

// marks is a fleet topic's marks.
type marks map[string]store.TopicMark

func (m marks) Topic(name string) (store.TopicMark, bool) { t, ok := m[name]; return t, ok }

var offsetsTopic = Topic{Spec: kafkautil.TopicSpec{Name: "sluice-offsets", Partitions: 25, Compacted: true}, Setting: "--offsets-topic",
	Loss: "restart every source connector from scratch"}

// TestMayCreate is the table of what a missing topic's creation depends
// on: creation off, evidence that the cluster ran before, and the fleet
// topic's mark of this Kafka cluster (a mark of another cluster, sharing
// the fleet topic, is no evidence).
func TestMayCreate(t *testing.T) {
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		disable  bool
		marks    Marks
		evidence string
		want     string // "" may create; "missing" or "vanished: <evidence fragment>"
	}{
		{name: "never seen", want: ""},
		{name: "never seen, creation off", disable: true, want: "missing"},
		{name: "records elsewhere", evidence: "topic 'sluice-configs' of the same cluster holds 3 records", want: "vanished: holds 3 records"},
		{name: "marked here", marks: marks{"sluice-offsets": {Purpose: "Sluice's offsets topic", Cluster: "k1", Since: since}},
			want: "vanished: the fleet topic 'sluice-fleet' records it as Sluice's offsets topic since 2026-01-02T03:04:05Z"},
		{name: "marked with no cluster", marks: marks{"sluice-offsets": {Purpose: "p", Since: since}}, want: "vanished: records it as p"},
		{name: "marked in another cluster", marks: marks{"sluice-offsets": {Purpose: "p", Cluster: "k2", Since: since}}, want: ""},
		{name: "marked in another cluster, creation off", disable: true, marks: marks{"sluice-offsets": {Purpose: "p", Cluster: "k2"}}, want: "missing"},
		{name: "fleet not read yet", marks: nil, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := New(Config{FleetTopic: "sluice-fleet", DisableCreation: tc.disable})
			g.clusterID, g.marks = "k1", tc.marks
			err := g.mayCreate(offsetsTopic, tc.evidence)
			var missing *kafkautil.MissingTopicError
			var vanished *kafkautil.VanishedTopicError
			switch {
			case tc.want == "":
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
			case tc.want == "missing":
				if !errors.As(err, &missing) || missing.Topic != "sluice-offsets" || missing.Setting != "--offsets-topic" {
					t.Fatalf("want a missing-topic error, got %v", err)
				}
			default:
				if !errors.As(err, &vanished) || !strings.Contains(vanished.Evidence, strings.TrimPrefix(tc.want, "vanished: ")) ||
					vanished.Loss != offsetsTopic.Loss || vanished.Create == "" {
					t.Fatalf("want a vanished-topic error with %q, got %v", tc.want, err)
				}
			}
		})
	}
}
