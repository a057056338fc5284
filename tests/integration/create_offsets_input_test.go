package integration

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/sluice-io/sluice/sluicetest"
)

// coBadCase is a create that must be refused with 400 message.
type coBadCase struct {
	name string
	// body is the POST body; initial is raw JSON for initial_offsets
	// ("" leaves it out), state the initial_state ("" leaves it out).
	initial string
	state   string
	config  map[string]string // nil: the test's valid config
	nullCfg bool              // send "config": null
	message string
}

// coRunBadCases sends each case for connector name, whose stored offsets
// are previous, and checks: 400 with the exact message, no connector, and
// the name's offsets unchanged.
func coRunBadCases(t *testing.T, c *sluicetest.Cluster, name string, config map[string]string, previous []map[string]any, cases []coBadCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := coOn(c, t)
			body := map[string]any{"name": name, "config": config}
			if tc.config != nil {
				body["config"] = tc.config
			}
			if tc.nullCfg {
				body["config"] = nil
			}
			if tc.initial != "" {
				body["initial_offsets"] = json.RawMessage(tc.initial)
			}
			if tc.state != "" {
				body["initial_state"] = tc.state
			}
			wantError(t, c.Do("POST", "/connectors", body), http.StatusBadRequest, tc.message)
			coWantAbsent(c, name)
			coWantNameOffsets(c, name, config, previous...)
		})
	}
}

// TestCreateWithOffsetsBadInputSource: a file source create with a bad
// initial_state or bad initial_offsets answers 400 with the spec's message
// (§0, and PATCH's messages of §5.3 and §0, and the file source hook's of
// §8); nothing is created and the name's offsets do not change.
func TestCreateWithOffsetsBadInputSource(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	name := c.Name("bad-src")
	config := fileSourceCfg("bad.txt", c.Name("bad"))
	previous := []map[string]any{coSrc("bad.txt", 4), coSrc("older.txt", 8)}
	coSeed(c, name, config, previous...)
	const good = `[{"partition":{"filename":"bad.txt"},"offset":{"position":1}}]`
	prim := func(field, kind string) string {
		return "Offsets may only contain primitive types as values, but field " + field + " contains " + kind
	}
	coRunBadCases(t, c, name, config, previous, []coBadCase{
		{name: "initial_state", state: "Sleeping", initial: good, message: "Invalid initial_state 'Sleeping': must be one of RUNNING, PAUSED, STOPPED"},
		{name: "initial_state empty list", state: "started", initial: `[]`, message: "Invalid initial_state 'started': must be one of RUNNING, PAUSED, STOPPED"},
		{name: "config invalid", config: cfgOf("connector.class", classFileSource, "topic", "t"), initial: good, message: validationMessage(missingFile)},
		{name: "config null", nullCfg: true, initial: good, message: "Connector config must not be null"},
		{name: "string", initial: `"bad.txt"`, message: `Invalid value for field "initial_offsets": expected array`},
		{name: "object", initial: `{"partition":{"filename":"bad.txt"},"offset":{"position":1}}`, message: `Invalid value for field "initial_offsets": expected array`},
		{name: "number", initial: `30`, message: `Invalid value for field "initial_offsets": expected array`},
		{name: "list of numbers", initial: `[30]`, message: `Invalid value for field "initial_offsets": expected array of objects`},
		{name: "list of lists", initial: `[[]]`, message: `Invalid value for field "initial_offsets": expected array of objects`},
		{name: "null entry", initial: `[null]`, message: "Offset entries must not be null"},
		{name: "null entry after a good one", initial: `[{"partition":{"filename":"bad.txt"},"offset":{"position":1}},null]`, message: "Offset entries must not be null"},
		{name: "partition not an object", initial: `[{"partition":"bad.txt","offset":{"position":1}}]`, message: `Invalid value for field "partition": expected object`},
		{name: "offset not an object", initial: `[{"partition":{"filename":"bad.txt"},"offset":1}]`, message: `Invalid value for field "offset": expected object`},
		{name: "unknown entry field", initial: `[{"partition":{"filename":"bad.txt"},"position":1}]`, message: `Unrecognized field "position"`},
		{name: "partition null", initial: `[{"partition":null,"offset":{"position":1}}]`, message: "The partition for a source connector offset cannot be null"},
		{name: "partition missing", initial: `[{"offset":{"position":1}}]`, message: "The partition for a source connector offset cannot be null"},
		{name: "offset value object", initial: `[{"partition":{"filename":"bad.txt"},"offset":{"position":{"at":1}}}]`, message: prim("position", "MAP")},
		{name: "offset value array", initial: `[{"partition":{"filename":"bad.txt"},"offset":{"position":[1]}}]`, message: prim("position", "ARRAY")},
		{name: "offset value beyond 64 bits", initial: `[{"partition":{"filename":"bad.txt"},"offset":{"position":123456789012345678901234567890}}]`, message: prim("position", "class java.math.BigInteger")},
		{name: "partition value object", initial: `[{"partition":{"filename":{"name":"bad.txt"}},"offset":{"position":1}}]`, message: prim("filename", "MAP")},
		{name: "hook: no position", initial: `[{"partition":{"filename":"bad.txt"},"offset":{"line":1}}]`, message: "Offset objects should either be null or contain the key 'position'"},
		{name: "hook: position not a long", initial: `[{"partition":{"filename":"bad.txt"},"offset":{"position":"ten"}}]`, message: "The value for the 'position' key in the offset is expected to be a Long value"},
		{name: "hook: negative position", initial: `[{"partition":{"filename":"bad.txt"},"offset":{"position":-1}}]`, message: "The value for the 'position' key in the offset should be a non-negative value"},
		{name: "hook: no filename", initial: `[{"partition":{"file":"bad.txt"},"offset":{"position":1}}]`, message: "Partition objects should contain the key 'filename'"},
		{name: "hook: one bad entry of two", initial: `[{"partition":{"filename":"bad.txt"},"offset":{"position":1}},{"partition":{"filename":"older.txt"},"offset":{"position":-5}}]`, message: "The value for the 'position' key in the offset should be a non-negative value"},
	})
}

// TestCreateWithOffsetsBadInputSink is the sink's side: the parser's
// messages of spec §5.4 and the negative offset of §0, each a 400 that
// creates nothing and leaves the group's offsets as they were.
func TestCreateWithOffsetsBadInputSink(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic := c.Name("bad-in")
	coTopic(c, topic, 2)
	name := c.Name("bad-snk")
	config := fileSinkCfg("bad-sink.txt", topic)
	previous := []map[string]any{coSink(topic, 0, 3), coSink(topic, 1, 5)}
	coSeed(c, name, config, previous...)
	entry := func(partition, offset string) string {
		return `[{"partition":` + partition + `,"offset":` + offset + `}]`
	}
	tp := func(p string) string { return `{"kafka_topic":"` + topic + `","kafka_partition":` + p + `}` }
	coRunBadCases(t, c, name, config, previous, []coBadCase{
		{name: "initial_state", state: "off", initial: entry(tp("0"), `{"kafka_offset":1}`), message: "Invalid initial_state 'off': must be one of RUNNING, PAUSED, STOPPED"},
		{name: "not a list", initial: `{"kafka_topic":"t"}`, message: `Invalid value for field "initial_offsets": expected array`},
		{name: "null entry", initial: `[null]`, message: "Offset entries must not be null"},
		{name: "partition null", initial: entry(`null`, `{"kafka_offset":1}`), message: "The partition for a sink connector offset cannot be null or missing"},
		{name: "partition without kafka_partition", initial: entry(`{"kafka_topic":"`+topic+`"}`, `{"kafka_offset":1}`), message: "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'"},
		{name: "topic null", initial: entry(`{"kafka_topic":null,"kafka_partition":0}`, `{"kafka_offset":1}`), message: "Kafka topic names must be valid strings and may not be null"},
		{name: "partition number null", initial: entry(tp("null"), `{"kafka_offset":1}`), message: "Kafka partitions must be valid numbers and may not be null"},
		{name: "partition not an integer", initial: entry(tp(`"zero"`), `{"kafka_offset":1}`), message: "Failed to parse the following Kafka partition value in the provided offsets: 'zero'. Partition values for sink connectors need to be integers."},
		{name: "offset without kafka_offset", initial: entry(tp("0"), `{"offset":1}`), message: "The offset for a sink connector should either be null or contain the key 'kafka_offset'"},
		{name: "offset not an integer", initial: entry(tp("0"), `{"kafka_offset":5.5}`), message: "Failed to parse the following Kafka offset value in the provided offsets: '5.5'. Offset values for sink connectors need to be integers."},
		{name: "negative offset", initial: entry(tp("0"), `{"kafka_offset":-1}`), message: "Offset values for sink connectors must not be negative: '-1'"},
	})
}
