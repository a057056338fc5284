package bench

import (
	"net/http"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest/procs"
)

// Throughput run parameters: 1 KiB records, a warm-up, then a fixed
// measurement window.
const (
	recordBytes      = 1024
	throughputWarmup = 2 * time.Second
	throughputWindow = 5 * time.Second
)

// BenchmarkGeneratorThroughput measures how many records per second a
// generator source writes through one agent process (two tasks, four
// streams, no rate limit in effect, 1 KiB records), with exactly-once
// source support on (records and offsets in one transaction per flush
// interval) and off, at the default 1s offset flush interval. It counts the
// records readable read_committed (the topic's last stable offsets; with
// exactly-once on they include one transaction marker per partition and
// commit) over a 5s window after a warm-up. Embedded broker by default,
// Apache Kafka with SLUICE_TEST_KAFKA.
//
//	go test -run '^$' -bench BenchmarkGeneratorThroughput ./bench/
func BenchmarkGeneratorThroughput(b *testing.B) {
	buildSluice(b)
	for _, eos := range []bool{true, false} {
		label, flag := "eos=off", "--exactly-once-source-support=disabled"
		if eos {
			label, flag = "eos=on", "--exactly-once-source-support=enabled"
		}
		b.Run(label, func(b *testing.B) {
			c := procs.Start(b, procs.Options{Agents: 1, FlushInterval: time.Second,
				CoordinatorArgs: []string{flag}, AgentArgs: []string{flag}})
			g := procs.Generator{Topic: c.Name("gen"), Streams: 4, Tasks: 2, Count: -1, Rate: 1_000_000, RecordBytes: recordBytes}
			c.CreateTopic(g.Topic, 4)
			name := c.Name("src")
			c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": name, "config": g.Config()})
			c.WaitRunning(name, g.Tasks)
			c.WaitCommittedRecords(g.Topic, 1, 30*time.Second)
			// A fixed warm-up and window: this is a measurement, not a
			// synchronisation.
			time.Sleep(throughputWarmup)
			b.ResetTimer()
			var records int64
			var elapsed time.Duration
			for i := 0; i < b.N; i++ {
				// Start and end the window where the committed end moves:
				// with exactly-once on it moves once per transaction (flush
				// interval), and a window cut between commits would miss or
				// gain up to a whole interval's records.
				from, start := nextCommit(b, c, g.Topic)
				time.Sleep(throughputWindow)
				to, end := nextCommit(b, c, g.Topic)
				records += to - from
				elapsed += end.Sub(start)
			}
			b.StopTimer()
			rate := float64(records) / elapsed.Seconds()
			b.ReportMetric(rate, "records/s")
			b.ReportMetric(rate*recordBytes/(1<<20), "MiB/s")
			b.ReportMetric(0, "ns/op")
			b.Logf("%s: %d records in %v: %.0f records/s", label, records, elapsed.Round(time.Millisecond), rate)
		})
	}
}

// nextCommit waits until topic's committed end moves and returns the new
// end and when it was seen.
func nextCommit(b *testing.B, c *procs.Cluster, topic string) (int64, time.Time) {
	b.Helper()
	prev := c.CommittedRecords(topic)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if n := c.CommittedRecords(topic); n != prev {
			return n, time.Now()
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.Fatalf("%s: no commit for 30s", topic)
	return 0, time.Time{}
}
