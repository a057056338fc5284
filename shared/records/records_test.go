package records

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestConfigRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		key   string
		value []byte
		want  ConfigRecord
	}{
		{"connector", ConnectorKey("my-conn"), EncodeProperties(map[string]string{"a": "b"}),
			ConfigRecord{Kind: KindConnector, Connector: "my-conn", Properties: map[string]string{"a": "b"}}},
		{"connector tombstone", ConnectorKey("c"), nil, ConfigRecord{Kind: KindConnector, Connector: "c", Tombstone: true}},
		{"target stopped", TargetStateKey("c"), EncodeTargetState(TargetStopped), ConfigRecord{Kind: KindTargetState, Connector: "c", TargetState: TargetStopped}},
		{"target started", TargetStateKey("c"), EncodeTargetState(TargetStarted), ConfigRecord{Kind: KindTargetState, Connector: "c", TargetState: TargetStarted}},
		{"task with dashes", TaskKey("a-b-3", 12), EncodeProperties(map[string]string{"x": "y"}),
			ConfigRecord{Kind: KindTask, Connector: "a-b-3", Task: 12, Properties: map[string]string{"x": "y"}}},
		{"commit", CommitKey("c"), EncodeCommit(3), ConfigRecord{Kind: KindCommit, Connector: "c", Count: 3}},
		{"fencing", FencingKey("c"), EncodeFencing(2), ConfigRecord{Kind: KindFencing, Connector: "c", Count: 2}},
		{"logger level", LoggerKey("io.sluice.agent"), EncodeLoggerLevel("DEBUG"),
			ConfigRecord{Kind: KindLoggerLevel, Logger: "io.sluice.agent", Level: "DEBUG"}},
		{"logger level as Kafka Connect writes it", "logger-cluster-org.apache.kafka.connect", []byte(`{"level":"debug"}`),
			ConfigRecord{Kind: KindLoggerLevel, Logger: "org.apache.kafka.connect", Level: "debug"}},
		{"logger level tombstone", LoggerKey("root"), nil, ConfigRecord{Kind: KindLoggerLevel, Logger: "root", Tombstone: true}},
		{"unknown", "session-key", []byte(`{"key":"x"}`), ConfigRecord{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeConfig(tt.key, tt.value)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestConnectorPluginPin: a connector record keeps the plugin version its
// config resolved to beside Kafka Connect's "properties", which a reader
// of that field alone (Kafka Connect) sees unchanged.
func TestConnectorPluginPin(t *testing.T) {
	pin := &PluginPin{Class: "com.example.Src", Spec: "[1.0,2.0)", Version: "1.4.2", Java: true}
	val := EncodeConnectorConfig(map[string]string{"a": "b"}, pin)
	rec, err := DecodeConfig(ConnectorKey("c"), val)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rec.Plugin, pin) || rec.Properties["a"] != "b" {
		t.Fatalf("decoded %+v", rec)
	}
	var kafka struct {
		Properties map[string]string `json:"properties"`
	}
	if err := json.Unmarshal(val, &kafka); err != nil || !reflect.DeepEqual(kafka.Properties, map[string]string{"a": "b"}) {
		t.Fatalf("Kafka Connect's reading: %v %v", kafka, err)
	}
	rec, err = DecodeConfig(ConnectorKey("c"), EncodeConnectorConfig(nil, nil))
	if err != nil || rec.Plugin != nil || strings.Contains(string(EncodeConnectorConfig(nil, nil)), "sluice") {
		t.Fatalf("no pin: %+v %v", rec, err)
	}
}

func TestTargetStateWireFormat(t *testing.T) {
	// Kafka Connect's format: old workers read "state", which cannot say STOPPED.
	if got := string(EncodeTargetState(TargetStopped)); got != `{"state":"PAUSED","state.v2":"STOPPED"}` {
		t.Fatalf("got %s", got)
	}
	// A record written by an old worker has no state.v2.
	rec, err := DecodeConfig(TargetStateKey("c"), []byte(`{"state":"PAUSED"}`))
	if err != nil || rec.TargetState != TargetPaused {
		t.Fatalf("got %+v %v", rec, err)
	}
	if _, err := DecodeConfig(TargetStateKey("c"), []byte(`{"state":"BOGUS"}`)); err == nil {
		t.Fatal("want error for unknown state")
	}
}

// TestLoggerLevelRecords: Kafka Connect writes {"level":<string>}; a record
// without one, or with another type, is refused (and so skipped by readers).
func TestLoggerLevelRecords(t *testing.T) {
	if got := string(EncodeLoggerLevel("WARN")); got != `{"level":"WARN"}` {
		t.Fatalf("encoded %s", got)
	}
	for _, v := range []string{`{}`, `{"level":null}`, `{"level":5}`, `"DEBUG"`} {
		if _, err := DecodeConfig(LoggerKey("root"), []byte(v)); err == nil {
			t.Errorf("%s decoded without error", v)
		}
	}
}

func TestMalformedTaskKey(t *testing.T) {
	if _, err := DecodeConfig("task-nonumber", []byte(`{}`)); err == nil {
		t.Fatal("want error")
	}
}

func TestStatusRoundTrip(t *testing.T) {
	rec, err := DecodeStatus(TaskStatusKey("c-1", 4), EncodeStatus("FAILED", "boom", "agent-1", 7))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Kind != StatusTask || rec.Connector != "c-1" || rec.Task != 4 || rec.Status.State != "FAILED" ||
		*rec.Status.Trace != "boom" || rec.Status.WorkerID != "agent-1" || rec.Status.Generation != 7 {
		t.Fatalf("got %+v", rec)
	}
	if got := string(EncodeStatus("RUNNING", "", "w", 1)); got != `{"state":"RUNNING","trace":null,"worker_id":"w","generation":1}` {
		t.Fatalf("wire format: %s", got)
	}
	rec, err = DecodeStatus(TopicStatusKey("my:conn", "t.1"), EncodeTopicUse(TopicUse{Name: "t.1", Connector: "my:conn", DiscoverTimestamp: 5}))
	if err != nil || rec.Kind != StatusTopic || rec.Topic != "t.1" || rec.Connector != "my:conn" || rec.TopicUse.DiscoverTimestamp != 5 {
		t.Fatalf("topic record: %+v %v", rec, err)
	}
}

func TestOffsetKeyCanonical(t *testing.T) {
	key, err := EncodeOffsetKey("file-src", map[string]any{"z": json.Number("1"), "filename": "test.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if string(key) != `["file-src",{"filename":"test.txt","z":1}]` {
		t.Fatalf("got %s", key)
	}
	// Kafka Connect may write fields in another order: same partition id.
	name, p, ok := DecodeOffsetKey([]byte(`["file-src",{"z":1,"filename":"test.txt"}]`))
	if !ok || name != "file-src" {
		t.Fatalf("decode failed")
	}
	_, p2, _ := DecodeOffsetKey(key)
	if PartitionID(p) != PartitionID(p2) {
		t.Fatalf("ids differ: %s vs %s", PartitionID(p), PartitionID(p2))
	}
	for _, bad := range []string{`["c",null]`, `["c"]`, `{"a":1}`, `[1,{}]`, `not json`} {
		if _, _, ok := DecodeOffsetKey([]byte(bad)); ok {
			t.Errorf("%s: want not ok", bad)
		}
	}
}

func TestOffsetNumbersKeepForm(t *testing.T) {
	v, err := DecodeOffsetValue([]byte(`{"a":5.0,"b":5,"c":123456789012345678901234567890}`))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := EncodeOffsetValue(v)
	if string(out) != `{"a":5.0,"b":5,"c":123456789012345678901234567890}` {
		t.Fatalf("numbers changed: %s", out)
	}
	if b, _ := EncodeOffsetValue(nil); b != nil {
		t.Fatal("nil offset must be a tombstone")
	}
}

func TestEncodeStatusCutsLongTraces(t *testing.T) {
	long := strings.Repeat("é", MaxTraceBytes) // two bytes each: the cut falls inside a rune
	rec, err := DecodeStatus(TaskStatusKey("c", 0), EncodeStatus("FAILED", long, "agent-1", 3))
	if err != nil {
		t.Fatal(err)
	}
	trace := *rec.Status.Trace
	if len(trace) > MaxTraceBytes+64 || !strings.HasSuffix(trace, "(trace cut at 32 KiB)") || !utf8.ValidString(trace) {
		t.Fatalf("trace of %d bytes, ends %q", len(trace), trace[len(trace)-40:])
	}
}
