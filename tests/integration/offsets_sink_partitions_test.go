package integration

import (
	"net/http"
	"testing"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestOffsetsSinkUnknownPartitionRefused: a sink PATCH (or a create with
// initial offsets) naming a partition that does not exist — a negative
// one, one past the topic's last, one of an empty topic name or of a topic
// that does not exist — is a 400 naming the topic and partition, checked
// against the topic's metadata before anything is sent to an agent; the
// offsets stay as they were and nothing is created.
func TestOffsetsSinkUnknownPartitionRefused(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic := c.Name("one")
	createTopic(c, topic, 1)
	snk := c.Name("snk")
	fileSink(c, snk, topic, "one-out.txt", "STOPPED")
	patch(t, c, snk, body(sinkPos(topic, 0, 4)), http.StatusOK, msgAlterDefinite)
	before := canon(t, getOffsets(c, snk))
	missing := c.Name("missing")

	tests := []struct {
		name  string
		entry offset
		msg   string
	}{
		{"negative partition", sinkPos(topic, -1, 1),
			"Cannot alter the offset of partition -1 of topic '" + topic + "': partition numbers must not be negative"},
		{"partition past the last", sinkPos(topic, 99, 1),
			"Cannot alter the offset of partition 99 of topic '" + topic + "': the topic has 1 partition(s)"},
		{"partition past the last, offset removed", sinkNull(topic, 1),
			"Cannot alter the offset of partition 1 of topic '" + topic + "': the topic has 1 partition(s)"},
		{"empty topic name", sinkPos("", 0, 1),
			"Cannot alter the offset of partition 0 of topic '': a topic name must not be empty"},
		{"topic that does not exist", sinkPos(missing, 0, 1),
			"Cannot alter the offset of partition 0 of topic '" + missing + "': the topic does not exist"},
	}
	for _, tt := range tests {
		t.Run("PATCH "+tt.name, func(t *testing.T) {
			// A valid entry first: the bad one must still refuse the whole request.
			patch(t, c, snk, body(sinkPos(topic, 0, 7), tt.entry), http.StatusBadRequest, tt.msg)
			if got := canon(t, getOffsets(c, snk)); got != before {
				t.Fatalf("offsets changed by a refused PATCH:\n got %s\nwant %s", got, before)
			}
		})
		t.Run("create "+tt.name, func(t *testing.T) {
			name := c.Name("new")
			r := sluicetest.Do(t, c.URL, "POST", "/connectors", map[string]any{"name": name,
				"config": fileSinkCfg("new-out.txt", topic), "initial_offsets": []offset{tt.entry}})
			wantError(t, r, http.StatusBadRequest, tt.msg)
			expect(t, c, "GET", "/connectors/"+name, nil, http.StatusNotFound, msgNotFound(name))
		})
	}
}
