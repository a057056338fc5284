package converters_test

import (
	"slices"
	"testing"

	"github.com/sluice-io/sluice/connect/converters"
)

// converterCases are the JsonConverter settings the Debezium benchmarks
// compare: the schema caches on (Kafka's default size) and off, and no
// schemas at all (the payload's share of the cost).
var converterCases = []struct {
	name  string
	props map[string]string
}{
	{"cached", nil},
	{"uncached", map[string]string{"schemas.cache.size": "0"}},
	{"payload-only", map[string]string{"schemas.enable": "false"}},
}

func configured(b *testing.B, props map[string]string) *converters.JSON {
	b.Helper()
	c := &converters.JSON{}
	if err := c.Configure(props, false); err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkJSONFromConnectDataDebezium writes the value of a Debezium
// insert event (a 4 KB envelope schema, a 0.7 KB payload).
func BenchmarkJSONFromConnectDataDebezium(b *testing.B) {
	rec := debeziumRecord(b)
	for _, bc := range converterCases {
		b.Run(bc.name, func(b *testing.B) {
			c := configured(b, bc.props)
			b.ReportAllocs()
			var n int
			for b.Loop() {
				out, err := c.FromConnectData(rec.Topic, rec.ValueSchema, rec.Value)
				if err != nil {
					b.Fatal(err)
				}
				n = len(out)
			}
			b.ReportMetric(float64(n), "bytes/record")
		})
	}
}

// BenchmarkJSONFromConnectDataDebeziumCopied writes it with a schema equal
// to the last one but not the same pointer, as a transformation that
// rebuilds the envelope's schema for each record hands it over.
func BenchmarkJSONFromConnectDataDebeziumCopied(b *testing.B) {
	rec := debeziumRecord(b)
	for _, bc := range converterCases[:2] {
		b.Run(bc.name, func(b *testing.B) {
			c := configured(b, bc.props)
			b.ReportAllocs()
			for b.Loop() {
				schema := *rec.ValueSchema
				schema.Fields = slices.Clone(schema.Fields)
				if _, err := c.FromConnectData(rec.Topic, &schema, rec.Value); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkJSONToConnectDataDebezium reads it back, as a sink does.
func BenchmarkJSONToConnectDataDebezium(b *testing.B) {
	rec := debeziumRecord(b)
	for _, bc := range converterCases {
		b.Run(bc.name, func(b *testing.B) {
			c := configured(b, bc.props)
			data, err := c.FromConnectData(rec.Topic, rec.ValueSchema, rec.Value)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := c.ToConnectData(rec.Topic, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
