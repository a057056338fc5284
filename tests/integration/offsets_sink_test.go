package integration

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/sluicetest"
)

// sinkPos is a sink offset entry as GET …/offsets shows it (spec §5.4).
func sinkPos(topic string, partition, at int) offset {
	return offset{
		Partition: map[string]any{"kafka_topic": topic, "kafka_partition": num(partition)},
		Offset:    map[string]any{"kafka_offset": num(at)},
	}
}

func sinkNull(topic string, partition int) offset {
	return offset{Partition: map[string]any{"kafka_topic": topic, "kafka_partition": num(partition)}}
}

// createTopic creates topic with partitions partitions.
func createTopic(c *sluicetest.Cluster, topic string, partitions int32) {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := c.Admin().CreateTopic(ctx, partitions, -1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		c.T.Fatalf("create topic %s: %v", topic, err)
	}
}

func values(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%02d", prefix, i)
	}
	return out
}

// TestOffsetsSinkGetAlterAndDelete: a sink's offsets are its group's
// committed offsets, in the spec's shape, in every state; an alter moves
// where the sink resumes; offsets outlive a deleted sink, and
// ?reset_offsets=true deletes its group so a new one starts from the
// beginning.
func TestOffsetsSinkGetAlterAndDelete(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	snk := c.Name("snk")
	topic := c.Name("sink")
	createTopic(c, topic, 1)
	vals := values("v", 10)
	c.Produce(topic, vals...)

	fileSink(c, snk, topic, "sink-out.txt", "STOPPED")
	if r := c.Must(http.StatusOK, "GET", "/connectors/"+snk+"/offsets", nil); strings.TrimSpace(string(r.Body)) != `{"offsets":[]}` {
		t.Fatalf("GET offsets of a group that never consumed: %s, want {\"offsets\":[]}", r.Body)
	}
	patch(t, c, snk, body(sinkPos(topic, 0, 4)), http.StatusOK, msgAlterDefinite)
	r := c.Must(http.StatusOK, "GET", "/connectors/"+snk+"/offsets", nil)
	if want := fmt.Sprintf(`{"offsets":[{"partition":{"kafka_partition":0,"kafka_topic":%q},"offset":{"kafka_offset":4}}]}`, topic); !sameJSON(r.Body, want) {
		t.Fatalf("GET offsets of snk: %s\nwant %s", r.Body, want)
	}

	c.Must(http.StatusAccepted, "PUT", "/connectors/"+snk+"/resume", nil)
	c.WaitState(snk, "RUNNING", 1, "RUNNING")
	waitFile(t, workPath(c, "sink-out.txt"), vals[4:])
	waitOffsets(c, snk, []offset{sinkPos(topic, 0, 10)})
	c.Must(http.StatusAccepted, "PUT", "/connectors/"+snk+"/pause", nil)
	c.WaitState(snk, "PAUSED", 1, "PAUSED")
	wantOffsets(c, snk, []offset{sinkPos(topic, 0, 10)})
	c.Must(http.StatusNoContent, "PUT", "/connectors/"+snk+"/stop", nil)
	c.WaitState(snk, "STOPPED", 0, "")
	wantOffsets(c, snk, []offset{sinkPos(topic, 0, 10)})

	// Deleted, the group stays; a new sink of the same name resumes.
	c.Must(http.StatusNoContent, "DELETE", "/connectors/"+snk, nil)
	expect(t, c, "GET", "/connectors/"+snk+"/offsets", nil, http.StatusNotFound, msgNotFound(snk))
	fileSink(c, snk, topic, "sink-out.txt", "STOPPED")
	wantOffsets(c, snk, []offset{sinkPos(topic, 0, 10)})

	// Deleted with its offsets, the group goes: a new one reads everything.
	c.Must(http.StatusNoContent, "DELETE", "/connectors/"+snk+"?reset_offsets=true", nil)
	fileSink(c, snk, topic, "sink-out.txt", "STOPPED")
	wantOffsets(c, snk, nil)
	c.Must(http.StatusAccepted, "PUT", "/connectors/"+snk+"/resume", nil)
	waitFile(t, workPath(c, "sink-out.txt"), concat(vals[4:], vals))
	waitOffsets(c, snk, []offset{sinkPos(topic, 0, 10)})
	expect(t, c, "DELETE", "/connectors/"+snk+"?reset_offsets=true", nil, http.StatusBadRequest, msgNotStopped(snk))
	c.Must(http.StatusOK, "GET", "/connectors/"+snk, nil)
	wantOffsets(c, snk, []offset{sinkPos(topic, 0, 10)})
}

// TestOffsetsSinkAlterSemanticsAndValidation: partial alters augment, a null
// offset deletes that partition's committed offset, the last duplicate wins,
// string-encoded numbers pass, a reset deletes the group and can be
// repeated; every bad entry of spec §5.4 is refused with its message, and a
// rejected request changes nothing.
func TestOffsetsSinkAlterSemanticsAndValidation(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	snk := c.Name("snk")
	topic := c.Name("parts")
	createTopic(c, topic, 3)
	fileSink(c, snk, topic, "parts-out.txt", "STOPPED")

	patch(t, c, snk, body(sinkPos(topic, 0, 5), offset{
		Partition: map[string]any{"kafka_topic": topic, "kafka_partition": "1", "extra": "ignored"},
		Offset:    map[string]any{"kafka_offset": "3", "metadata": "ignored"},
	}), http.StatusOK, msgAlterDefinite)
	wantOffsets(c, snk, []offset{sinkPos(topic, 0, 5), sinkPos(topic, 1, 3)})

	patch(t, c, snk, body(sinkPos(topic, 2, 7)), http.StatusOK, msgAlterDefinite)
	wantOffsets(c, snk, []offset{sinkPos(topic, 0, 5), sinkPos(topic, 1, 3), sinkPos(topic, 2, 7)})

	patch(t, c, snk, body(sinkNull(topic, 1)), http.StatusOK, msgAlterDefinite)
	wantOffsets(c, snk, []offset{sinkPos(topic, 0, 5), sinkPos(topic, 2, 7)})

	patch(t, c, snk, body(sinkPos(topic, 0, 1), sinkPos(topic, 2, 8), sinkPos(topic, 0, 2)), http.StatusOK, msgAlterDefinite)
	wantOffsets(c, snk, []offset{sinkPos(topic, 0, 2), sinkPos(topic, 2, 8)})

	before := canon(t, getOffsets(c, snk))
	entry := func(partition, off string) string {
		return `{"offsets":[{"partition":` + partition + `,"offset":` + off + `}]}`
	}
	tp := func(p string) string { return `{"kafka_topic":"` + topic + `","kafka_partition":` + p + `}` }
	parsePart := func(v string) string {
		return "Failed to parse the following Kafka partition value in the provided offsets: '" + v + "'. Partition values for sink connectors need to be integers."
	}
	parseOff := func(v string) string {
		return "Failed to parse the following Kafka offset value in the provided offsets: '" + v + "'. Offset values for sink connectors need to be integers."
	}
	tests := []struct {
		name, body string
		status     int
		msg        string
	}{
		{"null partition", entry(`null`, `{"kafka_offset":1}`), 400, "The partition for a sink connector offset cannot be null or missing"},
		{"missing partition", `{"offsets":[{"offset":{"kafka_offset":1}}]}`, 400, "The partition for a sink connector offset cannot be null or missing"},
		{"no kafka_partition", entry(`{"kafka_topic":"t"}`, `{"kafka_offset":1}`), 400, "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'"},
		{"no kafka_topic", entry(`{"kafka_partition":0}`, `{"kafka_offset":1}`), 400, "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'"},
		{"empty partition", entry(`{}`, `null`), 400, "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'"},
		{"null topic", entry(`{"kafka_topic":null,"kafka_partition":0}`, `{"kafka_offset":1}`), 400, "Kafka topic names must be valid strings and may not be null"},
		{"null partition number", entry(`{"kafka_topic":"t","kafka_partition":null}`, `{"kafka_offset":1}`), 400, "Kafka partitions must be valid numbers and may not be null"},
		{"partition is a word", entry(tp(`"abc"`), `{"kafka_offset":1}`), 400, parsePart("abc")},
		{"partition is a decimal", entry(tp(`1.5`), `{"kafka_offset":1}`), 400, parsePart("1.5")},
		{"partition 1.0", entry(tp(`1.0`), `{"kafka_offset":1}`), 400, parsePart("1.0")},
		{"partition beyond 32 bits", entry(tp(`4294967296`), `{"kafka_offset":1}`), 400, parsePart("4294967296")},
		{"partition is a boolean", entry(tp(`true`), `null`), 400, parsePart("true")},
		{"offset without kafka_offset", entry(tp(`0`), `{"offset":1}`), 400, "The offset for a sink connector should either be null or contain the key 'kafka_offset'"},
		{"empty offset", entry(tp(`0`), `{}`), 400, "The offset for a sink connector should either be null or contain the key 'kafka_offset'"},
		{"offset is a word", entry(tp(`0`), `{"kafka_offset":"x"}`), 400, parseOff("x")},
		{"offset 5.0", entry(tp(`0`), `{"kafka_offset":5.0}`), 400, parseOff("5.0")},
		{"offset is a boolean", entry(tp(`0`), `{"kafka_offset":true}`), 400, parseOff("true")},
		{"offset is null", entry(tp(`0`), `{"kafka_offset":null}`), 400, parseOff("null")},
		{"offset beyond 64 bits", entry(tp(`0`), `{"kafka_offset":123456789012345678901234567890}`), 400, parseOff("123456789012345678901234567890")},
		// Sluice refuses a negative offset up front (spec §0); upstream fails later with a 500.
		{"negative offset", entry(tp(`0`), `{"kafka_offset":-1}`), 400, "Offset values for sink connectors must not be negative: '-1'"},
		{"negative offset after a good entry", `{"offsets":[` +
			`{"partition":` + tp(`2`) + `,"offset":{"kafka_offset":1}},{"partition":` + tp(`0`) + `,"offset":{"kafka_offset":"-3"}}]}`,
			400, "Offset values for sink connectors must not be negative: '-3'"},
		{"bad entry after a good one", `{"offsets":[` +
			`{"partition":` + tp(`2`) + `,"offset":{"kafka_offset":1}},{"partition":` + tp(`0`) + `,"offset":{"kafka_offset":"x"}}]}`,
			400, parseOff("x")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			patch(t, c, snk, tt.body, tt.status, tt.msg)
		})
	}
	if got := canon(t, getOffsets(c, snk)); got != before {
		t.Fatalf("offsets changed by rejected requests:\n got %s\nwant %s", got, before)
	}

	expect(t, c, "DELETE", "/connectors/"+snk+"/offsets", nil, http.StatusOK, msgResetDefinite)
	wantOffsets(c, snk, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if groups, err := c.Admin().ListGroups(ctx); err != nil {
		t.Fatal(err)
	} else if _, ok := groups["connect-"+snk]; ok {
		t.Fatalf("group of snk still exists after a reset: %+v", groups["connect-"+snk])
	}
	expect(t, c, "DELETE", "/connectors/"+snk+"/offsets", nil, http.StatusOK, msgResetDefinite)
	wantOffsets(c, snk, nil)
}

// TestOffsetsSinkLiveMemberRefused: a consumer the coordinator knows nothing
// about joins the stopped sink's group; altering or resetting the group's
// offsets is refused with the spec's 500 retry messages and changes
// nothing, and succeeds once the member left.
func TestOffsetsSinkLiveMemberRefused(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	snk := c.Name("snk")
	topic := c.Name("live")
	createTopic(c, topic, 1)
	c.Produce(topic, values("m", 3)...)
	fileSink(c, snk, topic, "live-out.txt", "STOPPED")
	patch(t, c, snk, body(sinkPos(topic, 0, 1)), http.StatusOK, msgAlterDefinite)

	member, err := kgo.NewClient(append(sluicetest.ClientOpts(c.Brokers, "test-zombie-member"),
		kgo.ConsumerGroup("connect-"+snk), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)...)
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			fs := member.PollFetches(ctx)
			cancel()
			if fs.IsClientClosed() {
				return
			}
		}
	}()
	adm := c.Admin()
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		groups, err := adm.DescribeGroups(ctx, "connect-"+snk)
		if err != nil {
			return false, err.Error()
		}
		g := groups["connect-"+snk]
		return g.State == "Stable" && len(g.Members) == 1, fmt.Sprintf("group %s with %d members", g.State, len(g.Members))
	})

	patch(t, c, snk, body(sinkPos(topic, 0, 2)), http.StatusInternalServerError, msgSinkAlterZombie(snk))
	patch(t, c, snk, body(sinkNull(topic, 0)), http.StatusInternalServerError, msgSinkAlterZombie(snk))
	expect(t, c, "DELETE", "/connectors/"+snk+"/offsets", nil, http.StatusInternalServerError, msgSinkResetZombie(snk))
	expect(t, c, "DELETE", "/connectors/"+snk+"?reset_offsets=true", nil, http.StatusInternalServerError, msgSinkResetZombie(snk))
	c.Must(http.StatusOK, "GET", "/connectors/"+snk, nil)
	wantOffsets(c, snk, []offset{sinkPos(topic, 0, 1)})

	member.Close() // leaves the group
	<-polled
	patch(t, c, snk, body(sinkPos(topic, 0, 2)), http.StatusOK, msgAlterDefinite)
	wantOffsets(c, snk, []offset{sinkPos(topic, 0, 2)})
	expect(t, c, "DELETE", "/connectors/"+snk+"/offsets", nil, http.StatusOK, msgResetDefinite)
	wantOffsets(c, snk, nil)
}
