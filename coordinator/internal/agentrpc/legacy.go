package agentrpc

import (
	"context"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/micro"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/shared/logthrottle"
	"github.com/sluice-io/sluice/shared/natsrpc"
)

// legacyWarnEvery bounds how often one old agent is warned about: it retries
// its register every few seconds, and one line a minute is enough to act on.
const legacyWarnEvery = time.Minute

// refuseLegacyAgents answers an agent that still speaks protocol sluice.v1
// with CodeUpgradeRequired, on the v1 register and heartbeat subjects of this
// term, and warns (rate-limited) naming it. Such an agent reads the same
// lease bucket, so it addresses exactly this term; listening on this term
// only, rather than on every term, keeps the refusal away from another
// cluster's v1 leader that may share the NATS server.
func refuseLegacyAgents(svc micro.Service, term int64, log *slog.Logger) error {
	warn := logthrottle.New(legacyWarnEvery)
	refuse := func(ctx context.Context, req any) (any, error) {
		r := req.(*v1.RegisterRequest)
		if warn.Due(r.AgentID, time.Now()) {
			log.Warn("an agent speaking an older protocol tried to join; upgrade it",
				"agent", r.AgentID, "protocol", "sluice.v1", "want", v1.SubjectPrefix)
		}
		return nil, v1.UpgradeRequired(r.AgentID)
	}
	for name, subject := range map[string]string{
		"v1-register":  v1.LegacySubjectLeaderRegister,
		"v1-heartbeat": v1.LegacySubjectLeaderHeartbeat,
	} {
		err := natsrpc.Mount(svc, name, v1.LegacyLeaderSubject(subject, term), refuse, func() any { return &v1.RegisterRequest{} })
		if err != nil {
			return err
		}
	}
	return nil
}
