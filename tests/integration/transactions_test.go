package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// seqsOf decodes generator records into their seqs, in topic order.
func seqsOf(t *testing.T, recs []sluicetest.Record) []int64 {
	t.Helper()
	out := make([]int64, 0, len(recs))
	for _, r := range recs {
		var g generated
		if err := json.Unmarshal(r.Value, &g); err != nil {
			t.Fatalf("record value %q: %v", r.Value, err)
		}
		out = append(out, g.Seq)
	}
	return out
}

// TestConnectorDefinedTransactions: with exactly-once support on and
// transaction.boundary=connector, the generator ends a transaction every
// 10 records and aborts every third. read_committed consumers see the 70
// records of the committed ones, each once, never those of the aborted
// ones, and the connector's position is past all 100 (an aborted
// transaction's positions are committed, as Kafka Connect does).
func TestConnectorDefinedTransactions(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{ExactlyOnce: true})
	topic := c.Name("txn-conn")
	name := c.Name("txn-conn")
	mustCreate(c, name, generatorCfg(topic, "count", "100", "rate", "1000", "record.bytes", "0",
		"exactly.once.support", "required", "transaction.boundary", "connector",
		"transaction.records", "10", "transaction.abort.every", "3"), "")
	waitOffsets(c, name, []offset{{Partition: map[string]any{"stream": 0}, Offset: map[string]any{"seq": 99}}})
	var want []int64
	for s := int64(0); s < 100; s++ {
		if tx := s / 10; tx%3 != 2 { // transactions 3, 6 and 9 (from 1) are aborted
			want = append(want, s)
		}
	}
	got := seqsOf(t, c.ReadTopic(topic))
	if !slices.Equal(got, want) {
		t.Fatalf("read_committed sees %d records %v; want the %d of the committed transactions %v", len(got), got, len(want), want)
	}
	if all := sluicetest.ReadLog(t, c.Brokers, "txn-uncommitted", topic, false); len(all) < 100 {
		t.Fatalf("read_uncommitted sees %d records and markers; the aborted records must be in the log too", len(all))
	}
}

// TestIntervalTransactionBoundary: with transaction.boundary=interval and
// an interval of an hour, nothing is visible to read_committed consumers
// while the task runs; stopping the connector commits the open transaction,
// and then every record is.
func TestIntervalTransactionBoundary(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{ExactlyOnce: true})
	topic, name := c.Name("txn-int"), c.Name("txn-int")
	mustCreate(c, name, generatorCfg(topic, "count", "50", "rate", "1000", "record.bytes", "0",
		"transaction.boundary", "interval", "transaction.boundary.interval.ms", "3600000"), "")
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		n := 0
		for _, r := range sluicetest.ReadLog(t, c.Brokers, "txn-int-uncommitted", topic, false) {
			if !r.Attrs.IsControl() {
				n++
			}
		}
		return n == 50, fmt.Sprintf("%d of 50 records written", n)
	})
	if got := c.ReadTopic(topic); len(got) != 0 {
		t.Fatalf("read_committed sees %d records of a transaction that is still open", len(got))
	}
	c.Must(http.StatusNoContent, "PUT", "/connectors/"+name+"/stop", nil)
	c.WaitState(name, "STOPPED", 0, "")
	if got := seqsOf(t, c.ReadTopic(topic)); len(got) != 50 || got[0] != 0 || got[49] != 49 {
		t.Fatalf("after the stop read_committed sees %v; want seqs 0 to 49", got)
	}
	wantOffsets(c, name, []offset{{Partition: map[string]any{"stream": 0}, Offset: map[string]any{"seq": 49}}})
}

// TestExactlyOncePreflight: Kafka Connect's preflight checks answer create
// with its invalid-config 400: exactly.once.support=required on a cluster
// without exactly-once support, and transaction.boundary=connector for a
// connector that cannot define boundaries.
func TestExactlyOncePreflight(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	topic := c.Name("pre")
	tests := []struct {
		config []string
		msg    string
	}{
		{[]string{"exactly.once.support", "required"}, "This worker does not have exactly-once source support enabled."},
		{[]string{"transaction.boundary", "connector"}, "The connector does not support connector-defined transaction boundaries with the given configuration. " +
			"Please reconfigure it to use a different transaction boundary definition."},
	}
	for _, tt := range tests {
		r := c.Do("POST", "/connectors", map[string]any{"name": c.Name("pre"), "config": generatorCfg(topic, tt.config...)})
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Message(), "contains the following 1 error(s):\n"+tt.msg+"\n") {
			t.Errorf("create with %v: %s", tt.config, r)
		}
	}
	// With transaction.records the generator defines its boundaries; the
	// boundary applies only with exactly-once support on, so the connector
	// runs here as any other.
	name := c.Name("pre-ok")
	mustCreate(c, name, generatorCfg(topic, "count", "5", "transaction.boundary", "connector", "transaction.records", "2"), "")
	c.WaitState(name, "RUNNING", 1, "RUNNING")
	waitRecords(c, topic, 5)
}
