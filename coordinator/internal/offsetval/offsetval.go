// Package offsetval validates the offsets of a PATCH …/offsets (or create
// with initial_offsets) request, with Kafka Connect's rules and messages
// (spec §5.3, §5.4) and Sluice's stricter answers (spec §0): every rejection
// is a 400 naming what was wrong. Numbers arrive as json.Number, so their
// JSON form decides what they are, as Jackson's binding does upstream.
package offsetval

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/shared/records"
)

// Collapse keys entries by partition, the last entry for a partition
// winning, and keeps first-seen order.
func Collapse(entries []api.ConnectorOffset) []api.ConnectorOffset {
	index := map[string]int{}
	var out []api.ConnectorOffset
	for _, e := range entries {
		id := "null"
		if e.Partition != nil {
			id = records.PartitionID(e.Partition)
		}
		if i, ok := index[id]; ok {
			out[i] = e
			continue
		}
		index[id] = len(out)
		out = append(out, e)
	}
	return out
}

// Source checks source offsets: partitions must not be null and every value
// must be null or a primitive (string, boolean, or a number that fits a
// long or a double).
func Source(entries []api.ConnectorOffset) error {
	for _, e := range entries {
		if e.Partition == nil {
			return api.Errorf(api.CodeBadRequest, "The partition for a source connector offset cannot be null")
		}
		if err := primitives(e.Partition); err != nil {
			return err
		}
		if err := primitives(e.Offset); err != nil {
			return err
		}
	}
	return nil
}

func primitives(m map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		kind := ""
		switch v := m[k].(type) {
		case map[string]any:
			kind = "MAP"
		case []any:
			kind = "ARRAY"
		case json.Number:
			if isBigInteger(v) {
				kind = "class java.math.BigInteger"
			}
		}
		if kind != "" {
			return api.Errorf(api.CodeBadRequest, "Offsets may only contain primitive types as values, but field %s contains %s", k, kind)
		}
	}
	return nil
}

// isBigInteger reports whether an integer literal does not fit in 64 bits,
// which Jackson binds to BigInteger.
func isBigInteger(n json.Number) bool {
	s := n.String()
	if strings.ContainsAny(s, ".eE") {
		return false
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return err != nil
}

// SinkOffset is a parsed sink offset entry.
type SinkOffset struct {
	Topic     string
	Partition int32
	// Offset is nil to delete the partition's committed offset.
	Offset *int64
}

// Sink parses sink offsets with Kafka Connect's checks, in its order. A
// negative offset, which Kafka Connect's parser lets through (to fail later
// with a 500), is Sluice's 400 (spec §0); it is reported only once every
// entry parsed, so a malformed entry anywhere wins, as upstream.
func Sink(entries []api.ConnectorOffset) ([]SinkOffset, error) {
	out := make([]SinkOffset, 0, len(entries))
	var negative error
	for _, e := range entries {
		p := e.Partition
		if p == nil {
			return nil, api.Errorf(api.CodeBadRequest, "The partition for a sink connector offset cannot be null or missing")
		}
		topic, hasTopic := p["kafka_topic"]
		part, hasPart := p["kafka_partition"]
		if !hasTopic || !hasPart {
			return nil, api.Errorf(api.CodeBadRequest, "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'")
		}
		if topic == nil {
			return nil, api.Errorf(api.CodeBadRequest, "Kafka topic names must be valid strings and may not be null")
		}
		if part == nil {
			return nil, api.Errorf(api.CodeBadRequest, "Kafka partitions must be valid numbers and may not be null")
		}
		pn, err := parseJavaInt(javaString(part), 32)
		if err != nil {
			return nil, api.Errorf(api.CodeBadRequest, "Failed to parse the following Kafka partition value in the provided offsets: '%s'. Partition values for sink connectors need to be integers.", javaString(part))
		}
		so := SinkOffset{Topic: javaString(topic), Partition: int32(pn)}
		if e.Offset != nil {
			off, ok := e.Offset["kafka_offset"]
			if !ok {
				return nil, api.Errorf(api.CodeBadRequest, "The offset for a sink connector should either be null or contain the key 'kafka_offset'")
			}
			n, err := parseJavaInt(javaString(off), 64)
			if err != nil {
				return nil, api.Errorf(api.CodeBadRequest, "Failed to parse the following Kafka offset value in the provided offsets: '%s'. Offset values for sink connectors need to be integers.", javaString(off))
			}
			if n < 0 && negative == nil {
				negative = api.Errorf(api.CodeBadRequest, "Offset values for sink connectors must not be negative: '%s'", javaString(off))
			}
			so.Offset = &n
		}
		out = append(out, so)
	}
	if negative != nil {
		return nil, negative
	}
	return out, nil
}

// parseJavaInt parses like Integer.parseInt / Long.parseLong: an optional
// sign and decimal digits, nothing else.
func parseJavaInt(s string, bits int) (int64, error) {
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, fmt.Errorf("not an integer: %q", s)
	}
	return strconv.ParseInt(strings.TrimPrefix(s, "+"), 10, bits)
}

// javaString renders a decoded JSON value as Java's String.valueOf would
// render what Jackson bound it to.
func javaString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case json.Number:
		return javaNumber(x)
	case bool:
		return strconv.FormatBool(x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + javaString(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = javaString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// javaNumber renders a JSON number as Java prints the Integer, Long,
// BigInteger or Double that Jackson binds it to (5.0 stays 5.0, 1e2 is 100.0).
func javaNumber(n json.Number) string {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		if b, ok := new(big.Int).SetString(s, 10); ok {
			return b.String()
		}
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	if f == float64(int64(f)) && f < 1e7 && f > -1e7 {
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'G', -1, 64)
}

// ToConnect converts REST entries for a connector's OffsetAlterer hook.
func ToConnect(entries []api.ConnectorOffset) []connect.Offset {
	out := make([]connect.Offset, len(entries))
	for i, e := range entries {
		out[i] = connect.Offset{Partition: e.Partition, Offset: e.Offset}
	}
	return out
}

// SinkTopics lists the topics that offsets name, each once, in order, for
// the metadata lookup that SinkPartitions needs; an empty name is left out,
// as SinkPartitions refuses it without a lookup.
func SinkTopics(offsets []SinkOffset) []string {
	var out []string
	seen := map[string]bool{}
	for _, o := range offsets {
		if o.Topic != "" && !seen[o.Topic] {
			seen[o.Topic] = true
			out = append(out, o.Topic)
		}
	}
	return out
}

// SinkPartitions checks that every partition offsets names exists, given
// the partition count of each topic that exists (a topic missing from
// counts does not). Kafka would refuse such an entry only once an agent
// sent it, as a 500 that hides which one was wrong; this names it. The
// first bad entry wins.
func SinkPartitions(offsets []SinkOffset, counts map[string]int) error {
	for _, o := range offsets {
		bad := func(why string) error {
			return api.Errorf(api.CodeBadRequest, "Cannot alter the offset of partition %d of topic '%s': %s", o.Partition, o.Topic, why)
		}
		n, exists := counts[o.Topic]
		switch {
		case o.Topic == "":
			return bad("a topic name must not be empty")
		case o.Partition < 0:
			return bad("partition numbers must not be negative")
		case !exists:
			return bad("the topic does not exist")
		case int(o.Partition) >= n:
			return bad(fmt.Sprintf("the topic has %d partition(s)", n))
		}
	}
	return nil
}
