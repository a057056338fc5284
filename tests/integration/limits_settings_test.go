package integration

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestSettingBounds: every numeric setting of the built-in connectors, and
// tasks.max, has an upper bound, so that no config value can make the
// coordinator or an agent allocate without bound. A value beyond it is a
// per-field error of validate (200, error_count) and a 400 on create with
// Kafka's message; the bound itself is accepted.
func TestSettingBounds(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	gen := cfgOf("connector.class", classGenerator, "name", "v", "topic", "t")
	src := cfgOf("connector.class", classFileSource, "name", "v", "topic", "t", "file", "in.txt")
	snk := cfgOf("connector.class", classFileSink, "name", "v", "topics", "t", "file", "out.txt")
	over := func(value, key, bound string) string {
		return "Invalid value " + value + " for configuration " + key + ": Value must be no more than " + bound
	}
	tests := []struct {
		name, plugin string
		config       map[string]string
		field, err   string // err "": the value is accepted
	}{
		{"generator streams at the bound", "GeneratorSource", cfgWith(gen, "streams", "10000"), "streams", ""},
		{"generator streams", "GeneratorSource", cfgWith(gen, "streams", "2147483647"), "streams", over("2147483647", "streams", "10000")},
		{"generator streams one over", "GeneratorSource", cfgWith(gen, "streams", "10001"), "streams", over("10001", "streams", "10000")},
		{"generator record.bytes at the bound", "GeneratorSource", cfgWith(gen, "record.bytes", "1048576"), "record.bytes", ""},
		{"generator record.bytes", "GeneratorSource", cfgWith(gen, "record.bytes", "50000000"), "record.bytes", over("50000000", "record.bytes", "1048576")},
		{"generator rate at the bound", "GeneratorSource", cfgWith(gen, "rate", "1000000000"), "rate", ""},
		{"generator rate", "GeneratorSource", cfgWith(gen, "rate", "2147483647"), "rate", over("2147483647", "rate", "1000000000")},
		{"file source batch.size at the bound", "FileStreamSource", cfgWith(src, "batch.size", "100000"), "batch.size", ""},
		{"file source batch.size", "FileStreamSource", cfgWith(src, "batch.size", "2147483647"), "batch.size", over("2147483647", "batch.size", "100000")},
		{"tasks.max at the bound", "FileStreamSink", cfgWith(snk, "tasks.max", "10000"), "tasks.max", ""},
		{"tasks.max of a sink", "FileStreamSink", cfgWith(snk, "tasks.max", "2147483647"), "tasks.max", over("2147483647", "tasks.max", "10000")},
		{"tasks.max of a source", "GeneratorSource", cfgWith(gen, "tasks.max", "10001"), "tasks.max", over("10001", "tasks.max", "10000")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := validateConfig(c, tt.plugin, tt.config)
			errs := got.Errors[tt.field]
			want := []string{}
			if tt.err != "" {
				want = []string{tt.err}
			}
			if !slices.Equal(errs, want) && !(len(errs) == 0 && len(want) == 0) || got.ErrorCount != len(want) {
				t.Fatalf("validate: error_count %d, errors of %s %q, want %q", got.ErrorCount, tt.field, errs, want)
			}
			if tt.err != "" {
				cfg := cfgWith(tt.config, "name", "bounded")
				wantError(t, c.Do("POST", "/connectors", map[string]any{"name": "bounded", "config": cfg}),
					http.StatusBadRequest, validationMessage(tt.err))
			}
		})
	}
}

// TestGeneratorLargeRecordsBounded: a generator at its largest records and
// a high rate produces them — polls are cut by bytes, not only by count —
// and its records arrive whole.
func TestGeneratorLargeRecordsBounded(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic := c.Name("large")
	name := "large"
	mustCreate(c, name, cfgOf("connector.class", classGenerator, "topic", topic, "rate", "1000000",
		"record.bytes", "900000", "count", "20", "streams", "2"), "")
	c.WaitState(name, "RUNNING", 1, "RUNNING")
	sluicetest.Eventually(t, time.Minute, func() (bool, string) {
		recs := c.ReadTopic(topic)
		for _, r := range recs {
			if len(r.Value) != 900000 {
				return true, ""
			}
		}
		return len(recs) == 40, "records so far: " + itoa10(len(recs))
	})
	for _, r := range c.ReadTopic(topic) {
		if len(r.Value) != 900000 {
			t.Fatalf("record of %d bytes, want 900000", len(r.Value))
		}
	}
}
