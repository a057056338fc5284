package integration

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/sluicetest"
)

// tenantsYAML is a two-team tenants file, strict; teamATopics are team a's
// topic patterns.
func tenantsYAML(secrets, teamATopics string) string {
	return fmt.Sprintf(`strict: true
tenants:
  - name: team-a
    connectors: ["team-a-*"]
    topics: [%s]
    groups: ["connect-team-a-*"]
    secrets: {paths: [%q], env: ["TEAM_A_*"]}
    kafka_principal: User:team-a
  - name: team-b
    connectors: ["team-b-*"]
    topics: ["team-b.*"]
    groups: ["connect-team-b-*"]
    secrets: {paths: [%q]}
`, teamATopics, filepath.Join(secrets, "team-a"), filepath.Join(secrets, "team-b"))
}

// tenantCluster starts a strict two-team cluster: tom operates tenant
// team-a, ada is an admin; requests go as tom. Each team has a secrets
// directory with a kafka.properties.
func tenantCluster(t *testing.T) (c *sluicetest.Cluster, tenantsFile, secrets string) {
	t.Helper()
	dir := t.TempDir()
	secrets = filepath.Join(dir, "secrets")
	for _, team := range []string{"team-a", "team-b"} {
		if err := os.MkdirAll(filepath.Join(secrets, team), 0o700); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(secrets, team), "kafka.properties", []byte("password="+team+"-s3cret\n"))
	}
	tenantsFile = writeFile(t, dir, "tenants.yaml", []byte(tenantsYAML(secrets, `"team-a.*"`)))
	authFile := writeFile(t, dir, "auth.yaml", []byte(fmt.Sprintf(`principals:
  - {name: tom, password_bcrypt: %q, grants: [{role: operator, tenants: [team-a]}]}
  - {name: ada, password_bcrypt: %q, grants: [{role: admin}]}
`, bcryptOf(t, "t"), bcryptOf(t, "a"))))
	c = sluicetest.Start(t, sluicetest.Options{Agents: 1, ConfigProviders: []string{"file", "env"}, TenantsFile: tenantsFile,
		RESTSecurity: coordinator.RESTSecurity{AuthFile: authFile}})
	c.Headers = basicAuth("tom", "t")
	return c, tenantsFile, secrets
}

// TestTenantRulesAtWrite: what a config makes a connector touch is judged
// by its name's tenant when the config is written — topics (400 naming
// the key, the topic and the tenant), consumer groups, secrets and the
// Kafka principal its clients authenticate as (403),
// a connector of no tenant under strict tenancy (403) — and a grant over a
// tenant covers exactly the tenant's connectors.
func TestTenantRulesAtWrite(t *testing.T) {
	t.Parallel()
	c, _, secrets := tenantCluster(t)
	src := "team-a-src"
	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": src, "config": generatorCfg("team-b.orders")}), http.StatusBadRequest,
		invalidConfig("Invalid value team-b.orders for configuration topic: the topic 'team-b.orders' is not one of tenant team-a's topics (team-a.*)"))
	sink := cfgWith(fileSinkCfg("a.txt", "team-a.orders"), "consumer.override.group.id", "connect-team-b-sink")
	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": "team-a-sink", "config": sink}), http.StatusForbidden,
		"Connector team-a-sink may not use that group: the consumer group 'connect-team-b-sink' is not one of tenant team-a's groups (connect-team-a-*)")
	theirs := filepath.Join(secrets, "team-b", "kafka.properties")
	stolen := generatorCfg("team-a.orders", "x.password", "${file:"+theirs+":password}")
	r := c.Do("POST", "/connectors", map[string]any{"name": src, "config": stolen})
	wantError(t, r, http.StatusForbidden, fmt.Sprintf("Connector %s may not read that secret: config x.password: the file placeholder's path %s is not one tenant team-a may read (%s)",
		src, theirs, filepath.Join(secrets, "team-a")))
	if strings.Contains(string(r.Body), "s3cret") {
		t.Errorf("the refusal shows the secret: %s", r.Body)
	}
	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": src, "config": generatorCfg("team-a.orders", "x.password", "${env:TEAM_B_PASSWORD}")}),
		http.StatusForbidden, "Connector team-a-src may not read that secret: config x.password: the env placeholder's variable TEAM_B_PASSWORD is not one tenant team-a may read (TEAM_A_*)")
	asTeamB := cfgWith(fileSinkCfg("a.txt", "team-a.orders"), "consumer.override.sasl.mechanism", "SCRAM-SHA-512",
		"consumer.override.sasl.jaas.config", `org.apache.kafka.common.security.scram.ScramLoginModule required username="team-b" password="guessed";`)
	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": "team-a-sink", "config": asTeamB}), http.StatusForbidden,
		"Connector team-a-sink may not authenticate as that user (consumer.override.sasl.jaas.config): the SASL user 'team-b' is not tenant team-a's Kafka principal (team-a)")
	// The validate endpoint resolves placeholders too: under another
	// connector's name only with a grant for it, and without a name, no
	// secret at all.
	validate := func(config map[string]string) sluicetest.Response {
		return c.Do("PUT", "/connector-plugins/"+classGenerator+"/config/validate", config)
	}
	wantError(t, validate(cfgWith(generatorCfg("team-b.orders", "x.password", "${file:"+theirs+":password}"), "name", "team-b-src")), http.StatusForbidden,
		"User tom may not PUT /connector-plugins/"+classGenerator+"/config/validate: the role operator for connector team-b-src is needed, and tom has operator for tenants team-a")
	r = validate(generatorCfg("team-b.orders", "x.password", "${file:"+theirs+":password}"))
	wantError(t, r, http.StatusForbidden, fmt.Sprintf("A config that names no connector may not read that secret: config x.password: the file placeholder's path %s is not one a config that names no connector may read (none)", theirs))
	mine := filepath.Join(secrets, "team-a", "kafka.properties")
	if r := validate(cfgWith(generatorCfg("team-a.orders", "x.password", "${file:"+mine+":password}"), "name", src)); r.Status != http.StatusOK {
		t.Errorf("validating a config of its own with its own secret: %s", r)
	}
	// Its own secrets, topics and groups are fine.
	mustCreate(c, src, generatorCfg("team-a.orders", "x.password", "${file:"+mine+":password}"), "STOPPED")
	mustCreate(c, "team-a-sink", cfgWith(fileSinkCfg("a.txt", "team-a.orders"), "consumer.override.group.id", "connect-team-a-other"), "STOPPED")

	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": "team-b-src", "config": generatorCfg("team-b.orders")}), http.StatusForbidden,
		"User tom may not POST /connectors: the role operator for connector team-b-src is needed, and tom has operator for tenants team-a")
	c.Headers = basicAuth("ada", "a")
	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": "rogue", "config": generatorCfg("team-a.orders")}), http.StatusForbidden,
		"Connector rogue belongs to no tenant: its name matches no tenant's connector patterns ("+filepath.Dir(secrets)+"/tenants.yaml), and tenancy is strict, so it may touch nothing")
}

// TestTenantRulesAsTasksRun: a record a team-a source routes to team b's
// topic fails the task with a trace naming the tenant; a team-a sink's
// pattern that matches team b's topic delivers team a's records only; and
// when team a's rules change, its running connectors restart under them —
// one that now breaks them fails with a trace saying why.
func TestTenantRulesAsTasksRun(t *testing.T) {
	t.Parallel()
	c, tenantsFile, secrets := tenantCluster(t)
	// Topics, connectors (and so groups) unique to the run: on a real
	// broker they outlive it.
	p := c.Prefix
	router, sink, gen := "team-a-"+p+"-router", "team-a-"+p+"-copy", "team-a-"+p+"-gen"
	mustCreate(c, router, generatorCfg("team-a."+p+".lines", "transforms", "route",
		"transforms.route.type", smt+"RegexRouter", "transforms.route.regex", ".*", "transforms.route.replacement", "team-b."+p+".orders"), "")
	s := c.WaitState(router, "RUNNING", 1, "FAILED")
	if want := "topic 'team-b." + p + ".orders' is not one of tenant team-a's topics (team-a.*)"; !strings.Contains(s.Tasks[0].Trace, want) {
		t.Errorf("trace %q, want it to say %q", s.Tasks[0].Trace, want)
	}

	for _, topic := range []string{"team-a." + p + ".in", "team-b." + p + ".in"} {
		sluicetest.CreateTopic(t, c.Brokers, topic, 1)
		c.Produce(topic, topic+"-1", topic+"-2")
	}
	mustCreate(c, sink, cfgOf("connector.class", "FileStreamSink", "file", "copy.txt", "topics.regex", `team-.\.`+regexp.QuoteMeta(p)+`\.in`), "")
	waitFile(t, workPath(c, "copy.txt"), []string{"team-a." + p + ".in-1", "team-a." + p + ".in-2"})
	// Team b's records, were they delivered, would be within this window.
	sluicetest.Consistently(t, 500*time.Millisecond, func() (bool, string) {
		data, _ := os.ReadFile(workPath(c, "copy.txt"))
		return !strings.Contains(string(data), "team-b"), fmt.Sprintf("team a's sink delivered team b's records: %q", data)
	})
	if data, _ := os.ReadFile(workPath(c, "copy.txt")); strings.Contains(string(data), "team-b") {
		t.Errorf("team a's sink delivered team b's records: %q", data)
	}

	mustCreate(c, gen, generatorCfg("team-a."+p+".gen"), "")
	c.WaitState(gen, "RUNNING", 1, "RUNNING")
	c.StopCoordinator()
	allowed := fmt.Sprintf("%q, %q", "team-a."+p+".in", "team-a."+p+".lines")
	writeFile(t, filepath.Dir(tenantsFile), "tenants.yaml", []byte(tenantsYAML(secrets, allowed)))
	c.StartCoordinator()
	s = c.WaitState(gen, "RUNNING", 1, "FAILED")
	if want := fmt.Sprintf("topic 'team-a.%s.gen' is not one of tenant team-a's topics (team-a.%s.in, team-a.%s.lines)", p, p, p); !strings.Contains(s.Tasks[0].Trace, want) {
		t.Errorf("after the rules changed: trace %q, want it to say %q", s.Tasks[0].Trace, want)
	}
	c.WaitState(sink, "RUNNING", 1, "RUNNING")
}
