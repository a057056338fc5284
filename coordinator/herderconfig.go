package coordinator

import (
	"github.com/nats-io/nats.go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/coordinator/internal/herder"
	"github.com/sluice-io/sluice/shared/logging"
	"github.com/sluice-io/sluice/shared/natsconn"
	"github.com/sluice-io/sluice/shared/version"
)

// herderConfig is the herder's config: the one place the coordinator's
// settings become the herder's, next to the parts New and Start made.
//
// It is a function, not an fx graph, on purpose. The settings are a plain
// conversion (nothing to construct, nothing for a container to order),
// and the parts are made by Start in an order that is itself behaviour:
// the REST port is bound first (the worker id is the bound address when no
// advertised address is set, and /health answers "starting" meanwhile),
// then NATS, then the audit and history logs, and only after the herder
// is made do the startup probe, the topics and the herder's start run,
// each undone on a later failure. Providing each of those from an fx
// module would move that order into the graph's dependency edges, where
// it is no longer read in one place, and New (called directly by the
// tests' harness) would need a container of its own. What fx does carry
// is what a process adds to a coordinator from outside its Config: the
// fault injector (Module, WithFaults).
func (c *Coordinator) herderConfig(workerID string, auth natsconn.Auth, kafkaOpts []kgo.Opt) herder.Config {
	return herder.Config{
		WorkerID:                     workerID,
		RESTScheme:                   c.scheme(),
		GroupID:                      c.cfg.GroupID,
		ConfigTopic:                  c.cfg.ConfigTopic,
		OffsetsTopic:                 c.cfg.OffsetsTopic,
		StatusTopic:                  c.cfg.StatusTopic,
		FleetTopic:                   c.cfg.FleetTopic,
		LivenessTopic:                c.cfg.LivenessTopic,
		ReservedTopics:               c.reservedTopics(),
		DisableInternalTopicCreation: c.cfg.DisableInternalTopicCreation,
		Tenants:                      c.tenants,
		Overrides:                    c.overrides,
		Signing:                      c.signing,
		SignedTopics:                 c.signedTopics(),
		OffsetsPartitions:            c.cfg.OffsetsPartitions,
		StatusPartitions:             c.cfg.StatusPartitions,
		AgentLease:                   c.cfg.AgentLease,
		SinkLagDegraded:              c.cfg.SinkLagDegraded,
		AgentProbe:                   c.cfg.AgentProbe,
		PlacementSettle:              c.cfg.PlacementSettle,
		TaskShutdownTimeout:          c.cfg.TaskShutdownTimeout,
		LeaderLease:                  c.cfg.LeaderLease,
		LeaderSigner:                 c.leaderSigner,
		LeaderTrust:                  c.leaderTrust,
		DialNATS: func(name string) (*nats.Conn, error) {
			return natsconn.Connect(c.cfg.NATSURL, name, auth, c.cfg.Loggers.Logger(logging.Root))
		},
		KafkaOpts:          kafkaOpts,
		Version:            version.Version,
		Commit:             version.Commit,
		Logger:             c.cfg.Loggers.Logger(logging.Herder),
		Loggers:            c.cfg.Loggers,
		ExactlyOnce:        c.cfg.ExactlyOnce,
		Providers:          c.providers,
		History:            c.history,
		ConfigHistory:      c.configHistory,
		LagHistoryInterval: c.cfg.LagHistoryInterval,
		Metrics:            c.metrics,
	}
}
