package integration

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestClientOverridePolicy: under Sluice's default policy a sink keeps its
// own group and offset reset, and any other override is refused with
// Kafka Connect's message rather than ignored; under All, the overrides
// Sluice's clients apply run; under None, none is taken.
func TestClientOverridePolicy(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic := c.Name("in")
	sluicetest.CreateTopic(t, c.Brokers, topic, 1)
	c.Produce(topic, "old")
	sink := cfgWith(fileSinkCfg("out.txt", topic), "consumer.override.group.id", "connect-"+c.Name("mine"), "consumer.override.auto.offset.reset", "latest")
	mustCreate(c, c.Name("sink"), sink, "")
	c.WaitState(c.Name("sink"), "RUNNING", 1, "RUNNING")
	src := generatorCfg(c.Name("gen"), "producer.override.linger.ms", "20")
	wantError(t, c.Do("POST", "/connectors", map[string]any{"name": c.Name("gen"), "config": src}), http.StatusBadRequest,
		invalidConfig("The 'Allowlist' policy does not allow 'linger.ms' to be overridden in the connector configuration."))

	all := sluicetest.Start(t, sluicetest.Options{Agents: 1, OverridePolicy: "All"})
	gen := all.Name("gen")
	mustCreate(all, gen, generatorCfg(all.Name("out"), "producer.override.linger.ms", "20", "producer.override.compression.type", "zstd", "producer.override.acks", "all"), "")
	all.WaitState(gen, "RUNNING", 1, "RUNNING")
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		n := len(all.ReadTopic(all.Name("out")))
		return n > 0, fmt.Sprintf("%d records", n)
	})
	wantError(t, all.Do("POST", "/connectors", map[string]any{"name": all.Name("bad"), "config": generatorCfg("x", "producer.override.acks", "2")}),
		http.StatusBadRequest, invalidConfig("Invalid value 2 for configuration producer.override.acks: must be all, -1, 1 or 0"))

	none := sluicetest.Start(t, sluicetest.Options{Agents: 1, OverridePolicy: "None"})
	wantError(t, none.Do("POST", "/connectors", map[string]any{"name": none.Name("sink"), "config": sink}), http.StatusBadRequest,
		invalidConfig("The 'None' policy does not allow 'auto.offset.reset' to be overridden in the connector configuration.",
			"The 'None' policy does not allow 'group.id' to be overridden in the connector configuration."))
}

// TestOverrideCannotFence: the attack an override policy of All would
// open — a connector choosing its producer's transactional id (the
// leader's, or another team's task's) to fence it, or its sink's static
// member id to take another team's member's place — is refused under
// every policy, and the leader keeps writing.
func TestOverrideCannotFence(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, OverridePolicy: "All"})
	victim := "team-b-" + c.Name("src")
	mustCreate(c, victim, generatorCfg(c.Name("b")), "")
	c.WaitState(victim, "RUNNING", 1, "RUNNING")
	for key, value := range map[string]string{
		"producer.override.transactional.id":   c.GroupID + "-leader",
		"producer.override.enable.idempotence": "false",
	} {
		r := c.Do("POST", "/connectors", map[string]any{"name": "team-a-" + c.Name("src"), "config": generatorCfg(c.Name("a"), key, value)})
		wantError(t, r, http.StatusBadRequest, invalidConfig(key+" cannot be overridden, under any policy: Sluice sets "+key[len("producer.override."):]+
			" itself; a transactional id a connector chose could fence another connector's task or the leader"))
	}
	r := c.Do("POST", "/connectors", map[string]any{"name": "team-a-" + c.Name("sink"), "config": cfgWith(fileSinkCfg("a.txt", c.Name("b")),
		"consumer.override.group.instance.id", c.GroupID+"-"+victim+"-0")})
	wantError(t, r, http.StatusBadRequest, invalidConfig("consumer.override.group.instance.id cannot be overridden, under any policy: Sluice gives each sink task its static member id; one a connector chose could fence another connector's task"))
	// The leader and team b's task were not fenced: a write works, the task runs.
	c.Must(http.StatusNoContent, "PUT", "/connectors/"+victim+"/stop", nil)
	c.WaitState(victim, "STOPPED", 0, "")
}
