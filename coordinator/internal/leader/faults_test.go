package leader

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluice-io/sluice/shared/leasetrust"
	"github.com/sluice-io/sluice/shared/wire"
	"github.com/sluice-io/sluice/sluicetest/wait"
)

func testSigner(t *testing.T, seed string) *leasetrust.Signer {
	t.Helper()
	s, err := leasetrust.NewSigner([]byte(strings.Repeat(seed, 32)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// pinned makes an elector that signs with s and trusts only s.
func pinned(nc *nats.Conn, group, id string, ttl time.Duration, s *leasetrust.Signer, r *recorder) *Elector {
	return New(Config{Conn: nc, GroupID: group, ID: id, URL: "http://" + id, TTL: ttl, Signer: s,
		Trust: (&leasetrust.Trust{}).With(s), Callbacks: r.callbacks(), Logger: slog.Default()})
}

func bucketOf(t *testing.T, nc *nats.Conn, group string, ttl time.Duration) jetstream.KeyValue {
	t.Helper()
	kv, err := OpenBucket(context.Background(), nc, group, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// A lease anyone wrote, with a huge term, is neither followed nor allowed to
// hold the key: the coordinator deletes it and leads at a term above the
// bucket's revisions, not above the forged term.
func TestForgedLeaseIsNeverFollowed(t *testing.T) {
	nc := setup(t)
	ttl := 6 * time.Second
	kv := bucketOf(t, nc, "forged", ttl)
	forged, _ := json.Marshal(wire.LeaderLease{ID: "attacker", URL: "http://evil:1", Term: 999999, Key: "AAAA"})
	if _, err := kv.Create(context.Background(), wire.LeaderKey, forged); err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	e := pinned(nc, "forged", "c1", ttl, testSigner(t, "k"), r)
	start := time.Now()
	e.Start()
	defer e.Stop()
	deadline := time.Now().Add(3 * time.Second)
	for !e.IsLeader() {
		if cur := e.Current(); cur.ID == "attacker" {
			t.Fatalf("followed a forged lease: %+v", cur)
		}
		if time.Now().After(deadline) {
			t.Fatal("no leader 3s after a forged lease was written")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if took := time.Since(start); took > ttl/2 {
		t.Fatalf("took %v to replace the forged lease: it waited for it to expire", took)
	}
	if term := e.Current().Term; term >= 999999 {
		t.Fatalf("took the forged term: %d", term)
	}
	// A lease signed by another key is no better.
	e.Stop()
	other := testSigner(t, "x")
	l := wire.LeaderLease{ID: "other", URL: "http://other", Term: 50, Nonce: "n"}
	other.Sign("forged", &l)
	val, _ := json.Marshal(l)
	if _, err := kv.Create(context.Background(), wire.LeaderKey, val); err != nil {
		t.Fatal(err)
	}
	e2 := pinned(nc, "forged", "c2", ttl, testSigner(t, "k"), &recorder{})
	e2.Start()
	defer e2.Stop()
	waitFor(t, 3*time.Second, e2.IsLeader)
}

// A lease its own key signed, but older than a term already seen, is a
// replay: it is deleted and the real coordinator leads again above it.
func TestReplayedLeaseIsDeleted(t *testing.T) {
	nc := setup(t)
	ttl := 6 * time.Second
	kv := bucketOf(t, nc, "replay", ttl)
	s := testSigner(t, "k")
	a := pinned(nc, "replay", "a", ttl, s, &recorder{})
	a.Start()
	waitFor(t, 5*time.Second, a.IsLeader)
	old, _ := kv.Get(context.Background(), wire.LeaderKey)
	a.Stop() // resigns
	b := pinned(nc, "replay", "b", ttl, s, &recorder{})
	b.Start()
	defer b.Stop()
	waitFor(t, 5*time.Second, b.IsLeader)
	term := b.Current().Term
	// An attacker deletes b's lease and puts a's old one back.
	if err := kv.Delete(context.Background(), wire.LeaderKey); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Create(context.Background(), wire.LeaderKey, old.Value()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Second, func() bool { return b.IsLeader() && b.Current().Term > term })
	if cur, _ := kv.Get(context.Background(), wire.LeaderKey); cur != nil {
		var l wire.LeaderLease
		_ = json.Unmarshal(cur.Value(), &l)
		if l.ID != "b" {
			t.Fatalf("the key holds %+v, not b's lease", l)
		}
	}
}

// A deleted bucket is made again and the cluster leads again at once, at a
// term above the one before: agents, which refuse older terms, follow it.
func TestDeletedBucketHeals(t *testing.T) {
	nc := setup(t)
	ttl := 3 * time.Second
	bucketOf(t, nc, "heal", ttl)
	r := &recorder{}
	e := pinned(nc, "heal", "a", ttl, testSigner(t, "k"), r)
	e.Start()
	defer e.Stop()
	waitFor(t, 5*time.Second, e.IsLeader)
	before := e.Current().Term
	js, _ := jetstream.New(nc)
	if err := js.DeleteKeyValue(context.Background(), wire.LeaderBucket("heal")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	waitFor(t, 2*ttl, func() bool { return e.IsLeader() && e.Current().Term > before })
	t.Logf("led again %v after the bucket was deleted, term %d → %d", time.Since(start), before, e.Current().Term)
	if _, err := js.KeyValue(context.Background(), wire.LeaderBucket("heal")); err != nil {
		t.Fatalf("bucket not made again: %v", err)
	}
}

// A lease naming this coordinator that it does not hold — a create that
// landed after its caller gave up — is released at once, not after a TTL.
func TestAbandonedAttemptIsReleased(t *testing.T) {
	nc := setup(t)
	ttl := 6 * time.Second
	kv := bucketOf(t, nc, "abandon", ttl)
	s := testSigner(t, "k")
	l := wire.LeaderLease{ID: "me", URL: "http://me", Term: 1, Nonce: "lost"}
	s.Sign("abandon", &l)
	val, _ := json.Marshal(l)
	if _, err := kv.Create(context.Background(), wire.LeaderKey, val); err != nil {
		t.Fatal(err)
	}
	e := pinned(nc, "abandon", "me", ttl, s, &recorder{})
	start := time.Now()
	e.Start()
	defer e.Stop()
	waitFor(t, 3*time.Second, func() bool { return e.IsLeader() && e.Current().Nonce != "lost" })
	if took := time.Since(start); took > time.Second {
		t.Fatalf("took %v to release its own abandoned lease", took)
	}
}

// A leader whose process died (nothing listens at its address) loses its
// lease within a second, not after the TTL; a leader that listens keeps it.
func TestCrashedLeaderIsReplacedAtOnce(t *testing.T) {
	nc := setup(t)
	ttl := 6 * time.Second
	kv := bucketOf(t, nc, "crash", ttl)
	s := testSigner(t, "k")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	l := wire.LeaderLease{ID: "old", URL: "http://" + addr, Term: 1, Nonce: "n"}
	s.Sign("crash", &l)
	val, _ := json.Marshal(l)
	if _, err := kv.Create(context.Background(), wire.LeaderKey, val); err != nil {
		t.Fatal(err)
	}
	e := pinned(nc, "crash", "new", ttl, s, &recorder{})
	e.Start()
	defer e.Stop()
	waitFor(t, 3*time.Second, func() bool { return e.Current().ID == "old" })
	wait.Consistently(t, time.Second, func() (bool, string) {
		return !e.IsLeader(), "took the lease of a leader that still listens"
	})
	if e.IsLeader() {
		t.Fatal("took the lease of a leader that still listens")
	}
	_ = ln.Close() // kill -9
	start := time.Now()
	waitFor(t, 3*time.Second, e.IsLeader)
	t.Logf("took over %v after the leader's address closed", time.Since(start))
	if took := time.Since(start); took > time.Second {
		t.Fatalf("took %v to replace a dead leader", took)
	}
}
