// Package cdccompare compares the records of change data capture
// connectors as Kafka Connect's JsonConverter writes them: Debezium's
// PostgreSQL connector against the golden files of its real output
// (connect/postgres/testdata/debezium), and Sluice's native connector
// against Debezium run live on the same changes.
//
// Records are normalized before they are compared (Normalizer): the names a
// run chose for itself (topic prefix, database) become the golden ones, and
// the values that cannot match between two runs — processing timestamps,
// the connector's version, WAL positions, transaction ids — are masked with
// a placeholder of the same JSON type, so their presence and type are still
// compared. docs/cdc-postgres-compat.md lists what is masked and why.
package cdccompare

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Record is one Kafka record: its topic, its key and value as the JSON the
// converter wrote (null for a missing key or a tombstone's value), and its
// headers in order. It is one line of a golden file.
type Record struct {
	Topic   string          `json:"topic"`
	Key     json.RawMessage `json:"key"`
	Value   json.RawMessage `json:"value"`
	Headers []Header        `json:"headers"`
}

// Header is one Kafka record header; a value that is not UTF-8 text is
// kept as its JSON string form (Go's, with replacement characters) only in
// a golden file, so headers are meant for the text headers connectors
// write.
type Header struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// decodeJSON parses raw keeping every number's text (json.Number), so a
// 64-bit integer or a double's exact spelling survives a round trip; empty
// input is JSON null.
func decodeJSON(raw []byte) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

// encodeJSON writes v compactly with object keys sorted and without Go's
// HTML escaping (JsonConverter writes <, > and & as they are).
func encodeJSON(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// MarshalLine is r as one golden-file line (no newline).
func (r Record) MarshalLine() ([]byte, error) {
	line := struct {
		Topic   string          `json:"topic"`
		Key     json.RawMessage `json:"key"`
		Value   json.RawMessage `json:"value"`
		Headers []Header        `json:"headers"`
	}{r.Topic, orNull(r.Key), orNull(r.Value), r.Headers}
	if line.Headers == nil {
		line.Headers = []Header{}
	}
	out, err := encodeJSON(line)
	if err != nil {
		return nil, fmt.Errorf("record of %s: %w", r.Topic, err)
	}
	return out, nil
}

// orNull is raw, or JSON null when raw is empty.
func orNull(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("null")
	}
	return raw
}
