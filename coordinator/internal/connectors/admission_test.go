package connectors

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect/clientoverrides"
	"github.com/sluice-io/sluice/coordinator/internal/tenants"
)

// tenantsFile is two teams under strict tenancy.
const tenantsFile = `
strict: true
tenants:
  - name: team-a
    connectors: ["a-*"]
    topics: ["a.*"]
    groups: ["connect-a-*", "a-group"]
    kafka_principal: team-a
  - name: team-b
    connectors: ["b-*"]
    topics: ["b.*"]
    groups: ["connect-b-*"]
`

func withTenants(t *testing.T) func(*Config) {
	t.Helper()
	ts, err := tenants.Parse([]byte(tenantsFile))
	if err != nil {
		t.Fatal(err)
	}
	ts.Path = "/etc/sluice/tenants.yaml"
	return func(c *Config) { c.Tenants = ts }
}

func with(config map[string]string, kv ...string) map[string]string {
	for i := 0; i < len(kv); i += 2 {
		config[kv[i]] = kv[i+1]
	}
	return config
}

const jaas = `org.apache.kafka.common.security.plain.PlainLoginModule required username="%s" password="x";`

// TestAdmissionTenancy: what a connector may touch follows from its
// name's tenant — topics (a 400 naming the key), groups, principal and
// the strict default (403s).
func TestAdmissionTenancy(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, withTenants(t), func(c *Config) {
		c.Overrides, _ = clientoverrides.ParsePolicy(clientoverrides.PolicyAll, nil)
	})
	for _, tc := range []struct {
		name   string
		config map[string]string
		code   api.Code // 0: admitted
		msg    string   // the whole message, or a part of it after "…"
	}{
		{name: "a-src", config: sourceConfig("a.orders")},
		{name: "a-src", config: sourceConfig("b.orders"), code: api.CodeBadRequest, msg: "…Invalid value b.orders for configuration topic: the "},
		{name: "a-sink", config: sinkConfig("a.x,b.y"), code: api.CodeBadRequest, msg: "…Invalid value b.y for configuration topics: the "},
		{name: "a-sink", config: with(sinkConfig("a.x"), "errors.deadletterqueue.topic.name", "b.dlq"), code: api.CodeBadRequest,
			msg: "…Invalid value b.dlq for configuration errors.deadletterqueue.topic.name: the "},
		{name: "a-src", config: with(sourceConfig("a.x"), "offsets.storage.topic", "b.offsets"), code: api.CodeBadRequest,
			msg: "…Invalid value b.offsets for configuration offsets.storage.topic: the "},
		{name: "a-sink", config: sinkConfig("a.x")},
		{name: "a-sink", config: with(sinkConfig("a.x"), "consumer.override.group.id", "a-group")},
		{name: "a-sink", config: with(sinkConfig("a.x"), "consumer.override.group.id", "connect-b-sink"), code: api.CodeForbidden,
			msg: "…Connector a-sink may not use that group: the "},
		{name: "nobody", config: sourceConfig("a.x"), code: api.CodeForbidden,
			msg: "Connector nobody belongs to no tenant: its name matches no tenant's connector patterns (/etc/sluice/tenants.yaml), and tenancy is strict, so it may touch nothing"},
		{name: "a-src", config: with(sourceConfig("a.x"), "producer.override.sasl.jaas.config", strings.Replace(jaas, "%s", "team-b", 1), "producer.override.sasl.mechanism", "PLAIN",
			"offsets.storage.topic", "a.offsets"), code: api.CodeForbidden,
			msg: "Connector a-src may not authenticate as that user (producer.override.sasl.jaas.config): the SASL user 'team-b' is not tenant team-a's Kafka principal (team-a)"},
		{name: "a-src", config: with(sourceConfig("a.x"), "producer.override.sasl.jaas.config", strings.Replace(jaas, "%s", "team-a", 1), "producer.override.sasl.mechanism", "PLAIN",
			"offsets.storage.topic", "a.offsets")},
		// A source authenticating as its own principal needs its own offsets topic.
		{name: "a-src", config: with(sourceConfig("a.x"), "producer.override.sasl.jaas.config", strings.Replace(jaas, "%s", "team-a", 1), "producer.override.sasl.mechanism", "PLAIN"),
			code: api.CodeBadRequest, msg: "…A source that authenticates as its own principal (producer.override.sasl.jaas.config, user team-a) needs an offsets.storage.topic of its own"},
	} {
		config := with(tc.config, "name", tc.name)
		err := f.s.Admission().Validate(ctx, config)
		if tc.code == 0 {
			if err != nil {
				t.Errorf("%s %v: refused: %v", tc.name, tc.config, err)
			}
			continue
		}
		checkRefusal(t, err, tc.code, tc.msg)
	}
}

// checkRefusal fails t unless err is code with msg: whole, or, after a
// leading "…", contained.
func checkRefusal(t *testing.T, err error, code api.Code, msg string) {
	t.Helper()
	if err == nil {
		t.Errorf("admitted, want %d %q", code, msg)
		return
	}
	e := api.AsError(err)
	part, found := strings.CutPrefix(msg, "…")
	if e.Code != code || !found && e.Message != msg || found && !strings.Contains(e.Message, part) {
		t.Errorf("refused %d %q, want %d %q", e.Code, e.Message, code, msg)
	}
}

// TestAdmissionReserved: the cluster's own topics and other connectors'
// offsets topics are no connector's data; an offsets topic is no other
// connector's data topic; a sink's group is its own.
func TestAdmissionReserved(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.create(t, "own", with(sourceConfig("data"), "offsets.storage.topic", "own-offsets"), "")
	f.create(t, "sink", sinkConfig("orders"), "")
	f.create(t, "grouped", with(sinkConfig("x"), "consumer.override.group.id", "shared"), "")
	for _, tc := range []struct {
		config map[string]string
		code   api.Code
		msg    string
	}{
		{config: sourceConfig("fresh")},
		{config: sourceConfig("sluice-configs"), code: api.CodeBadRequest, msg: "…Invalid value sluice-configs for configuration topic: the "},
		{config: sourceConfig("own-offsets"), code: api.CodeBadRequest, msg: "…Invalid value own-offsets for configuration topic: the "},
		{config: sinkConfig("__consumer_offsets"), code: api.CodeBadRequest, msg: "…Invalid value __consumer_offsets for configuration topics: the "},
		{config: with(sinkConfig("x"), "topics", "", "topics.regex", "sluice-.*"), code: api.CodeBadRequest,
			msg: "…it matches the reserved topic 'sluice-configs' (Sluice's config topic), which no connector may consume from; exclude it from the pattern"},
		{config: with(sourceConfig("y"), "offsets.storage.topic", "sluice-configs"), code: api.CodeBadRequest,
			msg: "…a connector's offsets go to the worker's offsets topic or a topic of its own"},
		{config: with(sourceConfig("y"), "offsets.storage.topic", "orders"), code: api.CodeBadRequest,
			msg: "…Invalid value orders for configuration offsets.storage.topic: connector sink uses the topic for its data (topics); an offsets topic must be no connector's data topic"},
		// Another connector's offsets topic may be shared (KIP-618).
		{config: with(sourceConfig("y"), "offsets.storage.topic", "own-offsets")},
		{config: with(sinkConfig("x"), "consumer.override.group.id", "shared"), code: api.CodeBadRequest,
			msg: "The consumer group 'shared' of connector 'new' is the consumer group of connector 'grouped': two connectors cannot share a group (one would move the other's committed offsets and take its partitions). Give it a group of its own (consumer.override.group.id)"},
		{config: with(sinkConfig("x"), "consumer.override.group.id", strings.Repeat("g", 32768)), code: api.CodeBadRequest,
			msg: "…is too long: 32768 bytes, and Kafka allows at most 32767"},
		// The default policy allows group.id, not the producer's acks.
		{config: with(sourceConfig("y"), "producer.override.acks", "1"), code: api.CodeBadRequest, msg: "…The 'Allowlist' policy does not allow 'acks' to be overridden in the connector configuration."},
	} {
		config := with(tc.config, "name", "new")
		err := f.s.Admission().Validate(ctx, config)
		if tc.code == 0 {
			if err != nil {
				t.Errorf("%v: refused: %v", tc.config, err)
			}
			continue
		}
		checkRefusal(t, err, tc.code, tc.msg)
	}
	// A connector's own offsets topic is reserved for the others, and the
	// reconciler and the offsets service read the same set.
	got := f.s.Admission().ReservedTopics(f.mem.Config.All())
	if got["own-offsets"] != "the offsets topic of connector own" || got["sluice-configs"] != "Sluice's config topic" {
		t.Errorf("reserved topics %v", got)
	}
}

// TestValidateConfigEndpoint: PUT …/config/validate answers errors in the
// body, a bad class as Kafka Connect's wrapped 500, and judges no tenant
// for a config without a name.
func TestValidateConfigEndpoint(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, withTenants(t))
	infos, err := f.s.Admission().ValidateConfig(ctx, "FileStreamSource", sourceConfig("sluice-configs"))
	if errs := keyErrors(infos, "topic"); err != nil || len(errs) != 1 {
		t.Errorf("reserved topic: %q %v", errs, err)
	}
	infos, err = f.s.Admission().ValidateConfig(ctx, "FileStreamSource", sourceConfig("b.orders"))
	if errs := keyErrors(infos, "topic"); err != nil || len(errs) != 0 {
		t.Errorf("a nameless config was judged by a tenant: %q %v", errs, err)
	}
	_, err = f.s.Admission().ValidateConfig(ctx, "NoSuch", map[string]string{"connector.class": "NoSuch"})
	if e := api.AsError(err); e.Code != api.CodeInternal || !strings.HasPrefix(e.Message, "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: ") {
		t.Errorf("bad class: %v", err)
	}
}

// keyErrors are the errors infos has on key.
func keyErrors(infos api.ConfigInfos, key string) []string {
	for _, c := range infos.Configs {
		if c.Value.Name == key {
			return c.Value.Errors
		}
	}
	return nil
}
