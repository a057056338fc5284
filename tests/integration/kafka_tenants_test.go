package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluice-io/sluice/connect/clientoverrides"
	"github.com/sluice-io/sluice/sluicetest"
)

// teamJAAS is the sasl.jaas.config of team's SCRAM user, whose password
// kafka-up.sh wrote beside the secured listener's flag file.
func teamJAAS(t *testing.T, team string) string {
	t.Helper()
	pw, err := os.ReadFile(filepath.Join(filepath.Dir(os.Getenv(sluicetest.KafkaSecurityEnv)), team+".password"))
	if err != nil {
		t.Skipf("no password of %s beside %s (make kafka-up makes it): %v", team, sluicetest.KafkaSecurityEnv, err)
	}
	return fmt.Sprintf(`org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";`, team, strings.TrimSpace(string(pw)))
}

// grantTeam gives team's principal what docs/security.md's worked example
// gives it: its topics (prefix), its sinks' groups (connect-<team>-), its
// sources' transactional ids (<group.id>-<team>-) and idempotent writes.
func grantTeam(t *testing.T, adm *kadm.Client, team, topicPrefix, groupID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := kadm.NewACLs().Allow("User:"+team).AllowHosts().ResourcePatternType(kadm.ACLPatternPrefixed).
		Topics(topicPrefix).Groups("connect-"+team+"-").TransactionalIDs(groupID+"-"+team+"-").
		Operations(kadm.OpRead, kadm.OpWrite, kadm.OpDescribe, kadm.OpCreate)
	if _, err := adm.CreateACLs(ctx, b); err != nil {
		t.Fatalf("ACLs of %s: %v", team, err)
	}
	cluster := kadm.NewACLs().Allow("User:" + team).AllowHosts().Clusters().Operations(kadm.OpIdempotentWrite)
	if _, err := adm.CreateACLs(ctx, cluster); err != nil {
		t.Fatalf("cluster ACL of %s: %v", team, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		del := kadm.NewACLs().Allow("User:" + team).AllowHosts().ResourcePatternType(kadm.ACLPatternPrefixed).
			Topics(topicPrefix).Groups("connect-" + team + "-").TransactionalIDs(groupID + "-" + team + "-").Operations(kadm.OpAny)
		_, _ = adm.DeleteACLs(ctx, del)
	})
}

// TestKafkaSecurityTenantPrincipals runs docs/security.md's two-team
// example on the real broker's SASL_SSL listener: each team's connectors
// authenticate as the team's own SCRAM user (consumer and producer
// sasl.jaas.config overrides, under an Allowlist policy that allows
// them), and the broker's ACLs confine them — with no tenants file, so
// no Sluice check stands between team a and team b's topic. Team a's sink
// of team b's topic fails, refused by the broker; of its own topic it
// delivers; team a's source writes its records and its offsets, into its
// own offsets topic, as team a.
func TestKafkaSecurityTenantPrincipals(t *testing.T) {
	t.Parallel()
	be, _ := securedBackends(t)
	jaasA := teamJAAS(t, "team-a")
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, Backends: &be, OverridePolicy: clientoverrides.PolicyAllowlist,
		OverrideAllowlist: append([]string{"sasl.jaas.config", "sasl.mechanism", "security.protocol"}, clientoverrides.DefaultAllowlist...)})
	// Names unique on the shared broker, each team's under its prefix.
	topicA, topicB := "team-a."+c.Prefix, "team-b."+c.Prefix
	grantTeam(t, c.Admin(), "team-a", topicA, c.GroupID)
	grantTeam(t, c.Admin(), "team-b", topicB, c.GroupID)
	for _, topic := range []string{topicA + ".orders", topicB + ".orders"} {
		sluicetest.CreateTopic(t, c.Brokers, topic, 1)
		c.Produce(topic, topic+"-1", topic+"-2")
	}
	asTeamA := func(client string) []string {
		return []string{client + "sasl.jaas.config", jaasA, client + "sasl.mechanism", "SCRAM-SHA-512", client + "security.protocol", "SASL_SSL"}
	}

	thief := "team-a-" + c.Name("thief")
	mustCreate(c, thief, cfgWith(fileSinkCfg("stolen.txt", topicB+".orders"), asTeamA("consumer.override.")...), "")
	s := c.WaitState(thief, "RUNNING", 1, "FAILED")
	if !strings.Contains(s.Tasks[0].Trace, "AUTHORIZATION_FAILED") {
		t.Errorf("team a's sink of team b's topic: trace %q, want the broker's refusal", s.Tasks[0].Trace)
	}
	if data, _ := os.ReadFile(workPath(c, "stolen.txt")); strings.Contains(string(data), "team-b") {
		t.Errorf("team a's principal read team b's records: %q", data)
	}

	sink := "team-a-" + c.Name("sink")
	mustCreate(c, sink, cfgWith(fileSinkCfg("mine.txt", topicA+".orders"), asTeamA("consumer.override.")...), "")
	waitFile(t, workPath(c, "mine.txt"), []string{topicA + ".orders-1", topicA + ".orders-2"})

	src := "team-a-" + c.Name("src")
	cfg := cfgWith(generatorCfg(topicA+".gen", "streams", "1"), append(asTeamA("producer.override."), "offsets.storage.topic", topicA+".offsets")...)
	mustCreate(c, src, cfg, "")
	c.WaitState(src, "RUNNING", 1, "RUNNING")
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		n := 0
		for _, r := range c.ReadTopic(topicA + ".offsets") {
			if strings.Contains(string(r.Key), src) {
				n++
			}
		}
		return n > 0 && len(c.ReadTopic(topicA+".gen")) > 0, fmt.Sprintf("%d offsets records", n)
	})
	out := "team-a-" + c.Name("out")
	mustCreate(c, out, cfgWith(generatorCfg(topicB+".gen"), append(asTeamA("producer.override."), "offsets.storage.topic", topicA+".offsets2")...), "")
	s = c.WaitState(out, "RUNNING", 1, "FAILED")
	if !strings.Contains(s.Tasks[0].Trace, "AUTHORIZATION_FAILED") {
		t.Errorf("team a's source into team b's topic: trace %q, want the broker's refusal", s.Tasks[0].Trace)
	}
}
