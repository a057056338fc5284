package offsetval

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/sluice-io/sluice/api"
)

func entries(t *testing.T, js string) []api.ConnectorOffset {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(js)))
	dec.UseNumber()
	var out []api.ConnectorOffset
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func msg(err error) string {
	if err == nil {
		return ""
	}
	e := api.AsError(err)
	if e.Code != api.CodeBadRequest {
		return "wrong code"
	}
	return e.Message
}

func TestSource(t *testing.T) {
	tests := []struct{ body, want string }{
		{`[{"partition":{"f":"a"},"offset":{"position":5}}]`, ""},
		{`[{"partition":{"f":"a"},"offset":null}]`, ""},
		{`[{"partition":{},"offset":{}}]`, ""},
		{`[{"partition":{"f":"a"},"offset":{"p":5.0,"b":true,"s":"x","n":null}}]`, ""},
		{`[{"partition":null,"offset":{"p":1}}]`, "The partition for a source connector offset cannot be null"},
		{`[{"partition":{"f":{"x":1}},"offset":{}}]`, "Offsets may only contain primitive types as values, but field f contains MAP"},
		{`[{"partition":{"f":"a"},"offset":{"p":[1]}}]`, "Offsets may only contain primitive types as values, but field p contains ARRAY"},
		{`[{"partition":{"f":"a"},"offset":{"p":123456789012345678901234567890}}]`, "Offsets may only contain primitive types as values, but field p contains class java.math.BigInteger"},
		{`[{"partition":{"f":"a"},"offset":{"p":9223372036854775807}}]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			if got := msg(Source(entries(t, tt.body))); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSink(t *testing.T) {
	tests := []struct{ body, want string }{
		{`[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":5}}]`, ""},
		{`[{"partition":{"kafka_topic":"t","kafka_partition":"3","extra":1},"offset":{"kafka_offset":"1000","x":2}}]`, ""},
		{`[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":null}]`, ""},
		{`[{"partition":null,"offset":{"kafka_offset":5}}]`, "The partition for a sink connector offset cannot be null or missing"},
		{`[{"offset":{"kafka_offset":5}}]`, "The partition for a sink connector offset cannot be null or missing"},
		{`[{"partition":{"kafka_topic":"t"},"offset":{"kafka_offset":5}}]`, "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'"},
		{`[{"partition":{"kafka_topic":null,"kafka_partition":0},"offset":null}]`, "Kafka topic names must be valid strings and may not be null"},
		{`[{"partition":{"kafka_topic":"t","kafka_partition":null},"offset":null}]`, "Kafka partitions must be valid numbers and may not be null"},
		{`[{"partition":{"kafka_topic":"t","kafka_partition":"a"},"offset":null}]`, "Failed to parse the following Kafka partition value in the provided offsets: 'a'. Partition values for sink connectors need to be integers."},
		{`[{"partition":{"kafka_topic":"t","kafka_partition":1.5},"offset":null}]`, "Failed to parse the following Kafka partition value in the provided offsets: '1.5'. Partition values for sink connectors need to be integers."},
		{`[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"off":1}}]`, "The offset for a sink connector should either be null or contain the key 'kafka_offset'"},
		{`[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":5.0}}]`, "Failed to parse the following Kafka offset value in the provided offsets: '5.0'. Offset values for sink connectors need to be integers."},
		{`[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":null}}]`, "Failed to parse the following Kafka offset value in the provided offsets: 'null'. Offset values for sink connectors need to be integers."},
		{`[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":true}}]`, "Failed to parse the following Kafka offset value in the provided offsets: 'true'. Offset values for sink connectors need to be integers."},
		{`[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":-1}}]`, "Offset values for sink connectors must not be negative: '-1'"},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			_, err := Sink(entries(t, tt.body))
			if got := msg(err); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
	// A negative offset is reported after every entry parsed: a later
	// parse error wins, and only then is the negative offset refused.
	if _, err := Sink(entries(t, `[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":-1}},{"partition":{"kafka_topic":"t","kafka_partition":"x"},"offset":null}]`)); msg(err) != "Failed to parse the following Kafka partition value in the provided offsets: 'x'. Partition values for sink connectors need to be integers." {
		t.Fatalf("negative then unparsable: got %v", err)
	}
	got, err := Sink(entries(t, `[{"partition":{"kafka_topic":7,"kafka_partition":"+2"},"offset":{"kafka_offset":"10"}}]`))
	if err != nil || got[0].Topic != "7" || got[0].Partition != 2 || *got[0].Offset != 10 {
		t.Fatalf("got %+v %v", got, err)
	}
}

func TestCollapseLastWins(t *testing.T) {
	got := Collapse(entries(t, `[{"partition":{"a":1},"offset":{"o":1}},{"partition":{"b":1},"offset":null},{"partition":{"a":1},"offset":{"o":2}}]`))
	if len(got) != 2 || got[0].Offset["o"].(json.Number) != "2" {
		t.Fatalf("got %+v", got)
	}
}

func TestSinkPartitions(t *testing.T) {
	counts := map[string]int{"one": 1, "three": 3}
	tests := []struct {
		name    string
		offsets []SinkOffset
		want    string
	}{
		{"existing partitions", []SinkOffset{{Topic: "one", Partition: 0}, {Topic: "three", Partition: 2}}, ""},
		{"negative", []SinkOffset{{Topic: "one", Partition: -1}}, "Cannot alter the offset of partition -1 of topic 'one': partition numbers must not be negative"},
		{"past the last", []SinkOffset{{Topic: "three", Partition: 3}}, "Cannot alter the offset of partition 3 of topic 'three': the topic has 3 partition(s)"},
		{"empty topic", []SinkOffset{{Topic: "", Partition: 0}}, "Cannot alter the offset of partition 0 of topic '': a topic name must not be empty"},
		{"unknown topic", []SinkOffset{{Topic: "nope", Partition: 0}}, "Cannot alter the offset of partition 0 of topic 'nope': the topic does not exist"},
		{"first bad entry wins", []SinkOffset{{Topic: "one", Partition: 0}, {Topic: "nope", Partition: 0}, {Topic: "one", Partition: 5}},
			"Cannot alter the offset of partition 0 of topic 'nope': the topic does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := msg(SinkPartitions(tt.offsets, counts)); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
	if got := SinkTopics([]SinkOffset{{Topic: "b"}, {Topic: ""}, {Topic: "a"}, {Topic: "b"}}); len(got) != 2 || got[0] != "b" || got[1] != "a" {
		t.Fatalf("SinkTopics: got %q, want [b a]", got)
	}
}
