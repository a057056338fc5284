package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/sluicetest"
)

// Attacks on tenant isolation through what a connector's config makes it
// touch, by an operator whose grant covers only team a's connectors: each
// one worked before Sluice checked topics and groups (a team-a source wrote
// a forged connector into the config topic, a team-a sink copied every
// config and the audit trail, a team-a sink moved team b's committed
// offsets); each is refused now.

// teamCluster starts a cluster with an auth file: tom may operate team a's
// connectors, ada is an admin. Requests go as tom.
func teamCluster(t *testing.T) (c *sluicetest.Cluster, tom, ada []string) {
	t.Helper()
	authFile := writeFile(t, t.TempDir(), "auth.yaml", []byte(fmt.Sprintf(`principals:
  - {name: tom, password_bcrypt: %q, grants: [{role: operator, connectors: ["team-a-*"]}, {role: viewer}]}
  - {name: ada, password_bcrypt: %q, grants: [{role: admin}]}
`, bcryptOf(t, "t"), bcryptOf(t, "a"))))
	c = sluicetest.Start(t, sluicetest.Options{Agents: 1, RESTSecurity: coordinator.RESTSecurity{AuthFile: authFile}})
	tom, ada = basicAuth("tom", "t"), basicAuth("ada", "a")
	c.Headers = tom
	return c, tom, ada
}

// reservedMsg is the create-time error on key naming a reserved topic.
func reservedMsg(key, topic, what string) string {
	return fmt.Sprintf("Invalid value %s for configuration %s: the topic '%s' is reserved (%s): no connector may produce to it or consume from it", topic, key, topic, what)
}

// invalidConfig is the 400 of a create whose config has these errors.
func invalidConfig(errs ...string) string {
	return fmt.Sprintf("Connector configuration is invalid and contains the following %d error(s):\n%s\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`",
		len(errs), strings.Join(errs, "\n"))
}

// TestTenantSourceCannotWriteSluiceTopics: attacks 1 and 2 — a team-a
// source whose topic is the config topic (to plant another team's
// connector) or the audit topic (to forge the trail) is refused at create,
// PUT and validate, naming the key and the topic. One that reaches the
// config topic through a RegexRouter is created (no config names the
// topic) but its task fails with a trace naming it, and nothing reaches
// the topic.
func TestTenantSourceCannotWriteSluiceTopics(t *testing.T) {
	t.Parallel()
	c, _, _ := teamCluster(t)
	name := "team-a-" + c.Name("forger")
	configs, audit := c.Prefix+"-configs", c.Prefix+"-audit"
	for topic, what := range map[string]string{configs: "Sluice's config topic", audit: "Sluice's audit topic",
		c.Prefix + "-status": "Sluice's status topic", c.Prefix + "-offsets": "Sluice's offsets topic",
		c.Prefix + "-fleet": "Sluice's fleet topic", c.Prefix + "-offsets-history": "Sluice's offsets history topic",
		"__consumer_offsets": "Kafka's consumer offsets topic", "__transaction_state": "Kafka's transaction state topic"} {
		r := c.Do("POST", "/connectors", map[string]any{"name": name, "config": generatorCfg(topic)})
		wantError(t, r, http.StatusBadRequest, invalidConfig(reservedMsg("topic", topic, what)))
	}
	// Debezium's heartbeat topic starts with "__" too, and stays usable.
	mustCreate(c, name, generatorCfg("__debezium-heartbeat.team-a"), "STOPPED")
	wantError(t, c.Do("PUT", "/connectors/"+name+"/config", generatorCfg(configs)), http.StatusBadRequest,
		invalidConfig(reservedMsg("topic", configs, "Sluice's config topic")))
	v := validateConfig(c, classGenerator, generatorCfg(configs))
	if errs := v.Errors["topic"]; len(errs) != 1 || errs[0] != reservedMsg("topic", configs, "Sluice's config topic") {
		t.Errorf("validate: errors of topic %v", v.Errors)
	}
	before := len(c.ReadTopic(configs))

	routed := "team-a-" + c.Name("router")
	mustCreate(c, routed, generatorCfg(c.Name("lines"), "transforms", "route",
		"transforms.route.type", smt+"RegexRouter", "transforms.route.regex", ".*", "transforms.route.replacement", configs), "")
	s := c.WaitState(routed, "RUNNING", 1, "FAILED")
	if want := "topic '" + configs + "' is reserved (Sluice's config topic)"; !strings.Contains(s.Tasks[0].Trace, want) {
		t.Errorf("trace %q, want it to say %q", s.Tasks[0].Trace, want)
	}
	for _, r := range c.ReadTopic(configs)[before:] {
		if !strings.HasPrefix(string(r.Key), "connector-") && !strings.HasPrefix(string(r.Key), "task-") &&
			!strings.HasPrefix(string(r.Key), "commit-") && !strings.HasPrefix(string(r.Key), "target-state-") {
			t.Errorf("a record no coordinator wrote reached the config topic: key %q value %q", r.Key, r.Value)
		}
		if strings.Contains(string(r.Key), "team-b") {
			t.Errorf("forged record %q", r.Key)
		}
	}

	// With errors.tolerance=all the records are skipped and the task runs on.
	tolerant := "team-a-" + c.Name("tolerant")
	mustCreate(c, tolerant, generatorCfg(c.Name("lines2"), "errors.tolerance", "all", "transforms", "route",
		"transforms.route.type", smt+"RegexRouter", "transforms.route.regex", ".*", "transforms.route.replacement", audit), "")
	c.WaitState(tolerant, "RUNNING", 1, "RUNNING")
	// RUNNING may be reported before the task's first record was refused.
	sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
		return len(c.Logged("a record for a topic the connector may not use was refused", audit)) > 0, "the refused records were not logged"
	})
}

// TestTenantSinkCannotReadSluiceTopics: attack 3 — a team-a sink whose
// topics.regex matches Sluice's topics (every team's configs, secrets
// typed into them, the audit trail, the config history) is refused, naming each topic it
// matches; so is one listing a reserved topic, or using one as its dead
// letter queue. A pattern that matches no reserved topic is taken.
func TestTenantSinkCannotReadSluiceTopics(t *testing.T) {
	t.Parallel()
	c, _, _ := teamCluster(t)
	name := "team-a-" + c.Name("copier")
	regex := c.Prefix + "-.*"
	var errs []string
	for _, topic := range []struct{ name, what string }{
		{c.Prefix + "-audit", "Sluice's audit topic"}, {c.Prefix + "-config-history", "Sluice's config history topic"}, {c.Prefix + "-configs", "Sluice's config topic"},
		{c.Prefix + "-fleet", "Sluice's fleet topic"}, {c.Prefix + "-liveness", "Sluice's liveness topic"}, {c.Prefix + "-offsets", "Sluice's offsets topic"},
		{c.Prefix + "-offsets-history", "Sluice's offsets history topic"}, {c.Prefix + "-status", "Sluice's status topic"},
	} {
		errs = append(errs, fmt.Sprintf("Invalid value %s for configuration topics.regex: it matches the reserved topic '%s' (%s), which no connector may consume from; exclude it from the pattern", regex, topic.name, topic.what))
	}
	sink := cfgOf("connector.class", "FileStreamSink", "file", "copy.txt", "topics.regex", regex)
	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": name, "config": sink}), http.StatusBadRequest, invalidConfig(errs...))
	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": name, "config": fileSinkCfg("copy.txt", "orders,"+c.Prefix+"-audit")}),
		http.StatusBadRequest, invalidConfig(reservedMsg("topics", c.Prefix+"-audit", "Sluice's audit topic")))
	dlq := cfgWith(fileSinkCfg("copy.txt", "orders"), "errors.tolerance", "all", "errors.deadletterqueue.topic.name", c.Prefix+"-configs")
	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": name, "config": dlq}),
		http.StatusBadRequest, invalidConfig(reservedMsg("errors.deadletterqueue.topic.name", c.Prefix+"-configs", "Sluice's config topic")))
	// Kafka's internal topics are never selected by a pattern: ".*"-like
	// patterns that match only them and data topics are fine.
	mustCreate(c, name, cfgOf("connector.class", "FileStreamSink", "file", "copy.txt", "topics.regex", "team-a-.*|__.*sets"), "STOPPED")
}

// TestTenantOffsetsTopicChecks: a source's own offsets topic may be no
// topic of the cluster's own, nor a topic another connector's data goes
// through; and a data topic may not be a connector's offsets topic.
func TestTenantOffsetsTopicChecks(t *testing.T) {
	t.Parallel()
	c, _, _ := teamCluster(t)
	src := "team-a-" + c.Name("src")
	cfg := generatorCfg(c.Name("data"), "offsets.storage.topic", c.Prefix+"-configs")
	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": src, "config": cfg}), http.StatusBadRequest,
		invalidConfig(fmt.Sprintf("Invalid value %s-configs for configuration offsets.storage.topic: the topic '%s-configs' is reserved (Sluice's config topic): no connector may produce to it or consume from it; a connector's offsets go to the worker's offsets topic or a topic of its own", c.Prefix, c.Prefix)))
	own := c.Name("team-a-positions")
	mustCreate(c, src, generatorCfg(c.Name("data"), "offsets.storage.topic", own), "STOPPED")
	other := "team-a-" + c.Name("other")
	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": other, "config": fileSinkCfg("x.txt", own)}), http.StatusBadRequest,
		invalidConfig(reservedMsg("topics", own, "the offsets topic of connector "+src)))
	// The other way round: an offsets topic that another connector reads.
	reader := "team-a-" + c.Name("reader")
	read := c.Name("read")
	mustCreate(c, reader, fileSinkCfg("y.txt", read), "STOPPED")
	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": "team-a-" + c.Name("src2"), "config": generatorCfg(c.Name("d2"), "offsets.storage.topic", read)}),
		http.StatusBadRequest, invalidConfig(fmt.Sprintf("Invalid value %s for configuration offsets.storage.topic: connector %s uses the topic for its data (topics); an offsets topic must be no connector's data topic", read, reader)))
}

// TestTenantSinkCannotTakeAnotherTeamsGroup: attack 4 — a team-a sink
// with consumer.override.group.id set to team b's group, with
// initial_offsets, moved team b's committed offsets (30 → 3) and, running,
// took team b's partitions. It is refused, with or without offsets, and
// team b's committed offsets stay where they were; the same holds the
// other way round (a connector whose own group an override holds).
func TestTenantSinkCannotTakeAnotherTeamsGroup(t *testing.T) {
	t.Parallel()
	c, tom, ada := teamCluster(t)
	topic := c.Name("orders")
	sluicetest.CreateTopic(t, c.Brokers, topic, 1)
	values := make([]string, 30)
	for i := range values {
		values[i] = fmt.Sprint(i)
	}
	c.Produce(topic, values...)
	victim := "team-b-" + c.Name("1")
	c.Headers = ada
	mustCreate(c, victim, fileSinkCfg("b.txt", topic), "")
	c.WaitState(victim, "RUNNING", 1, "RUNNING")
	group := "connect-" + victim
	want := fmt.Sprintf("%s-0=30", topic)
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		o := groupOffsets(c, group)
		return o == want, "team b committed " + o
	})
	c.Must(http.StatusNoContent, "PUT", "/connectors/"+victim+"/stop", nil)

	c.Headers = tom
	thief := "team-a-" + c.Name("thief")
	cfg := cfgWith(fileSinkCfg("a.txt", topic), "consumer.override.group.id", group)
	msg := fmt.Sprintf("The consumer group '%s' of connector '%s' is the consumer group of connector '%s': two connectors cannot share a group (one would move the other's committed offsets and take its partitions). Give it a group of its own (consumer.override.group.id)", group, thief, victim)
	offsets := []any{map[string]any{"partition": map[string]any{"kafka_topic": topic, "kafka_partition": 0}, "offset": map[string]any{"kafka_offset": 3}}}
	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": thief, "config": cfg, "initial_offsets": offsets}), http.StatusBadRequest, msg)
	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": thief, "config": cfg}), http.StatusBadRequest, msg)
	if o := groupOffsets(c, group); o != want {
		t.Errorf("team b's committed offsets moved to %s", o)
	}
	// A team-a sink that names a group no connector uses is taken; then a
	// connector whose own group that is cannot be created.
	free := "connect-team-a-" + c.Name("later")
	mustCreate(c, thief, cfgWith(fileSinkCfg("a.txt", topic), "consumer.override.group.id", free), "STOPPED")
	later := "team-a-" + c.Name("later")
	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": later, "config": fileSinkCfg("l.txt", topic)}), http.StatusBadRequest,
		fmt.Sprintf("The consumer group '%s' of connector '%s' is the consumer group of connector '%s': two connectors cannot share a group (one would move the other's committed offsets and take its partitions). Give it a group of its own (consumer.override.group.id)", free, later, thief))
	// Offsets of a reserved topic are refused too.
	c.Headers = ada
	wantError(t, c.Do("PATCH", "/connectors/"+victim+"/offsets", map[string]any{"offsets": []any{map[string]any{
		"partition": map[string]any{"kafka_topic": c.Prefix + "-audit", "kafka_partition": 0}, "offset": map[string]any{"kafka_offset": 0}}}}),
		http.StatusBadRequest, fmt.Sprintf("Invalid kafka_topic %s-audit in the offsets of connector %s: the topic '%s-audit' is reserved (Sluice's audit topic): no connector may produce to it or consume from it", c.Prefix, victim, c.Prefix))
}

// TestNamesTrimmedAsKafkaConnectTrimsThem: a name with control characters
// at either end is trimmed as Java's String.trim does — and the grants are
// checked against the trimmed name, the one created — while U+00A0 stays
// part of the name. Move trims its target alike.
func TestNamesTrimmedAsKafkaConnectTrimsThem(t *testing.T) {
	t.Parallel()
	c, _, ada := teamCluster(t)
	mine := "team-a-" + c.Name("ctl")
	r := c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": "\x01" + mine + "\x1f ", "config": generatorCfg(c.Name("t")), "initial_state": "STOPPED"})
	if !strings.Contains(string(r.Body), `"name":"`+mine+`"`) {
		t.Errorf("created %s, want the name %s", r.Body, mine)
	}
	theirs := "team-b-" + c.Name("ctl")
	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": "\x02" + theirs, "config": generatorCfg(c.Name("t"))}), http.StatusForbidden,
		fmt.Sprintf("User tom may not POST /connectors: the role operator for connector %s is needed, and tom has operator for connectors team-a-*; viewer", theirs))
	nbsp := "team-a-" + c.Name("nbsp") + "\u00a0"
	mustCreate(c, nbsp, generatorCfg(c.Name("t")), "STOPPED")
	c.Headers = ada
	// The audit record names the connector created, trimmed alike.
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		got := auditConnectors(c)
		return slices.Contains(got, mine), fmt.Sprint(got)
	})
	moved := "team-a-" + c.Name("moved")
	c.Must(http.StatusOK, "POST", "/sluice/connectors/"+mine+"/move", map[string]any{"to": "\t" + moved + "\x00"})
	c.Must(http.StatusOK, "GET", "/connectors/"+moved, nil)
}

// TestTenantAuditAndBulkAnswersAreScoped: an admin limited to team a's
// connectors reads team a's audit records only — not team b's configs, nor
// the records that name no connector, which only an admin of every
// connector reads — and a bulk action by a team operator that may not list
// team b's connectors does not name them in its 403s.
func TestTenantAuditAndBulkAnswersAreScoped(t *testing.T) {
	t.Parallel()
	authFile := writeFile(t, t.TempDir(), "auth.yaml", []byte(fmt.Sprintf(`principals:
  - {name: tom, password_bcrypt: %q, grants: [{role: operator, connectors: ["team-a-*"]}]}
  - {name: anna, password_bcrypt: %q, grants: [{role: admin, connectors: ["team-a-*"]}]}
  - {name: ada, password_bcrypt: %q, grants: [{role: admin}]}
`, bcryptOf(t, "t"), bcryptOf(t, "n"), bcryptOf(t, "a"))))
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, RESTSecurity: coordinator.RESTSecurity{AuthFile: authFile}})
	tom, anna, ada := basicAuth("tom", "t"), basicAuth("anna", "n"), basicAuth("ada", "a")
	c.Headers = ada
	mine, theirs := "team-a-"+c.Name("src"), "team-b-"+c.Name("src")
	mustCreate(c, mine, generatorCfg(c.Name("a")), "STOPPED")
	mustCreate(c, theirs, generatorCfg(c.Name("b"), "generator.secret", "team-b-password"), "STOPPED")
	c.Must(http.StatusOK, "PUT", "/admin/loggers/io.sluice", map[string]string{"level": "INFO"})

	type auditLog struct {
		Records []struct {
			Connector string `json:"connector"`
			Operation string `json:"operation"`
		} `json:"records"`
	}
	read := func(who []string) (ops []string) {
		c.Headers = who
		var log auditLog
		sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
			r := c.Must(http.StatusOK, "GET", "/sluice/audit", nil)
			log = auditLog{}
			if err := json.Unmarshal(r.Body, &log); err != nil {
				t.Fatal(err)
			}
			return len(log.Records) > 0, string(r.Body)
		})
		for _, r := range log.Records {
			ops = append(ops, r.Operation+" "+r.Connector)
		}
		return ops
	}
	if got := read(anna); strings.Join(got, ",") != "connector.create "+mine {
		t.Errorf("anna, admin of team a, reads %v; want team a's record only", got)
	}
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		got := read(ada)
		return len(got) == 3, fmt.Sprint(got)
	})

	c.Headers = tom
	r := c.Must(http.StatusOK, "POST", "/sluice/connectors/resume", map[string]any{"match": "*"})
	wantJSON(t, r, http.StatusOK, fmt.Sprintf(`{"results":[{"connector":%q,"status":202}],"hidden":1}`, mine))
	r = c.Must(http.StatusOK, "POST", "/sluice/connectors/stop", map[string]any{"names": []string{theirs}})
	if !strings.Contains(string(r.Body), `"status":403`) || !strings.Contains(string(r.Body), theirs) {
		t.Errorf("a connector the caller named keeps its 403: %s", r.Body)
	}
}
