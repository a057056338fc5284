package bench

import (
	"fmt"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// minCalls is the fewest calls the percentiles are taken over.
const minCalls = 200

// BenchmarkOffsetsPatch10 measures PATCH …/offsets of 10 partitions on a
// stopped file source, end to end: REST → coordinator (validation, state
// check, confirmation that no task runs) → NATS → agent (fencing, one Kafka
// transaction) → reply. It reports the median and p99 latency over at least
// 200 calls (calls beyond b.N are made with the timer stopped).
//
//	go test -run '^$' -bench BenchmarkOffsetsPatch10 ./bench/
func BenchmarkOffsetsPatch10(b *testing.B) {
	c := sluicetest.Start(b, sluicetest.Options{Agents: 1})
	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{
		"name": "bench-src", "initial_state": "STOPPED",
		"config": map[string]string{
			"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
			"file":            "bench.txt", "topic": c.Name("bench"),
		},
	})
	body := func(call int) map[string]any {
		entries := make([]map[string]any, 10)
		for p := range entries {
			entries[p] = map[string]any{
				"partition": map[string]any{"filename": fmt.Sprintf("file-%d.txt", p)},
				"offset":    map[string]any{"position": call*10 + p},
			}
		}
		return map[string]any{"offsets": entries}
	}
	call := func(i int) time.Duration {
		start := time.Now()
		r := c.Do("PATCH", "/connectors/bench-src/offsets", body(i))
		d := time.Since(start)
		if r.Status != http.StatusOK {
			b.Fatalf("PATCH offsets: %s", r)
		}
		return d
	}
	for i := range 5 { // warm up: connections, transactional ids, topic metadata
		call(i)
	}
	lat := make([]time.Duration, 0, max(b.N, minCalls))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lat = append(lat, call(i))
	}
	b.StopTimer()
	for i := len(lat); i < minCalls; i++ {
		lat = append(lat, call(i))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(lat[len(lat)/2]), "median-ms")
	b.ReportMetric(ms(lat[(len(lat)*99+99)/100-1]), "p99-ms")
	b.ReportMetric(float64(len(lat)), "calls")
}
