package leader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluice-io/sluice/shared/wire"
)

// follow watches the key and records the current leader until the key is
// gone (deleted, expired, or taken away from a leader that is gone or was
// never trusted), then returns so the caller campaigns.
func (e *Elector) follow(ctx context.Context, kv jetstream.KeyValue) {
	w, err := kv.Watch(ctx, wire.LeaderKey)
	if err != nil {
		if bucketGone(err) {
			e.dropBucket(kv)
			return
		}
		e.setCurrent(wire.LeaderLease{}, 0)
		e.wait(ctx, e.ttl/3)
		return
	}
	defer func() { _ = w.Stop() }()
	// Expiry by max age removes the message without a marker the watcher
	// sees, so the key is read as well, every readEvery and whenever the
	// connection comes back; the leader's address is probed more often.
	probe := time.NewTicker(e.cfg.ProbeEvery)
	defer probe.Stop()
	lastRead, refusals := time.Now(), 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.poke.C():
			if !e.read(ctx, kv) {
				return
			}
			lastRead = time.Now()
		case entry, ok := <-w.Updates():
			if !ok {
				return
			}
			if entry == nil {
				continue // end of the initial values
			}
			if entry.Operation() != jetstream.KeyValuePut {
				e.setCurrent(wire.LeaderLease{}, 0)
				return
			}
			if !e.take(ctx, kv, entry.Value(), entry.Revision()) {
				return
			}
		case <-probe.C:
			if !e.cfg.Conn.IsConnected() {
				e.setCurrent(wire.LeaderLease{}, 0)
				return
			}
			if time.Since(lastRead) >= min(e.ttl/3, readEvery) {
				if !e.read(ctx, kv) {
					return
				}
				lastRead = time.Now()
			}
			cur := e.Current()
			if cur.Term == 0 || cur.ID == e.self.ID || cur.URL == "" {
				refusals = 0
				continue
			}
			pctx, cancel := context.WithTimeout(ctx, e.cfg.ProbeEvery)
			gone := e.cfg.LeaderGone(pctx, cur.URL)
			cancel()
			if !gone {
				refusals = 0
				continue
			}
			// Twice in a row, so one reset connection is not a death.
			if refusals++; refusals >= 2 {
				e.log.Warn("the leader is gone (nothing listens at its address); taking its lease", "leader", cur.ID, "url", cur.URL, "term", cur.Term)
				e.remove(ctx, kv, e.revision(), "leader gone")
				return
			}
		}
	}
}

// readEvery bounds how long a follower goes without reading the key: a
// lease its own abandoned attempt left (a request queued in a paused NATS
// server lands when it resumes, with no reconnect to say so) is found and
// released within it.
const readEvery = 500 * time.Millisecond

// read reads the key and takes what it holds; false: campaign now.
func (e *Elector) read(ctx context.Context, kv jetstream.KeyValue) bool {
	rctx, cancel := context.WithTimeout(ctx, e.opTimeout())
	entry, err := kv.Get(rctx, wire.LeaderKey)
	cancel()
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		e.setCurrent(wire.LeaderLease{}, 0)
		return false
	case bucketGone(err):
		e.setCurrent(wire.LeaderLease{}, 0)
		e.dropBucket(kv)
		return false
	case err != nil:
		return true // NATS is slow or away; the next read decides
	}
	return e.take(ctx, kv, entry.Value(), entry.Revision())
}

// take follows the lease in val, written at rev, if it can be trusted;
// false: the key was deleted (or is gone), campaign now. A lease is not
// followed, and is deleted so that a real leader can take the key, when no
// pinned key signed it, when its term is older than one seen (a replayed
// lease) or beyond wire.MaxLeaderTerm, or when it names this process, which does not
// hold it: a create whose answer never came landed after all.
func (e *Elector) take(ctx context.Context, kv jetstream.KeyValue, val []byte, rev uint64) bool {
	var l wire.LeaderLease
	if err := json.Unmarshal(val, &l); err != nil {
		e.remove(ctx, kv, rev, fmt.Sprintf("undecodable lease: %v", err))
		return false
	}
	e.mu.Lock()
	seen := e.maxTerm
	e.mu.Unlock()
	var why string
	switch err := e.cfg.Trust.Verify(e.cfg.GroupID, l); {
	case err != nil:
		why = err.Error()
	case l.Term <= 0 || l.Term > wire.MaxLeaderTerm:
		why = fmt.Sprintf("term %d is out of range", l.Term)
	case l.Term < seen:
		why = fmt.Sprintf("term %d is older than term %d, already seen (a replayed lease)", l.Term, seen)
	case l.ID == e.self.ID:
		why = "an attempt of this coordinator to take the lease that it gave up waiting for"
	case l.URL == e.self.URL:
		// Only one process listens at an address: this lease is an earlier
		// run's of this coordinator (restarted in place), which is gone.
		why = "a lease of an earlier run of this coordinator, at its address"
	}
	if why != "" {
		e.remove(ctx, kv, rev, why)
		return false
	}
	e.setCurrent(l, rev)
	return true
}

// remove deletes the lease at revision rev (no newer one), so the caller
// can campaign; it follows no leader meanwhile.
func (e *Elector) remove(ctx context.Context, kv jetstream.KeyValue, rev uint64, why string) {
	e.setCurrent(wire.LeaderLease{}, 0)
	if e.warn.Due("remove/"+why, time.Now()) {
		e.log.Warn("deleting a lease no coordinator should follow", "why", why, "revision", rev)
	}
	dctx, cancel := context.WithTimeout(ctx, e.opTimeout())
	defer cancel()
	if err := kv.Delete(dctx, wire.LeaderKey, jetstream.LastRevision(rev)); err != nil && bucketGone(err) {
		e.dropBucket(kv)
	}
}

func (e *Elector) revision() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.rev
}

// Refused reports whether nothing listens at url's host and port: the
// connection is refused, as it is when the process that listened there has
// died while its host lives. A paused process's address still accepts
// connections (its kernel does), and an unreachable host answers nothing:
// neither counts, and the lease expires instead.
func Refused(ctx context.Context, rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return false
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err == nil {
		_ = conn.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}
