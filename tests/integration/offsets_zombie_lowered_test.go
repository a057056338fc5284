package integration

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestOffsetsZombieOfLoweredTasksMaxFenced: a connector runs 2 tasks, then
// its tasks.max is lowered to 1. Task 1 is held inside its final offset
// commit (its transaction open) and never stops: a zombie that no current
// config names. An offsets change must still fence it — every task id the
// connector ever had, not just up to the current tasks.max — so the alter
// completes while the zombie is held, and the zombie's commit, released,
// is aborted and never seen.
func TestOffsetsZombieOfLoweredTasksMaxFenced(t *testing.T) {
	t.Parallel()
	const name = "zlow"
	z := startZombieCluster(t, name, 1)
	c := z.c
	topic := c.Name("lowered")
	cfg := generatorCfg(topic, "streams", "2", "tasks.max", "2", "rate", "200")
	mustCreate(c, name, cfg, "")
	c.WaitState(name, "RUNNING", 2, "RUNNING")
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		return len(topicValues(c, topic)) >= 20, "the generator has not produced yet"
	})

	// Lower tasks.max: task 1 is revoked, and its final commit is held.
	z.arm()
	c.Must(http.StatusOK, "PUT", "/connectors/"+name+"/config", cfgWith(cfg, "tasks.max", "1"))
	z.waitHeld()
	c.Must(http.StatusNoContent, "PUT", "/connectors/"+name+"/stop", nil)

	stream1 := map[string]any{"stream": json.Number("1")}
	altered := map[string]any{"seq": json.Number("7")}
	start := time.Now()
	patch(t, c, name, body(offset{Partition: stream1, Offset: altered}), http.StatusOK, msgAlterFramework)
	t.Logf("alter answered in %v while the zombie is held", time.Since(start).Round(time.Millisecond))
	want := canon(t, []offset{{Partition: stream1, Offset: altered}})
	stream1Now := func() string {
		for _, o := range getOffsets(c, name) {
			if canon(t, []offset{{Partition: o.Partition}}) == canon(t, []offset{{Partition: stream1}}) {
				return canon(t, []offset{o})
			}
		}
		return "none"
	}
	if got := stream1Now(); got != want {
		t.Fatalf("stream 1 right after the alter: %s, want %s", got, want)
	}
	// The fence aborted the zombie's open transaction: its record is
	// followed by its producer's abort marker, before it is even released.
	zombie := zombieRecord(t, c, name, stream1)
	if zombie.end != "abort" {
		t.Fatalf("the zombie's offset transaction (seq %d) ended with %q after the alter, want abort: fenced", zombie.seq, zombie.end)
	}

	// Released, it cannot commit: nothing it wrote ever becomes visible.
	z.release()
	sluicetest.Consistently(t, 3*time.Second, func() (bool, string) {
		if got := stream1Now(); got != want {
			return false, "after the zombie was released, stream 1 is " + got + ", want " + want
		}
		if z := zombieRecord(t, c, name, stream1); z.end != "abort" {
			return false, "the zombie's transaction ended with " + z.end
		}
		return true, ""
	})
}

// heldRecord is a source task's offset record and how its transaction ended.
type heldRecord struct {
	seq int64
	end string
}

// zombieRecord finds, read_uncommitted, the one offset record of partition
// that was not committed: the held task's. It fails the test if there is
// none or more than one.
func zombieRecord(t *testing.T, c *sluicetest.Cluster, name string, partition map[string]any) heldRecord {
	t.Helper()
	log := rawOffsetRecords(c, name, partition)
	var found []heldRecord
	for i, r := range log {
		if r.control {
			continue
		}
		if end := markerAfter(log, i); end != "commit" {
			var off struct {
				Seq int64 `json:"seq"`
			}
			if err := json.Unmarshal(r.value, &off); err != nil {
				t.Fatalf("offset value %q: %v", r.value, err)
			}
			found = append(found, heldRecord{seq: off.Seq, end: end})
		}
	}
	if len(found) != 1 {
		t.Fatalf("want exactly one uncommitted offset record of %v (the zombie's), found %+v", partition, found)
	}
	return found[0]
}
