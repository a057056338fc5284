package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// firstFlushInterval is the agents' offset flush interval in these tests:
// far longer than any wait below, so offsets that appear were committed by
// the first flush, which comes as soon as a task has a position.
const firstFlushInterval = time.Hour

// TestOffsetsFirstPositionAtOnce: with an hour's flush interval, a source
// task's and a sink task's first positions are readable through
// GET …/offsets as soon as the tasks have processed records — not an hour
// later — and later positions wait for the interval (or the stop).
func TestOffsetsFirstPositionAtOnce(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, FlushInterval: firstFlushInterval})
	topic := c.Name("first")
	in := lines(1, 4)
	writeLines(t, workPath(c, "first.txt"), in)
	mustCreate(c, "first-src", fileSourceCfg("first.txt", topic), "")
	sink := c.Name("first-sink")
	mustCreate(c, sink, fileSinkCfg("first-out.txt", topic), "")
	c.WaitState("first-src", "RUNNING", 1, "RUNNING")
	c.WaitState(sink, "RUNNING", 1, "RUNNING")
	waitTopic(c, topic, in)

	// The source: its first batch's position, committed at once.
	var first int64
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		got := getOffsets(c, "first-src")
		if len(got) == 1 {
			_, _ = fmt.Sscan(fmt.Sprint(got[0].Offset["position"]), &first)
		}
		return first > 0, fmt.Sprintf("source offsets %v: no position yet", got)
	})
	// The sink: the group's committed offset of the topic's partition.
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		got := getOffsets(c, sink)
		for _, o := range got {
			if o.Partition["kafka_topic"] == topic {
				var n int64
				_, _ = fmt.Sscan(fmt.Sprint(o.Offset["kafka_offset"]), &n)
				return n > 0, fmt.Sprintf("sink offsets %v", got)
			}
		}
		return false, fmt.Sprintf("sink offsets %v: no position yet", got)
	})

	// Only the first position is committed at once: the lines that follow
	// are read, and their position waits for the interval — or, as here,
	// for the stop, whose final commit takes it.
	more := lines(5, 3)
	appendLines(t, workPath(c, "first.txt"), more)
	waitTopic(c, topic, append(append([]string{}, in...), more...))
	wantOffsets(c, "first-src", []offset{filePos("first.txt", first)})
	c.Must(204, "PUT", "/connectors/first-src/stop", nil)
	waitOffsets(c, "first-src", []offset{filePos("first.txt", bytesOf(append(append([]string{}, in...), more...)))})
}

// TestOffsetsFirstPositionAtOnceExactlyOnce: with exactly-once source
// support, a task's offsets are committed with its records at its
// transaction boundary; with the default boundary (poll) that is after
// every batch, so its first position is readable at once whatever the flush
// interval. (transaction.boundary=interval keeps Kafka Connect's meaning:
// the first transaction ends once the interval has passed.)
func TestOffsetsFirstPositionAtOnceExactlyOnce(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, FlushInterval: firstFlushInterval, ExactlyOnce: true})
	topic := c.Name("first-eos")
	in := lines(1, 4)
	writeLines(t, workPath(c, "first-eos.txt"), in)
	mustCreate(c, "first-eos", fileSourceCfg("first-eos.txt", topic), "")
	c.WaitState("first-eos", "RUNNING", 1, "RUNNING")
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		got := getOffsets(c, "first-eos")
		var pos int64
		if len(got) == 1 {
			_, _ = fmt.Sscan(fmt.Sprint(got[0].Offset["position"]), &pos)
		}
		return pos > 0, fmt.Sprintf("offsets %v: no position yet", got)
	})
	// Its records were committed in the same transaction: a read_committed
	// reader sees them without waiting for the interval either.
	waitTopic(c, topic, in)
}
