package integration

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/sluicetest"
)

// TestOffsetsZombieSourceTaskFenced: a source task is held inside its last
// offset commit — its transaction is open, its offset record produced — and
// does not stop when its connector is stopped. The alter waits for it up to
// the task shutdown timeout, then fences the task's transactional id and
// writes its own offset. Released, the zombie's commit fails: its
// transaction was aborted by the fence. Neither GET …/offsets nor a
// read_committed reader ever sees the zombie's position, and the task stops.
func TestOffsetsZombieSourceTaskFenced(t *testing.T) {
	t.Parallel()
	const name = "zsrc"
	z := startZombieCluster(t, name, -1)
	c := z.c
	topic := c.Name("zombie")
	in := lines(1, 10)
	writeLines(t, workPath(c, "zombie.txt"), in[:6])
	posA, posB, posZ := bytesOf(in[:2]), bytesOf(in[:5]), bytesOf(in)

	fileSource(c, name, "zombie.txt", topic, "STOPPED")
	patch(t, c, name, body(filePos("zombie.txt", posA)), http.StatusOK, msgAlterDefinite)
	c.Must(http.StatusAccepted, "PUT", "/connectors/"+name+"/resume", nil)
	waitTopic(c, topic, in[2:6])
	// The task commits its first position at once (posF, wherever its
	// first batch ended), and nothing more until it stops.
	var posF int64
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		got := getOffsets(c, name)
		if len(got) == 1 {
			_, _ = fmt.Sscan(fmt.Sprint(got[0].Offset["position"]), &posF)
		}
		return posF > posA, fmt.Sprintf("offsets %v: the first position is not committed", got)
	})
	appendLines(t, workPath(c, "zombie.txt"), in[6:])
	waitTopic(c, topic, in[2:])
	wantOffsets(c, name, []offset{filePos("zombie.txt", posF)})

	// Stop: the task's final commit (position Z) is held mid-transaction.
	z.arm()
	c.Must(http.StatusNoContent, "PUT", "/connectors/"+name+"/stop", nil)
	z.waitHeld()
	if !fileOpen(t, workPath(c, "zombie.txt")) {
		t.Fatal("the held task should still hold its file open")
	}
	wantOffsets(c, name, []offset{filePos("zombie.txt", posF)})

	start := time.Now()
	patch(t, c, name, body(filePos("zombie.txt", posB)), http.StatusOK, msgAlterDefinite)
	// It waited for the task to stop, up to the task shutdown timeout.
	if d := time.Since(start); d < 1500*time.Millisecond {
		t.Fatalf("alter answered after %v: it should have waited up to the task shutdown timeout (2s) for the task to stop", d)
	}
	wantOffsets(c, name, []offset{filePos("zombie.txt", posB)})

	z.release()
	// The task finishes stopping: its file is closed once it has.
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		return !fileOpen(t, workPath(c, "zombie.txt")), "the zombie task still holds its file"
	})
	wantOffsets(c, name, []offset{filePos("zombie.txt", posB)})

	// The zombie did write its offset, in a transaction that was aborted.
	log := rawOffsetRecords(c, name, map[string]any{"filename": "zombie.txt"})
	zombie := -1
	for i, r := range log {
		if !r.control && positionOf(t, r.value) == posZ {
			zombie = i
		}
	}
	if zombie < 0 {
		t.Fatalf("the zombie's offset record (position %d) is not in the log: %+v", posZ, log)
	}
	if end := markerAfter(log, zombie); end != "abort" {
		t.Fatalf("the zombie's transaction ended with %q, want abort (fenced)", end)
	}

	// read_committed: the two alters and the task's first commit, never
	// the zombie's position.
	var committed []int64
	for _, r := range c.ReadTopic(c.Prefix + "-offsets") {
		if k, ok := offsetKey(r.Key); ok && k.connector == name {
			committed = append(committed, positionOf(t, r.Value))
		}
	}
	if want := []int64{posA, posF, posB}; !reflect.DeepEqual(committed, want) {
		t.Fatalf("read_committed offset records of %s: positions %v, want %v", name, committed, want)
	}

	// Resumed, the connector continues from the altered position.
	c.Must(http.StatusAccepted, "PUT", "/connectors/"+name+"/resume", nil)
	waitTopic(c, topic, concat(in[2:], in[5:]))
}

// zombieCluster is a one-agent cluster whose source tasks commit their
// first position at once and then only when they stop (no periodic
// commits), with a task shutdown timeout
// of 2s, and which can hold one task of one connector inside its next
// offset commit — transaction open, offset record produced — until
// released: a zombie that ignores its context.
type zombieCluster struct {
	c         *sluicetest.Cluster
	armed     atomic.Bool
	held      chan struct{}
	releaseCh chan struct{}
	released  atomic.Bool
}

// startZombieCluster starts the cluster; the task held is task of
// connector (any task when task is -1). The test's end releases a task
// still held.
func startZombieCluster(t *testing.T, connector string, task int) *zombieCluster {
	z := &zombieCluster{held: make(chan struct{}, 1), releaseCh: make(chan struct{})}
	hook := func(_ context.Context, id api.TaskID) error {
		if id.Connector != connector || (task >= 0 && id.Task != task) || !z.armed.CompareAndSwap(true, false) {
			return nil
		}
		z.held <- struct{}{}
		select {
		case <-z.releaseCh:
		case <-time.After(2 * time.Minute):
		}
		return nil
	}
	z.c = sluicetest.Start(t, sluicetest.Options{
		Agents:             1,
		ShutdownTimeout:    2 * time.Second,
		FlushInterval:      time.Hour,
		BeforeOffsetCommit: hook,
	})
	t.Cleanup(z.release)
	return z
}

// arm holds the next offset commit of the chosen task.
func (z *zombieCluster) arm() { z.armed.Store(true) }

// waitHeld waits until the armed commit is held.
func (z *zombieCluster) waitHeld() {
	z.c.T.Helper()
	select {
	case <-z.held:
	case <-time.After(30 * time.Second):
		z.c.T.Fatal("the task's offset commit never started")
	}
}

// release lets the held task go on; it may be called more than once.
func (z *zombieCluster) release() {
	if z.released.CompareAndSwap(false, true) {
		close(z.releaseCh)
	}
}

// fileOpen reports whether this process holds path open (the agents run
// in-process), as Linux's /proc shows it; Sluice's tests run on Linux.
func fileOpen(t *testing.T, path string) bool {
	want, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == want {
			return true
		}
	}
	return false
}

type rawRecord struct {
	offset     int64
	producerID int64
	control    bool
	marker     string // "abort" or "commit" for a control record
	value      []byte
}

type decodedKey struct {
	connector string
	partition any
}

func offsetKey(key []byte) (decodedKey, bool) {
	var k []any
	dec := json.NewDecoder(bytes.NewReader(key))
	dec.UseNumber()
	if dec.Decode(&k) != nil || len(k) != 2 {
		return decodedKey{}, false
	}
	name, ok := k[0].(string)
	return decodedKey{name, k[1]}, ok
}

// rawOffsetRecords reads, read_uncommitted, every record of connector's
// partition in the offsets topic and the transaction markers of its
// topic-partition, in log order.
func rawOffsetRecords(c *sluicetest.Cluster, connector string, partition map[string]any) []rawRecord {
	c.T.Helper()
	byPart := map[int32][]rawRecord{}
	home := int32(-1)
	for _, r := range sluicetest.ReadLog(c.T, c.Brokers, "test-raw-reader", c.Prefix+"-offsets", false) {
		rr := rawRecord{offset: r.Offset, producerID: r.ProducerID, control: r.Attrs.IsControl(), value: r.Value}
		if rr.control {
			rr.marker = "abort"
			if len(r.Key) >= 4 && binary.BigEndian.Uint16(r.Key[2:4]) == 1 {
				rr.marker = "commit"
			}
			byPart[r.Partition] = append(byPart[r.Partition], rr)
			continue
		}
		if k, ok := offsetKey(r.Key); ok && k.connector == connector && reflect.DeepEqual(k.partition, partition) {
			home = r.Partition
			byPart[r.Partition] = append(byPart[r.Partition], rr)
		}
	}
	return byPart[home]
}

// markerAfter is how the transaction of log[i] ended: the first marker of
// its producer after it, or "" if none.
func markerAfter(log []rawRecord, i int) string {
	for _, r := range log[i+1:] {
		if r.control && r.producerID == log[i].producerID {
			return r.marker
		}
	}
	return ""
}

func positionOf(t *testing.T, value []byte) int64 {
	if value == nil {
		return -1
	}
	var off struct {
		Position int64 `json:"position"`
	}
	if err := json.Unmarshal(value, &off); err != nil {
		t.Fatalf("offset value %q: %v", value, err)
	}
	return off.Position
}

// TestOffsetsNoAgent: with no agent to carry out an offset change, alter and
// reset answer 503 promptly, for a source and a sink, and change nothing;
// GET still answers, since the coordinator reads offsets itself.
func TestOffsetsNoAgent(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, Lease: 2 * time.Second})
	snk := c.Name("snk")
	topic := c.Name("noagent")
	createTopic(c, topic, 1)
	fileSource(c, "src", "noagent.txt", topic, "STOPPED")
	fileSink(c, snk, topic, "noagent-out.txt", "STOPPED")
	patch(t, c, "src", body(filePos("noagent.txt", 3)), http.StatusOK, msgAlterDefinite)
	patch(t, c, snk, body(sinkPos(topic, 0, 2)), http.StatusOK, msgAlterDefinite)
	c.StopAgent(0)

	calls := func(phase string) {
		tests := []struct {
			name, method, path string
			body               any
			msg                string
		}{
			{"alter source", "PATCH", "/connectors/src/offsets", body(filePos("noagent.txt", 9)), "No agent is available to alter offsets for connector src"},
			{"reset source", "DELETE", "/connectors/src/offsets", nil, "No agent is available to reset offsets for connector src"},
			{"delete source with its offsets", "DELETE", "/connectors/src?reset_offsets=true", nil, "No agent is available to reset offsets for connector src"},
			{"alter sink", "PATCH", "/connectors/" + snk + "/offsets", body(sinkPos(topic, 0, 9)), "No agent is available to alter offsets for connector " + snk},
			{"reset sink", "DELETE", "/connectors/" + snk + "/offsets", nil, "No agent is available to reset offsets for connector " + snk},
			{"delete sink with its offsets", "DELETE", "/connectors/" + snk + "?reset_offsets=true", nil, "No agent is available to reset offsets for connector " + snk},
		}
		for _, tt := range tests {
			t.Run(phase+"/"+tt.name, func(t *testing.T) {
				start := time.Now()
				expect(t, c, tt.method, tt.path, tt.body, http.StatusServiceUnavailable, tt.msg)
				if d := time.Since(start); d > 5*time.Second {
					t.Fatalf("answered after %v: too slow", d)
				}
			})
		}
		for _, n := range []string{"src", snk} {
			expect(t, c, "GET", "/connectors/"+n, nil, http.StatusOK, "")
		}
		wantOffsets(c, "src", []offset{filePos("noagent.txt", 3)})
		wantOffsets(c, snk, []offset{sinkPos(topic, 0, 2)})
	}
	// Right after the agent left, and once its lease expired.
	calls("agent gone")
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		n := c.Coordinator.RegisteredAgents()
		return n == 0, fmt.Sprintf("%d agents registered", n)
	})
	calls("lease expired")

	c.StartAgent(0)
	c.WaitAgents(1)
	patch(t, c, "src", body(filePos("noagent.txt", 9)), http.StatusOK, msgAlterDefinite)
	wantOffsets(c, "src", []offset{filePos("noagent.txt", 9)})
}
