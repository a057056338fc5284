package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluice-io/sluice/shared/wire"
)

// currentLeader reads the leader lease and returns its term. The bucket
// exists once a coordinator has started; until then, and while an election
// runs (term 0), there is no leader to register with.
func (t *Transport) currentLeader(ctx context.Context) (int64, error) {
	l, err := t.readLease(ctx)
	return l.Term, err
}

// readLease reads the leader lease, and keeps it as the lease seen.
func (t *Transport) readLease(ctx context.Context) (wire.LeaderLease, error) {
	kv, err := t.leaseBucket(ctx)
	if err != nil {
		return wire.LeaderLease{}, err
	}
	entry, err := kv.Get(ctx, wire.LeaderKey)
	if err != nil {
		return wire.LeaderLease{}, fmt.Errorf("leader lease: %w", err)
	}
	var l wire.LeaderLease
	if err := json.Unmarshal(entry.Value(), &l); err != nil || l.Term == 0 {
		return wire.LeaderLease{}, errors.New("no leader elected yet")
	}
	if err := t.cfg.LeaderTrust.Verify(t.cfg.GroupID, l); err != nil {
		if t.warn.Due("lease/untrusted", time.Now()) {
			t.cfg.Logger.Warn("ignoring the leader lease", "err", err)
		}
		return wire.LeaderLease{}, fmt.Errorf("no trusted leader: %w", err)
	}
	if l.Term > wire.MaxLeaderTerm {
		return wire.LeaderLease{}, fmt.Errorf("no trusted leader: the lease's term %d is beyond any real term", l.Term)
	}
	t.kvMu.Lock()
	if l.Term >= t.seen.Term {
		t.seen = l
	}
	t.kvMu.Unlock()
	return l, nil
}

// seenLease is the newest lease read.
func (t *Transport) seenLease() wire.LeaderLease {
	t.kvMu.Lock()
	defer t.kvMu.Unlock()
	return t.seen
}

// leaseBucket opens the lease bucket once; the session loop and the
// command endpoints both read it.
func (t *Transport) leaseBucket(ctx context.Context) (jetstream.KeyValue, error) {
	t.kvMu.Lock()
	defer t.kvMu.Unlock()
	if t.lease != nil {
		return t.lease, nil
	}
	js, err := jetstream.New(t.nc)
	if err != nil {
		return nil, fmt.Errorf("leader lease bucket: %w", err)
	}
	kv, err := js.KeyValue(ctx, wire.LeaderBucket(t.cfg.GroupID))
	if err != nil {
		return nil, fmt.Errorf("leader lease bucket: %w", err)
	}
	t.lease = kv
	return kv, nil
}
