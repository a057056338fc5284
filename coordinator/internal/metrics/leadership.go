package metrics

import "github.com/prometheus/client_golang/prometheus"

// Leadership is what a coordinator knows of the cluster's leadership.
type Leadership struct {
	// Leading is whether this coordinator leads.
	Leading bool
	// Term is the term of the lease it follows (its own while leading);
	// 0 while it knows of none.
	Term int64
	// Agents counts the agents registered with it and holding a lease:
	// only a leader registers agents.
	Agents int
}

var (
	leaderDesc = prometheus.NewDesc(Namespace+"_coordinator_leader",
		"1 while this coordinator leads the cluster, 0 otherwise.", nil, nil)
	termDesc = prometheus.NewDesc(Namespace+"_coordinator_term",
		"The term of the leadership lease this coordinator follows (its own while it leads); 0 while it knows of none.", nil, nil)
	agentsDesc = prometheus.NewDesc(Namespace+"_coordinator_agents",
		"Agents registered with this coordinator and holding a lease; always 0 on a follower, with which agents do not register.", nil, nil)
)

// LeadershipCollector publishes sluice_coordinator_leader, _term and
// _agents, read from the coordinator when scraped, so that they are never
// behind an election or a lost agent.
type LeadershipCollector struct {
	read func() Leadership
}

// NewLeadershipCollector returns a collector of what read returns.
func NewLeadershipCollector(read func() Leadership) *LeadershipCollector {
	return &LeadershipCollector{read: read}
}

// Describe implements prometheus.Collector.
func (c *LeadershipCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- leaderDesc
	ch <- termDesc
	ch <- agentsDesc
}

// Collect implements prometheus.Collector.
func (c *LeadershipCollector) Collect(ch chan<- prometheus.Metric) {
	l := c.read()
	ch <- prometheus.MustNewConstMetric(leaderDesc, prometheus.GaugeValue, boolValue(l.Leading))
	ch <- prometheus.MustNewConstMetric(termDesc, prometheus.GaugeValue, float64(l.Term))
	ch <- prometheus.MustNewConstMetric(agentsDesc, prometheus.GaugeValue, float64(l.Agents))
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
