package coordinator

import "cmp"

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
		cmp.Or(c.cfg.Audit.Topic, DefaultAuditTopic):                   "Sluice's audit topic",
		cmp.Or(c.cfg.OffsetsHistory.Topic, DefaultOffsetsHistoryTopic): "Sluice's offsets history topic",
	}
}
