package audit

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/topicscan/scantest"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/sluicetest/wait"
)

func newLog(t *testing.T, brokers string, cfg Config) *Log {
	t.Helper()
	cfg.KafkaOpts = kafkautil.ClientOpts(brokers, "audit-test", nil)
	cfg.Logger = slog.New(slog.DiscardHandler)
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		l.Close(ctx)
	})
	return l
}

// Records written are read back newest first, selected by connector and
// time, at most limit of them, with More saying that older ones match.
func TestWriteRead(t *testing.T) {
	l := newLog(t, scantest.Broker(t), Config{Topic: "audit"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.EnsureTopic(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for i := range 10 {
		ops := []string{"connector.create", "connector.config", "offsets.reset"}
		l.Write(api.AuditRecord{Time: start.Add(time.Duration(i) * time.Minute), Connector: fmt.Sprintf("c%d", i%2),
			Principal: fmt.Sprintf("p%d", i%3), Operation: ops[i%3], Status: i})
	}
	tests := []struct {
		name   string
		q      Query
		status []int
		more   bool
	}{
		{"all", Query{Limit: 100}, []int{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, false},
		{"limit", Query{Limit: 3}, []int{9, 8, 7}, true},
		{"connector", Query{Connector: "c0", Limit: 100}, []int{8, 6, 4, 2, 0}, false},
		{"connector and limit", Query{Connector: "c1", Limit: 2}, []int{9, 7}, true},
		{"since", Query{Since: start.Add(7 * time.Minute), Limit: 100}, []int{9, 8, 7}, false},
		{"since, nothing after", Query{Since: start.Add(time.Hour), Limit: 100}, nil, false},
		{"no such connector", Query{Connector: "x", Limit: 100}, nil, false},
		{"principal", Query{Principal: "p1", Limit: 100}, []int{7, 4, 1}, false},
		{"operation", Query{Operation: "offsets.reset", Limit: 100}, []int{8, 5, 2}, false},
		{"operation glob", Query{Operation: "connector.*", Limit: 100}, []int{9, 7, 6, 4, 3, 1, 0}, false},
		{"until", Query{Until: start.Add(3 * time.Minute), Limit: 100}, []int{2, 1, 0}, false},
		{"since and until", Query{Since: start.Add(2 * time.Minute), Until: start.Add(5 * time.Minute), Limit: 100}, []int{4, 3, 2}, false},
		{"next page", Query{Until: start.Add(7 * time.Minute), Limit: 3}, []int{6, 5, 4}, true},
		{"every filter", Query{Connector: "c0", Principal: "p0", Operation: "connector.*", Until: start.Add(time.Hour), Limit: 100}, []int{6, 0}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := l.Read(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var status []int
			for _, r := range got.Records {
				status = append(status, r.Status)
			}
			if fmt.Sprint(status) != fmt.Sprint(tt.status) || got.More != tt.more || got.Records == nil {
				t.Fatalf("got %v more=%v, want %v more=%v", status, got.More, tt.status, tt.more)
			}
		})
	}
}

// A broker that does not answer holds a write up no longer than the
// timeout; records that cannot be queued or delivered are counted.
func TestWriteBounded(t *testing.T) {
	l := newLog(t, scantest.Unreachable(t), Config{Topic: "audit", Timeout: 100 * time.Millisecond, MaxQueued: 1, DeliveryTimeout: time.Second})
	start := time.Now()
	l.Write(api.AuditRecord{Operation: "first"})
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("a write waited %v for an unreachable broker, want about 100ms", took)
	}
	l.Write(api.AuditRecord{Operation: "second"}) // the queue is full
	if n := l.Unwritten(); n != 1 {
		t.Fatalf("unwritten %d after a write past the queue, want 1", n)
	}
	wait.Eventually(t, 10*time.Second, func() (bool, string) {
		n := l.Unwritten()
		return n >= 2, fmt.Sprintf("unwritten %d: the first record was never given up", n)
	})
}

// A compacted audit topic made by someone else is kept, with a warning.
func TestEnsureTopicWarnsCompacted(t *testing.T) {
	l := newLog(t, scantest.Broker(t), Config{Topic: "audit"})
	var logged strings.Builder
	l.cfg.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := kafkautil.EnsureTopics(ctx, kadm.NewClient(l.cl), kafkautil.TopicSpec{Name: "audit", Partitions: 1, Compacted: true}); err != nil {
		t.Fatal(err)
	}
	if err := l.EnsureTopic(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logged.String(), "the audit topic is compacted") {
		t.Fatalf("logged %q, want a warning about compaction", logged.String())
	}
}
