package records

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// EncodeOffsetKey encodes an offsets-topic key: ["<connector>",{partition}].
// Map fields are written in sorted order and numbers keep their JSON text,
// so one partition always encodes to the same bytes when Sluice writes it.
func EncodeOffsetKey(connector string, partition map[string]any) ([]byte, error) {
	b, err := json.Marshal([]any{connector, partition})
	if err != nil {
		return nil, fmt.Errorf("encode offset key for %s: %w", connector, err)
	}
	return b, nil
}

// DecodeOffsetKey decodes an offsets-topic key. ok is false for keys that
// are not a [name, map] pair (Kafka Connect ignores those too), including
// keys whose partition is null.
func DecodeOffsetKey(key []byte) (connector string, partition map[string]any, ok bool) {
	var parts []json.RawMessage
	if err := unmarshalNumbers(key, &parts); err != nil || len(parts) != 2 {
		return "", nil, false
	}
	if err := json.Unmarshal(parts[0], &connector); err != nil {
		return "", nil, false
	}
	if err := unmarshalNumbers(parts[1], &partition); err != nil || partition == nil {
		return "", nil, false
	}
	return connector, partition, true
}

// EncodeOffsetValue encodes an offset map; nil encodes as a tombstone (nil).
func EncodeOffsetValue(offset map[string]any) ([]byte, error) {
	if offset == nil {
		return nil, nil
	}
	b, err := json.Marshal(offset)
	if err != nil {
		return nil, fmt.Errorf("encode offset value: %w", err)
	}
	return b, nil
}

// DecodeOffsetValue decodes an offset map, keeping numbers as json.Number.
// A nil value (tombstone) decodes as nil.
func DecodeOffsetValue(value []byte) (map[string]any, error) {
	if value == nil {
		return nil, nil
	}
	var m map[string]any
	if err := unmarshalNumbers(value, &m); err != nil {
		return nil, fmt.Errorf("decode offset value: %w", err)
	}
	return m, nil
}

// PartitionID is a partition's identity: its decoded value re-encoded
// canonically. Kafka Connect writes map fields in hash order, so two
// different key byte strings can name the same partition; Sluice compares
// partitions by this id instead of by bytes.
func PartitionID(partition map[string]any) string {
	b, err := json.Marshal(partition)
	if err != nil {
		return fmt.Sprintf("%v", partition)
	}
	return string(b)
}

func unmarshalNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after JSON value")
	}
	return nil
}
