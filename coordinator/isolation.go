package coordinator

import (
	"cmp"
	"fmt"

	"github.com/sluice-io/sluice/connect/clientoverrides"
	"github.com/sluice-io/sluice/shared/leasetrust"
	"github.com/sluice-io/sluice/shared/logging"
	"github.com/sluice-io/sluice/shared/recordsig"
)

// reservedTopics are the topics this cluster keeps its own state in, each
// with what it is: no connector may produce to or consume from one (the
// herder checks configs, the agents every record). A connector writing to
// the config topic could plant another team's connector; one writing to the
// audit topic could forge its trail; one reading either could copy every
// team's configs.
func (c *Coordinator) reservedTopics() map[string]string {
	return map[string]string{
		c.cfg.ConfigTopic:  "Sluice's config topic",
		c.cfg.StatusTopic:  "Sluice's status topic",
		c.cfg.OffsetsTopic: "Sluice's offsets topic",
		c.cfg.FleetTopic:   "Sluice's fleet topic",
		cmp.Or(c.cfg.LivenessTopic, DefaultLivenessTopic):              "Sluice's liveness topic",
		cmp.Or(c.cfg.Audit.Topic, DefaultAuditTopic):                   "Sluice's audit topic",
		cmp.Or(c.cfg.OffsetsHistory.Topic, DefaultOffsetsHistoryTopic): "Sluice's offsets history topic",
		cmp.Or(c.cfg.ConfigHistory.Topic, DefaultConfigHistoryTopic):   "Sluice's config history topic",
	}
}

// overridePolicy is cfg's client config override policy. Sluice's default
// is Allowlist of what it applied before it had a policy (a consumer's
// group.id, auto.offset.reset and session timings): Kafka 4.4 defaults to
// All, under which a connector's overrides can reach anything its clients
// can, and Kafka 5.0 to an empty Allowlist, which would break the
// connectors that relied on those four. Every other override is refused
// loudly, never ignored.
func overridePolicy(cfg Config) (clientoverrides.Policy, error) {
	if cfg.ClientOverridePolicy == "" {
		return clientoverrides.ParsePolicy(clientoverrides.PolicyAllowlist, clientoverrides.DefaultAllowlist)
	}
	p, err := clientoverrides.ParsePolicy(cfg.ClientOverridePolicy, cfg.ClientOverrideAllowlist)
	if err != nil {
		return p, fmt.Errorf("--connector-client-config-override-policy: %w", err)
	}
	return p, nil
}

// signingGate loads the record signing key and makes the gate that signs
// and checks the coordinators' records, counting the ignored ones in
// sluice_records_ignored_total; nil without a key file.
func (c *Coordinator) signingGate() (*recordsig.Gate, error) {
	if c.cfg.RecordSigningKeyFile == "" {
		return nil, nil
	}
	key, err := recordsig.LoadKey(c.cfg.RecordSigningKeyFile)
	if err != nil {
		return nil, fmt.Errorf("--record-signing-key-file: %w", err)
	}
	c.metrics.DeclareSignedTopics(append(c.signedTopics(), c.cfg.ConfigTopic)...)
	return recordsig.NewGate(key, c.cfg.ConfigTopic, c.cfg.Loggers.Logger(logging.Coordinator), c.metrics.RecordIgnored), nil
}

// signedTopics are the topics whose records coordinators sign, besides the
// config topic (which holds the marker saying where signing began).
func (c *Coordinator) signedTopics() []string {
	return []string{c.cfg.StatusTopic, c.cfg.FleetTopic,
		cmp.Or(c.cfg.Audit.Topic, DefaultAuditTopic), cmp.Or(c.cfg.OffsetsHistory.Topic, DefaultOffsetsHistoryTopic),
		cmp.Or(c.cfg.ConfigHistory.Topic, DefaultConfigHistoryTopic)}
}

// leaderKeys reads the leader key and the trusted keys files; either may be
// empty.
func leaderKeys(keyFile, trustedFile string) (*leasetrust.Signer, *leasetrust.Trust, error) {
	var (
		s   *leasetrust.Signer
		t   *leasetrust.Trust
		err error
	)
	if keyFile != "" {
		if s, err = leasetrust.ReadSigner(keyFile); err != nil {
			return nil, nil, fmt.Errorf("--leader-key-file: %w", err)
		}
	}
	if trustedFile != "" {
		if t, err = leasetrust.ReadTrust(trustedFile); err != nil {
			return nil, nil, fmt.Errorf("--leader-trusted-keys-file: %w", err)
		}
	}
	return s, t, nil
}
