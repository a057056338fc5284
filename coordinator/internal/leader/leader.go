// Package leader elects one coordinator with a lease in a NATS JetStream
// key-value bucket, an engine Sluice already runs, rather than a protocol of
// its own:
//
//	campaign: Create(key, signed lease of term T) ──ok──► leader
//	             │ exists                                 │ every ttl/3:
//	             ▼                                        ▼ Update(key, lastRev)
//	          follow (watch, probe) ◄── CAS fails / ctx ends ◄── deposed
//
// The bucket's max age is the lease's time to live: an update writes a new
// revision, so a renewed lease never ages out, and a leader that stops
// renewing (crashed, paused, partitioned) loses the key after one TTL. A
// per-key TTL is not used because an Update drops it. A leader that crashed
// is not waited for: followers probe its REST address, and one that
// refuses connections (no process listens there) loses its key at once.
//
// The term orders leaders. A candidate takes one above every term it has
// seen and above the bucket's last revision, so terms keep growing when
// the bucket is deleted, purged or made again, and it signs the lease with
// the pinned leader key (leasetrust). Followers and agents ignore a lease
// that no pinned key signed, or whose term is older than one they have
// seen; coordinators delete such a lease, so a forged or replayed lease
// cannot hold the key either.
//
// Every lease operation runs only while the NATS connection is up and with
// a deadline: nothing waits in nats.go's reconnect buffer to land after its
// caller gave up. A create that did land unanswered leaves a lease of this
// process's own id that it does not hold; it deletes that at once.
package leader

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluice-io/sluice/shared/cmdsig"
	"github.com/sluice-io/sluice/shared/leasetrust"
	"github.com/sluice-io/sluice/shared/logthrottle"
	"github.com/sluice-io/sluice/shared/waker"
	"github.com/sluice-io/sluice/shared/wire"
)

// Callbacks are called from the elector's goroutine, one at a time:
// Elected when this process became leader, Deposed when it stopped being
// leader. Elected's context is cancelled on deposition.
type Callbacks struct {
	Elected func(ctx context.Context, term int64)
	Deposed func(term int64)
}

// Config configures an elector.
type Config struct {
	// Conn is the coordinator's NATS connection.
	Conn *nats.Conn
	// GroupID names the cluster and so the lease bucket.
	GroupID string
	// ID identifies this process in the lease; URL is its REST address,
	// where followers forward writes.
	ID, URL string
	// TTL is the lease's time to live.
	TTL time.Duration
	// Signer signs this process's leases (nil: they go unsigned, which
	// only processes with no pinned key accept). Trust is what leases this
	// process follows; it should include Signer's key.
	Signer *leasetrust.Signer
	Trust  *leasetrust.Trust
	// LeaderGone reports whether the leader at url is surely gone: the
	// probe that lets a crashed leader's key be deleted at once. Default:
	// nothing listens at its address (Refused).
	LeaderGone func(ctx context.Context, url string) bool
	// ProbeEvery is how often followers probe the leader (default 200ms).
	ProbeEvery time.Duration
	Callbacks  Callbacks
	Logger     *slog.Logger
}

// Elector campaigns for and holds the lease.
type Elector struct {
	cfg  Config
	self wire.LeaderLease
	ttl  time.Duration
	log  *slog.Logger
	warn *logthrottle.Limiter
	// poke wakes the loops at once: the connection came back.
	poke *waker.Waker

	bucketMu sync.Mutex
	kv       jetstream.KeyValue

	mu      sync.Mutex
	current wire.LeaderLease
	rev     uint64      // the revision of current, as last read
	maxTerm int64       // the highest trusted term seen
	key     *cmdsig.Key // the signing key of the term this process leads

	cancel context.CancelFunc
	done   chan struct{}
}

// New makes an elector; Start campaigns.
func New(cfg Config) *Elector {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.LeaderGone == nil {
		cfg.LeaderGone = Refused
	}
	if cfg.ProbeEvery <= 0 {
		cfg.ProbeEvery = 200 * time.Millisecond
	}
	return &Elector{cfg: cfg, self: wire.LeaderLease{ID: cfg.ID, URL: cfg.URL}, ttl: cfg.TTL, log: cfg.Logger,
		warn: logthrottle.New(time.Minute), poke: waker.New()}
}

// leaseReplicas is how many NATS servers keep the lease bucket where a
// cluster has them: losing the server that leads its stream then costs a
// stream leader election, not the lease until that server returns.
const leaseReplicas = 3

// OpenBucket creates (or opens) a cluster's lease bucket with the given TTL,
// replicated on three servers of a NATS cluster, on one otherwise.
func OpenBucket(ctx context.Context, nc *nats.Conn, groupID string, ttl time.Duration) (jetstream.KeyValue, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	cfg := jetstream.KeyValueConfig{Bucket: wire.LeaderBucket(groupID), History: 1, TTL: ttl, Replicas: leaseReplicas}
	kv, err := js.CreateOrUpdateKeyValue(ctx, cfg)
	var apiErr *jetstream.APIError
	if err != nil && errors.As(err, &apiErr) {
		// A single server, or a cluster of fewer nodes, cannot hold three
		// replicas (it says so): one is what it can hold.
		cfg.Replicas = 1
		kv, err = js.CreateOrUpdateKeyValue(ctx, cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("open lease bucket %s (NATS must have JetStream enabled): %w", wire.LeaderBucket(groupID), err)
	}
	return kv, nil
}

// Open opens (creating) the bucket, retrying until ctx ends — JetStream
// may still be electing its leaders in a NATS cluster that just started —
// so that a coordinator that cannot reach it fails at start-up with the
// reason.
func (e *Elector) Open(ctx context.Context) error {
	for {
		_, err := e.bucket(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
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

// Poke makes the elector look at the lease now rather than at its next
// tick: the coordinator calls it when its NATS connection comes back, so
// that writes resume as soon as NATS does.
func (e *Elector) Poke() { e.poke.Poke() }

// Current returns the lease as last seen: who leads, at what term. A zero
// Term means no leader is known. It is only ever a trusted lease.
func (e *Elector) Current() wire.LeaderLease {
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
	kv, err := e.bucket(ctx)
	if err != nil || !e.cfg.Conn.IsConnected() {
		return false
	}
	entry, err := kv.Get(ctx, wire.LeaderKey)
	if err != nil {
		return false
	}
	var l wire.LeaderLease
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

func (e *Elector) setCurrent(l wire.LeaderLease, rev uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.current, e.rev = l, rev
	e.maxTerm = max(e.maxTerm, l.Term)
}

func (e *Elector) run(ctx context.Context) {
	defer close(e.done)
	for ctx.Err() == nil {
		if !e.cfg.Conn.IsConnected() {
			// Nothing is sent while NATS is away: it would wait in the
			// reconnect buffer and land after its caller gave up.
			e.setCurrent(wire.LeaderLease{}, 0)
			e.wait(ctx, e.ttl/3)
			continue
		}
		kv, err := e.bucket(ctx)
		if err != nil {
			if e.warn.Due("bucket", time.Now()) {
				e.log.Warn("cannot open the lease bucket; retrying", "err", err)
			}
			e.wait(ctx, e.ttl/3)
			continue
		}
		lease, rev, key, err := e.acquire(ctx, kv)
		switch {
		case err == nil:
			e.lead(ctx, kv, lease, rev, key)
		case bucketGone(err):
			e.dropBucket(kv)
		default:
			// Someone else leads (or NATS is unreachable): follow until the
			// key disappears, then campaign again.
			e.follow(ctx, kv)
		}
	}
}

// acquire creates the key with a lease of a new term, signed, naming the
// public half of a key pair made for that term, whose private half signs
// the term's commands to agents.
func (e *Elector) acquire(ctx context.Context, kv jetstream.KeyValue) (lease wire.LeaderLease, rev uint64, key *cmdsig.Key, err error) {
	if key, err = cmdsig.NewKey(); err != nil {
		return lease, 0, nil, err
	}
	opctx, cancel := context.WithTimeout(ctx, e.opTimeout())
	defer cancel()
	status, err := kv.Status(opctx)
	if err != nil {
		return lease, 0, nil, fmt.Errorf("read the lease bucket's state: %w", err)
	}
	e.mu.Lock()
	var last int64
	if st, ok := status.(*jetstream.KeyValueBucketStatus); ok {
		last = int64(st.StreamInfo().State.LastSeq)
	}
	term := max(e.maxTerm, last) + 1
	e.mu.Unlock()
	lease = e.self
	lease.Term, lease.Key, lease.Nonce = term, key.Public(), nonce()
	if e.cfg.Signer != nil {
		e.cfg.Signer.Sign(e.cfg.GroupID, &lease)
	}
	val, _ := json.Marshal(lease)
	rev, err = kv.Create(opctx, wire.LeaderKey, val)
	if err != nil {
		return lease, 0, nil, err
	}
	return lease, rev, key, nil
}

// lead holds the lease, renewing it, until a renewal fails or ctx ends.
func (e *Elector) lead(ctx context.Context, kv jetstream.KeyValue, lease wire.LeaderLease, rev uint64, key *cmdsig.Key) {
	term := lease.Term
	e.mu.Lock()
	e.current, e.rev, e.key = lease, rev, key
	e.maxTerm = max(e.maxTerm, term)
	e.mu.Unlock()
	e.log.Info("elected leader", "term", term)
	lctx, cancel := context.WithCancel(ctx)
	if e.cfg.Callbacks.Elected != nil {
		e.cfg.Callbacks.Elected(lctx, term)
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
			_ = kv.Delete(dctx, wire.LeaderKey, jetstream.LastRevision(rev))
			dcancel()
			return
		case <-tick.C:
		case <-e.poke.C():
		}
		// A renewal must land within the lease, or another may hold it; one
		// sent while NATS is away would wait in the reconnect buffer.
		err := errDisconnected
		if e.cfg.Conn.IsConnected() {
			rctx, rcancel := context.WithTimeout(ctx, e.opTimeout())
			var next uint64
			next, err = kv.Update(rctx, wire.LeaderKey, val, rev)
			rcancel()
			if err == nil {
				rev, lastOK = next, time.Now()
				e.mu.Lock()
				e.rev = rev
				e.mu.Unlock()
				continue
			}
		}
		if e.bucketMissing(ctx, kv, err) {
			err = fmt.Errorf("%w: %w", jetstream.ErrBucketNotFound, err)
		}
		if time.Since(lastOK) < e.ttl*2/3 && !lost(err) {
			// A transient failure: retry at the next tick while the lease
			// is surely still ours.
			e.log.Warn("lease renewal failed; retrying", "term", term, "err", err)
			continue
		}
		e.log.Warn("lost leadership", "term", term, "err", err)
		if bucketGone(err) {
			e.dropBucket(kv)
		}
		cancel()
		e.depose(term)
		return
	}
}

var errDisconnected = errors.New("not connected to NATS")

// lost reports whether a renewal's error means the lease is surely no
// longer this process's: it was replaced or deleted, or the bucket is gone.
func lost(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, jetstream.ErrKeyExists) || bucketGone(err) ||
		(errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence)
}

// bucketGone reports whether err says the lease bucket no longer exists
// (deleted, or NATS lost its storage).
func bucketGone(err error) bool {
	return errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrStreamNotFound)
}

// bucketMissing tells, after a write to the key failed with no stream to
// answer it, whether the bucket is gone (then the lease is) or JetStream is
// only slow to answer (then it may still be ours).
func (e *Elector) bucketMissing(ctx context.Context, kv jetstream.KeyValue, err error) bool {
	if !errors.Is(err, jetstream.ErrNoStreamResponse) && !errors.Is(err, nats.ErrNoResponders) {
		return false
	}
	sctx, cancel := context.WithTimeout(ctx, e.opTimeout())
	defer cancel()
	_, serr := kv.Status(sctx)
	return bucketGone(serr)
}

func (e *Elector) depose(term int64) {
	e.mu.Lock()
	e.current, e.key = wire.LeaderLease{}, nil
	e.mu.Unlock()
	if e.cfg.Callbacks.Deposed != nil {
		e.cfg.Callbacks.Deposed(term)
	}
}

// opTimeout bounds one lease operation: well within a renewal period, so
// that a renewal that does not answer is retried before the lease is gone.
func (e *Elector) opTimeout() time.Duration {
	return min(e.ttl/3, 2*time.Second)
}

// bucket returns the lease bucket, creating it when it does not exist: a
// bucket deleted under a running cluster is made again by its
// coordinators.
func (e *Elector) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	e.bucketMu.Lock()
	defer e.bucketMu.Unlock()
	if e.kv != nil {
		return e.kv, nil
	}
	octx, cancel := context.WithTimeout(ctx, max(e.opTimeout(), 2*time.Second))
	defer cancel()
	kv, err := OpenBucket(octx, e.cfg.Conn, e.cfg.GroupID, e.ttl)
	if err != nil {
		return nil, err
	}
	e.kv = kv
	return kv, nil
}

// dropBucket forgets kv, which is gone, so the next campaign makes it again.
func (e *Elector) dropBucket(kv jetstream.KeyValue) {
	e.bucketMu.Lock()
	defer e.bucketMu.Unlock()
	if e.kv == kv {
		e.kv = nil
		e.log.Warn("the lease bucket is gone; making it again", "bucket", wire.LeaderBucket(e.cfg.GroupID))
	}
}

// wait sleeps for d, or until poked or ctx ends.
func (e *Elector) wait(ctx context.Context, d time.Duration) { e.poke.Wait(ctx, d) }

func nonce() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
