package agentrpc

import (
	"context"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/micro"

	"github.com/sluice-io/sluice/shared/logthrottle"
	"github.com/sluice-io/sluice/shared/natsrpc"
	"github.com/sluice-io/sluice/shared/wire"
)

// legacyWarnEvery bounds how often one old agent is warned about: it retries
// its register every few seconds, and one line a minute is enough to act on.
const legacyWarnEvery = time.Minute

// refuseLegacyAgents answers an agent that still speaks protocol sluice.v1
// or sluice.v2 with CodeUpgradeRequired, on the old register and heartbeat
// subjects of this term, and warns (rate-limited) naming it. Such an agent
// reads the same lease bucket, so it addresses exactly this term; listening
// on this term only, rather than on every term, keeps the refusal away from
// another cluster's old leader that may share the NATS server (sluice.v2
// subjects also name the group).
func refuseLegacyAgents(svc micro.Service, group string, term int64, log *slog.Logger) error {
	warn := logthrottle.New(legacyWarnEvery)
	refuse := func(protocol string) func(ctx context.Context, req any) (any, error) {
		return func(ctx context.Context, req any) (any, error) {
			r := req.(*wire.RegisterRequest)
			if warn.Due(r.AgentID, time.Now()) {
				log.Warn("an agent speaking an older protocol tried to join; upgrade it",
					"agent", r.AgentID, "protocol", protocol, "want", wire.SubjectPrefix)
			}
			return nil, wire.UpgradeRequired(r.AgentID)
		}
	}
	for _, m := range []struct{ name, protocol, subject string }{
		{"v1-register", "sluice.v1", wire.LegacyLeaderSubject(wire.LegacySubjectLeaderRegister, term)},
		{"v1-heartbeat", "sluice.v1", wire.LegacyLeaderSubject(wire.LegacySubjectLeaderHeartbeat, term)},
		{"v2-register", "sluice.v2", wire.LegacyV2LeaderSubject(wire.LegacyV2SubjectLeaderRegister, group, term)},
		{"v2-heartbeat", "sluice.v2", wire.LegacyV2LeaderSubject(wire.LegacyV2SubjectLeaderHeartbeat, group, term)},
	} {
		err := natsrpc.Mount(svc, m.name, m.subject, refuse(m.protocol), func() any { return &wire.RegisterRequest{} })
		if err != nil {
			return err
		}
	}
	return nil
}
