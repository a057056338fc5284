package e2e

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
)

// startLeaderCluster starts the kit's process cluster with several
// coordinators (default 3) of one group, each listening and advertising
// itself as the shipped manifest has a pod do (ManifestEnv, with 127.0.0.1
// for the pod's IP: on every interface, and as <pod IP>:<port> to the
// other coordinators, which forward writes there). It returns once one
// coordinator leads and every agent registered with it.
func startLeaderCluster(t testing.TB, opts procs.Options) *procs.Cluster {
	t.Helper()
	if opts.Coordinators == 0 {
		opts.Coordinators = 3
	}
	opts.CoordinatorEnv = func(_, addr string) []string { return ManifestEnv(t, addr) }
	return procs.Start(t, opts)
}

// rawRecord is a record with the producer that wrote it.
type rawRecord struct {
	Partition int32
	Offset    int64
	Key       string
	Value     []byte
	Producer  producer
	Timestamp time.Time
}

// producer is a producer id and epoch: a new leader's InitProducerID on
// the shared transactional id <group>-leader bumps the epoch (or, rarely,
// the id), so it tells which leader wrote a record.
type producer struct {
	ID    int64
	Epoch int16
}

func (p producer) String() string { return fmt.Sprintf("%d/%d", p.ID, p.Epoch) }

// readRaw reads every data record of topic up to its current end, in
// partition and offset order, read_uncommitted: records of aborted or open
// transactions are included, so a zombie's write shows even if it never
// committed.
func readRaw(c *procs.Cluster, topic string) []rawRecord {
	c.T.Helper()
	var out []rawRecord
	for _, r := range sluicetest.ReadLog(c.T, c.Brokers, c.Prefix+"-test-raw", topic, false) {
		if !r.Attrs.IsControl() {
			out = append(out, rawRecord{Partition: r.Partition, Offset: r.Offset,
				Key: string(r.Key), Value: r.Value, Producer: producer{r.ProducerID, r.ProducerEpoch}, Timestamp: r.Timestamp})
		}
	}
	return out
}

// taskGen is a task's owner and generation as the status topic says.
type taskGen struct {
	Worker     string
	Generation int64
	State      string
}

// taskGenerations returns the last status of every task of the status
// topic (read_committed), by task id "<connector>-<n>".
func taskGenerations(c *procs.Cluster) map[string]taskGen {
	c.T.Helper()
	out := map[string]taskGen{}
	for _, r := range c.ReadTopic(c.Prefix + "-status") {
		rec, err := records.DecodeStatus(string(r.Key), r.Value)
		if err != nil || rec.Kind != records.StatusTask {
			continue
		}
		id := fmt.Sprintf("%s-%d", rec.Connector, rec.Task)
		if rec.Status == nil {
			delete(out, id)
			continue
		}
		out[id] = taskGen{Worker: rec.Status.WorkerID, Generation: rec.Status.Generation, State: rec.Status.State}
	}
	return out
}

// isRefused reports whether err is a refused connection: the request never
// reached a process, so it cannot have had an effect.
func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}
