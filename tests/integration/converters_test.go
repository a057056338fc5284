package integration

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/sluicetest"
)

// jsonString is the JSON text of s as JsonConverter writes it (s holds no
// characters that need escaping beyond quotes).
func jsonString(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// TestConvertersSource checks the bytes a source writes under each
// converter, set per connector as in Kafka Connect.
func TestConvertersSource(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	value := func(seq int) string { return fmt.Sprintf(`{"stream":0,"seq":%d,"payload":""}`, seq) }
	envelope := func(s string) string {
		return `{"schema":{"type":"string","optional":false},"payload":` + jsonString(s) + `}`
	}

	tests := []struct {
		name      string
		overrides []string
		key       func() string
		value     func(seq int) string
	}{
		{"worker default StringConverter", nil,
			func() string { return "0" }, value},
		{"StringConverter override", []string{"value.converter", classStringConverter},
			func() string { return "0" }, value},
		{"JsonConverter schemas.enable=false", []string{"value.converter", classJSONConverter, "value.converter.schemas.enable", "false"},
			func() string { return "0" }, func(seq int) string { return jsonString(value(seq)) }},
		{"JsonConverter schemas.enable=true", []string{"value.converter", classJSONConverter, "value.converter.schemas.enable", "true"},
			func() string { return "0" }, func(seq int) string { return envelope(value(seq)) }},
		{"JsonConverter schemas.enable by default", []string{"value.converter", "JsonConverter"},
			func() string { return "0" }, func(seq int) string { return envelope(value(seq)) }},
		{"JsonConverter key", []string{"key.converter", classJSONConverter, "key.converter.schemas.enable", "false"},
			func() string { return `"0"` }, value},
		{"JsonConverter key with schema", []string{"key.converter", classJSONConverter},
			func() string { return envelope("0") }, value},
		// Sluice's ByteArrayConverter also carries string values, as UTF-8.
		{"ByteArrayConverter carries the string value", []string{"value.converter", classBytesConverter},
			func() string { return "0" }, value},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("conv-%d", i)
			topic := c.Name(name)
			cfg := generatorCfg(topic, append([]string{"count", "3", "record.bytes", "0", "rate", "1000"}, tt.overrides...)...)
			mustCreate(c, name, cfg, "")
			recs := waitRecords(c, topic, 3)
			if len(recs) != 3 {
				t.Fatalf("%d records, want 3", len(recs))
			}
			for i, r := range recs {
				if string(r.Key) != tt.key() || string(r.Value) != tt.value(i) {
					t.Errorf("record %d: key %s value %s\nwant key %s value %s", i, r.Key, r.Value, tt.key(), tt.value(i))
				}
			}
		})
	}
}

// TestConvertersSink checks what a sink reads through each converter from
// bytes produced to its topic.
func TestConvertersSink(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	tests := []struct {
		name      string
		overrides []string
		produced  []string
		lines     []string
	}{
		{"ByteArrayConverter passes bytes through", []string{"value.converter", classBytesConverter},
			[]string{"raw one", `{"not":"parsed"}`, "ünïcode ✓"},
			[]string{"raw one", `{"not":"parsed"}`, "ünïcode ✓"}},
		{"StringConverter", []string{"value.converter", classStringConverter},
			[]string{"a", "b c"}, []string{"a", "b c"}},
		{"JsonConverter schemas.enable=true", []string{"value.converter", classJSONConverter, "value.converter.schemas.enable", "true"},
			[]string{`{"schema":{"type":"string","optional":false},"payload":"hello"}`, `{"schema":{"type":"string","optional":true},"payload":"x y"}`},
			[]string{"hello", "x y"}},
		{"JsonConverter schemas.enable=false", []string{"value.converter", classJSONConverter, "value.converter.schemas.enable", "false"},
			[]string{`"hello"`, `"x y"`}, []string{"hello", "x y"}},
		// The sink writes what Kafka's FileStreamSink writes: Java's text
		// of the value (docs/connectors.md).
		{"structured values as Java prints them", []string{"value.converter", classJSONConverter, "value.converter.schemas.enable", "false"},
			[]string{`{"b":1,"a":[1,2.5,null]}`, `1e10`, `null`, `{"schema":{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp"},"payload":0}`},
			[]string{`{a=[1, 2.5, null], b=1}`, `1.0E10`, `null`, `{schema={name=org.apache.kafka.connect.data.Timestamp, optional=false, type=int64}, payload=0}`}},
		{"a Timestamp as java.util.Date prints it", []string{"value.converter", classJSONConverter},
			[]string{`{"schema":{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp"},"payload":1700000000123}`},
			[]string{"Tue Nov 14 22:13:20 UTC 2023"}},
		{"HoistField and InsertField make a Struct", []string{"value.converter", classStringConverter,
			"transforms", "hoist,src", "transforms.hoist.type", smt + "HoistField$Value", "transforms.hoist.field", "line",
			"transforms.src.type", smt + "InsertField$Value", "transforms.src.static.field", "src", "transforms.src.static.value", "bars"},
			[]string{"v0", "v1"}, []string{"Struct{line=v0,src=bars}", "Struct{line=v1,src=bars}"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := c.Name(fmt.Sprintf("sink-%d", i)) // a group unique on a shared Kafka
			topic := name
			c.Produce(topic, tt.produced...)
			mustCreate(c, name, cfgWith(fileSinkCfg(name+".txt", topic), tt.overrides...), "")
			waitFile(t, filepath.Join(c.WorkDir, name+".txt"), tt.lines)
		})
	}
}

// TestConvertersWorkerLevel checks a worker-level JsonConverter, which
// connectors inherit unless they override it.
func TestConvertersWorkerLevel(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, ValueConverter: classJSONConverter})
	topic := c.Name("worker-json")
	mustCreate(c, "json", generatorCfg(topic, "count", "1", "record.bytes", "0"), "")
	mustCreate(c, "plain", generatorCfg(c.Name("worker-plain"), "count", "1", "record.bytes", "0", "value.converter", classStringConverter), "")
	v := `{"stream":0,"seq":0,"payload":""}`
	if recs := waitRecords(c, topic, 1); string(recs[0].Value) != `{"schema":{"type":"string","optional":false},"payload":`+jsonString(v)+`}` {
		t.Errorf("worker-level JsonConverter wrote %s", recs[0].Value)
	}
	if recs := waitRecords(c, c.Name("worker-plain"), 1); string(recs[0].Value) != v {
		t.Errorf("StringConverter override wrote %s", recs[0].Value)
	}
}
