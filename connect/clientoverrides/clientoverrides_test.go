package clientoverrides

import (
	"reflect"
	"strings"
	"testing"
)

func TestParsePolicy(t *testing.T) {
	for _, tc := range []struct {
		name      string
		allowlist []string
		err       string
	}{
		{"all", nil, ""}, {"None", nil, ""}, {"ALLOWLIST", []string{"linger.ms"}, ""}, {"Allowlist", nil, ""}, {"principal", nil, ""},
		{"Everything", nil, `unknown client config override policy "Everything"`},
		{"All", []string{"x"}, "the All policy takes none"},
	} {
		_, err := ParsePolicy(tc.name, tc.allowlist)
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s %v: %v, want %q", tc.name, tc.allowlist, err, tc.err)
		}
	}
}

// TestCheck: each policy's refusals carry Kafka Connect's message; the
// framework's keys are refused under every policy, All included; a key
// Sluice's clients do not apply is refused rather than ignored.
func TestCheck(t *testing.T) {
	config := map[string]string{
		"consumer.override.group.id":          "connect-x",
		"producer.override.linger.ms":         "10",
		"producer.override.transactional.id":  "sluice-leader",
		"consumer.override.group.instance.id": "connect-team-b-1-0",
		"producer.override.max.block.ms":      "5",
		"admin.override.bootstrap.servers":    "elsewhere:9092",
		"producer.override.":                  "empty name: not an override",
		"consumer.override.sasl.jaas.config":  "x",
		"connector.class":                     "FileStreamSink",
	}
	policy := func(name string, list ...string) Policy {
		p, err := ParsePolicy(name, list)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	all := policy("All").Check(config, false)
	want := map[string]string{
		"producer.override.transactional.id":  "producer.override.transactional.id cannot be overridden, under any policy: Sluice sets transactional.id itself; a transactional id a connector chose could fence another connector's task or the leader",
		"consumer.override.group.instance.id": "consumer.override.group.instance.id cannot be overridden, under any policy: Sluice gives each sink task its static member id; one a connector chose could fence another connector's task",
		"producer.override.max.block.ms":      "producer.override.max.block.ms is not a setting Sluice's producer client applies; it applies acks, batch.size, compression.type, delivery.timeout.ms, linger.ms, request.timeout.ms",
		"admin.override.bootstrap.servers":    "admin.override.bootstrap.servers is not a setting Sluice's admin client applies; it applies none",
		"consumer.override.sasl.jaas.config":  "consumer.override.sasl.jaas.config is not a setting Sluice's consumer client applies; it applies auto.offset.reset, fetch.max.bytes, fetch.max.wait.ms, fetch.min.bytes, group.id, heartbeat.interval.ms, max.partition.fetch.bytes, session.timeout.ms",
	}
	if !reflect.DeepEqual(all, want) {
		t.Errorf("All:\n got %v\nwant %v", all, want)
	}
	allow := policy("Allowlist", DefaultAllowlist...).Check(config, false)
	if allow["producer.override.linger.ms"] != "The 'Allowlist' policy does not allow 'linger.ms' to be overridden in the connector configuration." ||
		allow["consumer.override.group.id"] != "" {
		t.Errorf("Allowlist: %v", allow)
	}
	if none := policy("None").Check(config, false); none["consumer.override.group.id"] != "The 'None' policy does not allow 'group.id' to be overridden in the connector configuration." {
		t.Errorf("None: %v", none)
	}
	if p := policy("Principal").Check(config, false); p["consumer.override.sasl.jaas.config"] == "" || strings.Contains(p["consumer.override.sasl.jaas.config"], "policy does not allow") ||
		!strings.Contains(p["consumer.override.group.id"], "The 'Principal' policy does not allow 'group.id'") {
		t.Errorf("Principal: %v", p)
	}
	if got := policy("All").Check(map[string]string{"consumer.override.isolation.level": "read_uncommitted"}, false); got["consumer.override.isolation.level"] == "" {
		t.Error("a sink reading uncommitted records")
	}
}

func TestOpts(t *testing.T) {
	opts, err := Opts(map[string]string{"producer.override.linger.ms": "10", "producer.override.compression.type": "zstd", "producer.override.acks": "1",
		"consumer.override.session.timeout.ms": "9000"}, Producer, false)
	if err != nil || len(opts) != 4 { // acks=1 also turns idempotence off
		t.Errorf("producer: %d options, %v", len(opts), err)
	}
	for config, want := range map[string]string{
		"producer.override.transactional.id": "cannot be overridden",
		"producer.override.max.block.ms":     "is not a setting Sluice's producer client applies",
		"producer.override.linger.ms":        "Invalid value -5 for configuration producer.override.linger.ms: must be a positive whole number",
	} {
		value := "x"
		if strings.HasSuffix(config, "linger.ms") {
			value = "-5"
		}
		if _, err := Opts(map[string]string{config: value}, Producer, false); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", config, err, want)
		}
	}
	if _, err := Opts(map[string]string{"producer.override.acks": "1"}, Producer, true); err == nil {
		t.Error("acks=1 under exactly-once")
	}
	if got := CheckValues(map[string]string{"consumer.override.auto.offset.reset": "none", "producer.override.acks": "all"}); len(got) != 1 ||
		got["consumer.override.auto.offset.reset"] != "Invalid value none for configuration consumer.override.auto.offset.reset: must be earliest or latest" {
		t.Errorf("CheckValues: %v", got)
	}
}
