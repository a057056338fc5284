// Package leader elects one coordinator with a lease in a NATS JetStream
// key-value bucket, an engine Sluice already runs, rather than a protocol of
// its own:
//
//	campaign: Create(key) ──ok──► stamp term (= create revision) ──► leader
//	             │ exists                                              │ every ttl/3:
//	             ▼                                                     ▼ Update(key, lastRev)
//	          follow (watch the key) ◄──── CAS fails / ctx ends ◄──── deposed
//
// The bucket's max age is the lease's time to live: an update writes a new
// revision, so a renewed lease never ages out, and a leader that stops
// renewing (crashed, paused, partitioned) loses the key after one TTL. A
// per-key TTL is not used because an Update drops it.
//
// The term is the revision at which the lease was created. Revisions only
// grow, so a newer leader always has a higher term; agents refuse commands
// from an older term, and the leader-only NATS subjects name the term.
package leader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/shared/cmdsig"
)

// Callbacks are called from the elector's goroutine, one at a time:
// Elected when this process became leader, Deposed when it stopped being
// leader. Elected's context is cancelled on deposition.
type Callbacks struct {
	Elected func(ctx context.Context, term int64)
	Deposed func(term int64)
}

// Elector campaigns for and holds the lease.
type Elector struct {
	kv   jetstream.KeyValue
	self v1.LeaderLease
	ttl  time.Duration
	cb   Callbacks
	log  *slog.Logger

	mu      sync.Mutex
	current v1.LeaderLease
	key     *cmdsig.Key // the signing key of the term this process leads

	cancel context.CancelFunc
	done   chan struct{}
}

// OpenBucket creates (or opens) a cluster's lease bucket with the given TTL.
func OpenBucket(ctx context.Context, nc *nats.Conn, groupID string, ttl time.Duration) (jetstream.KeyValue, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:  v1.LeaderBucket(groupID),
		History: 1,
		TTL:     ttl,
	})
	if err != nil {
		return nil, fmt.Errorf("open lease bucket %s (NATS must have JetStream enabled): %w", v1.LeaderBucket(groupID), err)
	}
	return kv, nil
}

// New makes an elector for this process, identified by id and reachable at
// url (its REST address, where followers forward writes).
func New(kv jetstream.KeyValue, id, url string, ttl time.Duration, cb Callbacks, log *slog.Logger) *Elector {
	return &Elector{kv: kv, self: v1.LeaderLease{ID: id, URL: url}, ttl: ttl, cb: cb, log: log}
}

// Start campaigns in the background until Stop.
func (e *Elector) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel, e.done = cancel, make(chan struct{})
	go e.run(ctx)
}

// Stop stops campaigning; a leader resigns by deleting the key, so a
// successor need not wait for the lease to expire.
func (e *Elector) Stop() {
	if e.cancel == nil {
		return
	}
	e.cancel()
	<-e.done
}

// Current returns the lease as last seen: who leads, at what term. A zero
// Term means no leader is known.
func (e *Elector) Current() v1.LeaderLease {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.current
}

// IsLeader reports whether this process holds the current lease.
func (e *Elector) IsLeader() bool {
	cur := e.Current()
	return cur.Term != 0 && cur.ID == e.self.ID
}

// Confirm reads the lease from NATS, not from memory, and reports whether
// this process still holds it at term. A leader that was paused believes it
// leads until its next renewal; before an act that could harm a successor it
// asks here.
func (e *Elector) Confirm(ctx context.Context, term int64) bool {
	entry, err := e.kv.Get(ctx, v1.LeaderKey)
	if err != nil {
		return false
	}
	var l v1.LeaderLease
	return json.Unmarshal(entry.Value(), &l) == nil && l.ID == e.self.ID && l.Term == term
}

// SigningKey returns the key that signs this process's commands of term,
// or nil unless it leads at term.
func (e *Elector) SigningKey(term int64) *cmdsig.Key {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.current.Term != term || e.current.ID != e.self.ID {
		return nil
	}
	return e.key
}

func (e *Elector) setCurrent(l v1.LeaderLease) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.current = l
}

func (e *Elector) run(ctx context.Context) {
	defer close(e.done)
	for ctx.Err() == nil {
		lease, rev, key, err := e.acquire(ctx)
		if err != nil {
			// Someone else leads (or NATS is unreachable): follow until the
			// key disappears, then campaign again.
			e.follow(ctx)
			continue
		}
		e.lead(ctx, lease, rev, key)
	}
}

// acquire creates the key and stamps it with its own revision as the term
// and with the public half of a key pair made for that term, whose private
// half signs the term's commands to agents.
func (e *Elector) acquire(ctx context.Context) (lease v1.LeaderLease, rev uint64, key *cmdsig.Key, err error) {
	if key, err = cmdsig.NewKey(); err != nil {
		return lease, 0, nil, err
	}
	val, _ := json.Marshal(e.self)
	rev, err = e.kv.Create(ctx, v1.LeaderKey, val)
	if err != nil {
		return lease, 0, nil, err
	}
	lease = e.self
	lease.Term = int64(rev)
	lease.Key = key.Public()
	val, _ = json.Marshal(lease)
	rev2, err := e.kv.Update(ctx, v1.LeaderKey, val, rev)
	if err != nil {
		return lease, 0, nil, err
	}
	return lease, rev2, key, nil
}

// lead holds the lease, renewing it, until a renewal fails or ctx ends.
func (e *Elector) lead(ctx context.Context, lease v1.LeaderLease, rev uint64, key *cmdsig.Key) {
	term := lease.Term
	e.mu.Lock()
	e.current, e.key = lease, key
	e.mu.Unlock()
	e.log.Info("elected leader", "term", term)
	lctx, cancel := context.WithCancel(ctx)
	if e.cb.Elected != nil {
		e.cb.Elected(lctx, term)
	}
	val, _ := json.Marshal(lease)
	tick := time.NewTicker(e.ttl / 3)
	defer tick.Stop()
	lastOK := time.Now()
	for {
		select {
		case <-ctx.Done():
			cancel()
			e.depose(term)
			// Resign so a successor takes over without waiting a TTL.
			dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = e.kv.Delete(dctx, v1.LeaderKey, jetstream.LastRevision(rev))
			dcancel()
			return
		case <-tick.C:
		}
		// A renewal must land within the lease, or another may hold it.
		rctx, rcancel := context.WithTimeout(ctx, e.ttl/3)
		next, err := e.kv.Update(rctx, v1.LeaderKey, val, rev)
		rcancel()
		if err == nil {
			rev, lastOK = next, time.Now()
			continue
		}
		if time.Since(lastOK) < e.ttl*2/3 && !errors.Is(err, jetstream.ErrKeyExists) {
			// A transient failure: retry at the next tick while the lease
			// is surely still ours.
			e.log.Warn("lease renewal failed; retrying", "term", term, "err", err)
			continue
		}
		e.log.Warn("lost leadership", "term", term, "err", err)
		cancel()
		e.depose(term)
		return
	}
}

func (e *Elector) depose(term int64) {
	e.mu.Lock()
	e.current, e.key = v1.LeaderLease{}, nil
	e.mu.Unlock()
	if e.cb.Deposed != nil {
		e.cb.Deposed(term)
	}
}

// follow watches the key and records the current leader until the key is
// gone (deleted or expired), then returns so the caller campaigns.
func (e *Elector) follow(ctx context.Context) {
	w, err := e.kv.Watch(ctx, v1.LeaderKey)
	if err != nil {
		e.setCurrent(v1.LeaderLease{})
		sleep(ctx, e.ttl/3)
		return
	}
	defer func() { _ = w.Stop() }()
	// Expiry by max age removes the message without a marker the watcher
	// sees, so poll for absence as well.
	poll := time.NewTicker(e.ttl / 3)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case entry, ok := <-w.Updates():
			if !ok {
				return
			}
			if entry == nil {
				continue // end of the initial values
			}
			if entry.Operation() != jetstream.KeyValuePut {
				e.setCurrent(v1.LeaderLease{})
				return
			}
			var l v1.LeaderLease
			if json.Unmarshal(entry.Value(), &l) == nil {
				e.setCurrent(l)
			}
		case <-poll.C:
			if _, err := e.kv.Get(ctx, v1.LeaderKey); errors.Is(err, jetstream.ErrKeyNotFound) {
				e.setCurrent(v1.LeaderLease{})
				return
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
