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
		{"All", []string{"x"}, ""}, // ignored, as Kafka Connect ignores it
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
		"producer.override.max.block.ms":      "producer.override.max.block.ms is not a setting Sluice's producer client applies; it applies acks, batch.size, compression.type, delivery.timeout.ms, linger.ms, request.timeout.ms, sasl.jaas.config, sasl.mechanism, security.protocol",
		"admin.override.bootstrap.servers":    "admin.override.bootstrap.servers is not a setting Sluice's admin client applies; it applies none",
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
	if p := policy("Principal").Check(config, false); p["consumer.override.sasl.jaas.config"] != "" ||
		!strings.Contains(p["consumer.override.group.id"], "The 'Principal' policy does not allow 'group.id'") {
		t.Errorf("Principal: %v", p)
	}
	if got := policy("All").Check(map[string]string{"consumer.override.isolation.level": "read_uncommitted"}, false); got["consumer.override.isolation.level"] == "" {
		t.Error("a sink reading uncommitted records")
	}
}

func TestOpts(t *testing.T) {
	opts, ignored, err := Opts(map[string]string{"producer.override.linger.ms": "10", "producer.override.compression.type": "zstd", "producer.override.acks": "1",
		"consumer.override.session.timeout.ms": "9000"}, Producer, false)
	if err != nil || len(opts) != 4 || ignored != nil { // acks=1 also turns idempotence off
		t.Errorf("producer: %d options, ignored %v, %v", len(opts), ignored, err)
	}
	// A stored config from before the policy: what Sluice cannot apply is
	// left out (the task logs it), what the framework owns fails the task,
	// unless it asks for what the framework sets anyway.
	_, ignored, err = Opts(map[string]string{"consumer.override.max.poll.records": "10", "consumer.override.auto.offset.reset": "none",
		"consumer.override.isolation.level": "read_committed", "consumer.override.enable.auto.commit": "false"}, Consumer, false)
	if err != nil || strings.Join(ignored, ",") != "consumer.override.auto.offset.reset,consumer.override.max.poll.records" {
		t.Errorf("a stored config: ignored %v, %v", ignored, err)
	}
	if _, _, err := Opts(map[string]string{"producer.override.transactional.id": "x"}, Producer, false); err == nil || !strings.Contains(err.Error(), "cannot be overridden") {
		t.Errorf("transactional.id: %v", err)
	}
	if _, _, err := Opts(map[string]string{"producer.override.acks": "1"}, Producer, true); err == nil {
		t.Error("acks=1 under exactly-once")
	}
	if got := (Policy{name: PolicyAll}).Check(map[string]string{"consumer.override.isolation.level": "READ_COMMITTED"}, false); len(got) != 0 {
		t.Errorf("an override asking for what the framework sets: %v", got)
	}
	if got := CheckValues(map[string]string{"consumer.override.auto.offset.reset": "none", "producer.override.acks": "all"}); len(got) != 1 ||
		got["consumer.override.auto.offset.reset"] != "Invalid value none for configuration consumer.override.auto.offset.reset: must be earliest or latest" {
		t.Errorf("CheckValues: %v", got)
	}
}

// TestClientCredentials: a client's sasl.jaas.config and sasl.mechanism
// make its credentials; a bad one is refused without its value.
func TestClientCredentials(t *testing.T) {
	jaas := `org.apache.kafka.common.security.scram.ScramLoginModule required username="team-a" password="pw-of-team-a";`
	cr, err := ClientCredentials(map[string]string{"consumer.override.sasl.jaas.config": jaas, "consumer.override.sasl.mechanism": "SCRAM-SHA-512",
		"consumer.override.security.protocol": "sasl_ssl"}, Consumer)
	if err != nil || cr == nil || cr.User != "team-a" || cr.Protocol != "SASL_SSL" || cr.Mechanism.Name() != "SCRAM-SHA-512" {
		t.Fatalf("%+v %v", cr, err)
	}
	if cr, err := ClientCredentials(map[string]string{"consumer.override.sasl.jaas.config": jaas}, Producer); cr != nil || err != nil {
		t.Errorf("the consumer's credentials are not the producer's: %+v %v", cr, err)
	}
	for config, want := range map[string]string{
		"producer.override.sasl.mechanism=PLAIN":     "producer.override.sasl.mechanism needs producer.override.sasl.jaas.config",
		"producer.override.security.protocol=SSL":    "",
		"producer.override.security.protocol=TLS":    "Invalid value TLS for configuration producer.override.security.protocol",
		"producer.override.sasl.jaas.config=" + jaas: "Invalid value [hidden] for configuration producer.override.sasl.jaas.config: sasl.mechanism \"\" is not supported",
	} {
		k, v, _ := strings.Cut(config, "=")
		_, err := ClientCredentials(map[string]string{k: v}, Producer)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", config, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "pw-of-team-a") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
	if got := CheckValues(map[string]string{"consumer.override.sasl.jaas.config": "junk with a password"}); !strings.Contains(got["consumer.override.sasl.jaas.config"], "[hidden]") ||
		strings.Contains(got["consumer.override.sasl.jaas.config"], "junk") {
		t.Errorf("CheckValues: %v", got)
	}
}
