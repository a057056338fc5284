package converters_test

import (
	"testing"

	"github.com/sluice-io/sluice/connect/converters"
)

func BenchmarkJSONFromConnectDataDebezium(b *testing.B) {
	rec := debeziumRecord(b)
	for _, bc := range []struct {
		name  string
		props map[string]string
	}{
		{"schemas", nil},
		{"payload-only", map[string]string{"schemas.enable": "false"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := &converters.JSON{}
			if err := c.Configure(bc.props, false); err != nil {
				b.Fatal(err)
			}
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

func BenchmarkJSONToConnectDataDebezium(b *testing.B) {
	rec := debeziumRecord(b)
	c := &converters.JSON{}
	if err := c.Configure(nil, false); err != nil {
		b.Fatal(err)
	}
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
}
