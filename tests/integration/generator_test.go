package integration

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// waitRecords waits until topic holds at least n records and returns them.
func waitRecords(c *sluicetest.Cluster, topic string, n int) []sluicetest.Record {
	c.T.Helper()
	var recs []sluicetest.Record
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		recs = c.ReadTopic(topic)
		return len(recs) >= n, fmt.Sprintf("%d of %d records in %s", len(recs), n, topic)
	})
	return recs
}

// waitEveryStream waits until each of the generator's streams has at least
// n records in topic.
func waitEveryStream(c *sluicetest.Cluster, topic string, streams, n int) {
	c.T.Helper()
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		per := map[int64]int{}
		for _, r := range c.ReadTopic(topic) {
			var g generated
			if err := json.Unmarshal(r.Value, &g); err != nil {
				c.T.Fatalf("record value %q: %v", r.Value, err)
			}
			per[g.Stream]++
		}
		for s := range streams {
			if per[int64(s)] < n {
				return false, fmt.Sprintf("records per stream %v, want at least %d in each of %d", per, n, streams)
			}
		}
		return true, ""
	})
}

// TestGeneratorStreams checks the generator's output: count records per
// stream, each (stream, seq) exactly once, split over min(tasks.max,
// streams) tasks, values of the documented shape and size.
func TestGeneratorStreams(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	tests := []struct {
		name                  string
		config                []string
		streams, tasks, count int
		bytes                 int // value length; 0: no filler
	}{
		{"three streams two tasks", []string{"streams", "3", "tasks.max", "2", "count", "50", "record.bytes", "120"}, 3, 2, 50, 120},
		{"more tasks than streams", []string{"streams", "2", "tasks.max", "5", "count", "20"}, 2, 2, 20, 100},
		{"defaults", []string{"count", "15"}, 1, 1, 15, 100},
		{"record shorter than its fields", []string{"streams", "4", "tasks.max", "4", "count", "10", "record.bytes", "10"}, 4, 4, 10, 0},
		{"large records", []string{"streams", "2", "tasks.max", "1", "count", "30", "record.bytes", "4096"}, 2, 1, 30, 4096},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			topic := c.Name(fmt.Sprintf("gen-%d", i))
			name := fmt.Sprintf("gen-%d", i)
			cfg := cfgOf(append([]string{"connector.class", "GeneratorSource", "topic", topic, "rate", "1000"}, tt.config...)...)
			mustCreate(c, name, cfg, "")
			c.WaitState(name, "RUNNING", tt.tasks, "RUNNING")
			var tasks []any
			c.Must(200, "GET", "/connectors/"+name+"/tasks", nil).JSON(t, &tasks)
			if len(tasks) != tt.tasks {
				t.Fatalf("%d task configs, want %d", len(tasks), tt.tasks)
			}
			recs := waitRecords(c, topic, tt.streams*tt.count)
			checkStreams(t, recs, tt.streams, int64(tt.count))
			if len(recs) != tt.streams*tt.count {
				t.Fatalf("%d records, want %d", len(recs), tt.streams*tt.count)
			}
			for _, r := range recs {
				var g generated
				_ = json.Unmarshal(r.Value, &g)
				head := fmt.Sprintf(`{"stream":%d,"seq":%d,"payload":"`, g.Stream, g.Seq)
				if !strings.HasPrefix(string(r.Value), head) || !strings.HasSuffix(string(r.Value), `"}`) {
					t.Fatalf("value %q is not of the shape %s<filler>\"}", r.Value, head)
				}
				if strings.Trim(g.Payload, "abcdefghijklmnopqrstuvwxyz") != "" {
					t.Fatalf("payload %q is not filler letters", g.Payload)
				}
				want := tt.bytes
				if want == 0 {
					want = len(head) + 2
				}
				if len(r.Value) != want {
					t.Fatalf("value %q has %d bytes, want %d", r.Value, len(r.Value), want)
				}
			}
		})
	}
}

// TestGeneratorResumesFromOffsets stops a generator mid-way and resumes it:
// every stream continues from its committed seq, with no gap or repeat.
func TestGeneratorResumesFromOffsets(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	topic := c.Name("gen-resume")
	// 25 records a second: a stream takes 6 s to complete, so a task that
	// starts seconds after another (a loaded machine) still finds the
	// others mid-way at the stop.
	mustCreate(c, "g", generatorCfg(topic, "streams", "3", "tasks.max", "3", "count", "150", "rate", "25", "record.bytes", "30"), "")
	c.WaitState("g", "RUNNING", 3, "RUNNING")
	// Every task must have produced before the stop, or the resume would
	// prove nothing for its stream: the tasks start at different moments.
	waitEveryStream(c, topic, 3, 10)

	c.Must(204, "PUT", "/connectors/g/stop", nil)
	c.WaitState("g", "STOPPED", 0, "")
	mid := checkStreams(t, c.ReadTopic(topic), 3, -1)
	for s, n := range mid {
		if n >= 150 {
			t.Fatalf("stream %d already complete (%d) at the stop: the test proves nothing", s, n)
		}
	}
	c.Must(202, "PUT", "/connectors/g/resume", nil)
	c.WaitState("g", "RUNNING", 3, "RUNNING")
	recs := waitRecords(c, topic, 450)
	checkStreams(t, recs, 3, 150)
	if len(recs) != 450 {
		t.Fatalf("%d records, want 450", len(recs))
	}
}
