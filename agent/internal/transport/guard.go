package transport

import (
	"context"
	"fmt"
	"time"

	"github.com/go-kit/kit/endpoint"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/cmdsig"
	"github.com/sluice-io/sluice/shared/natsrpc"
	"github.com/sluice-io/sluice/shared/wire"
)

// The checks a command passes before its endpoint runs (termGuard): the
// signature of its term's leader, its protocol level, and its term.

// termGuard refuses a command the leader of its term did not sign
// (checkSigned), one of another protocol level than this agent's
// (checkLevel), one from an older leadership term than the newest seen, so
// a deposed coordinator cannot command this agent, and one from a term
// beyond the lease's, which no leader holds: taking it as the newest would
// make the agent refuse its leader from then on.
func (t *Transport) termGuard(next endpoint.Endpoint) endpoint.Endpoint {
	return func(ctx context.Context, req any) (any, error) {
		cmd, ok := req.(wire.Command)
		if !ok {
			return nil, api.Errorf(api.CodeInternal, "agent %s: %T is not a command", t.cfg.AgentID, req)
		}
		term := cmd.CommandTerm()
		// The signature first: a command its term's leader did not sign
		// is forbidden, whatever level it states.
		err := t.checkSigned(ctx, term)
		if err == nil {
			err = t.checkLevel(ctx)
		}
		if err == nil {
			err = t.checkTerm(ctx, term)
		}
		if err != nil {
			if t.warn.Due(fmt.Sprintf("term/%d", api.AsError(err).Code), time.Now()) {
				t.cfg.Logger.Warn("refused a command", "err", err)
			}
			return nil, err
		}
		return next(ctx, req)
	}
}

// checkLevel refuses a command whose sender states another protocol level
// than this agent's (wire.LevelHeader), naming both.
func (t *Transport) checkLevel(ctx context.Context) error {
	got, ok := natsrpc.ReceivedFrom(ctx)
	if !ok {
		return api.Errorf(api.CodeInternal, "agent %s: the command's message is not known", t.cfg.AgentID)
	}
	if level := got.Level(); level != wire.ProtocolLevel {
		return api.Errorf(api.CodeUpgradeRequired, "agent %s speaks Sluice protocol level %d; the command on %s is of level %d: run agents and coordinators of the same protocol level",
			t.cfg.AgentID, wire.ProtocolLevel, got.Subject, level)
	}
	return nil
}

// leaderLevel refuses the registration or heartbeat reply of a leader of
// another protocol level, naming both.
func (t *Transport) leaderLevel(term int64, level int) error {
	if level == wire.ProtocolLevel {
		return nil
	}
	return api.Errorf(api.CodeUpgradeRequired, "the coordinator leading term %d speaks Sluice protocol level %d; agent %s speaks level %d: run agents and coordinators of the same protocol level",
		term, level, t.cfg.AgentID, wire.ProtocolLevel)
}

// checkSigned accepts a command of term only if the leader of that term
// signed it (cmdsig): with the key its lease names. Whoever can merely
// publish on this agent's subjects — any client of a NATS server without
// permissions — cannot make it start, stop or change anything.
func (t *Transport) checkSigned(ctx context.Context, term int64) error {
	got, ok := natsrpc.ReceivedFrom(ctx)
	if !ok {
		return api.Errorf(api.CodeInternal, "agent %s: the command's message is not known", t.cfg.AgentID)
	}
	if seen := t.currentTerm(); term < seen {
		// A deposed leader's command: refused as stale, whoever signed it.
		return t.staleTerm(term, seen)
	}
	lease := t.seenLease()
	if term > lease.Term {
		// A new leader's first commands can arrive before this agent read
		// its lease.
		l, err := t.readLease(ctx)
		if err != nil {
			return api.Errorf(api.CodeUnavailable, "agent %s cannot confirm term %d of a command: %v", t.cfg.AgentID, term, err)
		}
		lease = l
	}
	if term != lease.Term {
		return api.Errorf(api.CodeConflict, "agent %s refuses a command of term %d: the leader lease's term is %d", t.cfg.AgentID, term, lease.Term)
	}
	if err := cmdsig.Verify(lease.Key, got.Subject, got.Data, got.Headers.Get(wire.SignatureHeader)); err != nil {
		return api.Errorf(api.CodeForbidden, "agent %s refuses a command of term %d on %s: %v", t.cfg.AgentID, term, got.Subject, err)
	}
	return nil
}

// checkTerm accepts a command of term: the newest term seen, or a newer one
// the leader lease confirms (a new leader's first commands can arrive
// before this agent read its lease).
func (t *Transport) checkTerm(ctx context.Context, term int64) error {
	seen := t.currentTerm()
	if term > seen {
		lease, err := t.currentLeader(ctx)
		if err != nil {
			return api.Errorf(api.CodeUnavailable, "agent %s cannot confirm term %d of a command: %v", t.cfg.AgentID, term, err)
		}
		t.observeTerm(lease)
		if term > lease {
			return api.Errorf(api.CodeConflict, "agent %s refuses a command of term %d: no leader holds it (the lease's term is %d)", t.cfg.AgentID, term, lease)
		}
	}
	if !t.observeTerm(term) {
		return t.staleTerm(term, t.currentTerm())
	}
	return nil
}

// staleTerm is the refusal of a command of term, older than the term seen.
func (t *Transport) staleTerm(term, seen int64) error {
	return api.Errorf(api.CodeConflict, "agent %s refuses a command of term %d: it has seen term %d", t.cfg.AgentID, term, seen)
}

func (t *Transport) observeTerm(term int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if term < t.term {
		return false
	}
	t.term = term
	return true
}

func (t *Transport) currentTerm() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.term
}
