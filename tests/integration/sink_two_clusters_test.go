package integration

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestTwoClustersSameNamedSink runs two Sluice clusters (different group
// ids) on one Kafka, each with a sink named the same on the same topic. As
// with two Kafka Connect clusters, both sinks are members of the one
// consumer group connect-<name> and split its partitions; neither fences
// the other, because each task's group.instance.id carries its cluster's
// group id.
func TestTwoClustersSameNamedSink(t *testing.T) {
	t.Parallel()
	be := sluicetest.StartBackends(t)
	a := sluicetest.Start(t, sluicetest.Options{Agents: 1, Backends: &be})
	b := sluicetest.Start(t, sluicetest.Options{Agents: 1, Backends: &be})
	if a.GroupID == b.GroupID {
		t.Fatalf("both clusters have the group id %q", a.GroupID)
	}
	const name, partitions = "orders-sink", 2
	group := "connect-" + name
	topic := a.Name("orders")
	sluicetest.CreateTopic(t, be.Brokers, topic, partitions)
	for _, c := range []*sluicetest.Cluster{a, b} {
		mustCreate(c, name, fileSinkCfg("out.txt", topic), "")
		c.WaitState(name, "RUNNING", 1, "RUNNING")
	}

	// Both are members of connect-<name>, each with its cluster's id, and
	// the group gave each one partition.
	want := map[string]int{a.GroupID + "-" + name + "-0": 1, b.GroupID + "-" + name + "-0": 1}
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		got := groupMembers(t, a, group)
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprintf("members of %s (instance id: partitions): %v, want %v", group, got, want)
	})

	// Records on both partitions reach one cluster's sink or the other's.
	recs := make([]sluicetest.Record, 40)
	for i := range recs {
		recs[i] = sluicetest.Record{Key: []byte("k" + strconv.Itoa(i)), Value: []byte("v" + strconv.Itoa(i))}
	}
	a.ProduceRecords(topic, recs...)
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		la, lb := fileLines(t, workPath(a, "out.txt")), fileLines(t, workPath(b, "out.txt"))
		for _, r := range recs {
			if !slices.Contains(la, string(r.Value)) && !slices.Contains(lb, string(r.Value)) {
				return false, fmt.Sprintf("%s in neither file: %d lines in a's, %d in b's", r.Value, len(la), len(lb))
			}
		}
		return len(la) > 0 && len(lb) > 0, fmt.Sprintf("a's file %d lines, b's %d: one cluster's sink got no records", len(la), len(lb))
	})

	// And both keep running: no task was fenced by the other cluster's.
	sluicetest.Consistently(t, 2*time.Second, func() (bool, string) {
		for _, c := range []*sluicetest.Cluster{a, b} {
			s, _ := c.Status(name)
			if len(s.Tasks) != 1 || s.Tasks[0].State != "RUNNING" {
				return false, fmt.Sprintf("%s's %s: %+v", c.GroupID, name, s)
			}
		}
		return true, ""
	})
	for _, c := range []*sluicetest.Cluster{a, b} {
		if lines := c.Logged("sink task fenced"); len(lines) > 0 {
			t.Errorf("%s: %q", c.GroupID, lines)
		}
	}
	// The sink that joined second says it shares its group, naming the
	// other cluster's member; the first never saw a foreign member at its
	// assignments, or saw the second: either way no warning names its own.
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		lines := b.Logged("sink shares its consumer group with members outside this cluster", a.GroupID+"-"+name+"-0")
		return len(lines) > 0, "cluster b did not warn that it shares connect-" + name + " with cluster a"
	})
	for _, c := range []*sluicetest.Cluster{a, b} {
		if lines := c.Logged("sink shares its consumer group", c.GroupID+"-"+name+"-0]"); len(lines) > 0 {
			t.Errorf("%s warns of its own member: %q", c.GroupID, lines)
		}
	}
}

// groupMembers are the members of group by their group.instance.id (a
// dynamic member by its member id), each with the number of partitions
// the group assigned it.
func groupMembers(t testing.TB, c *sluicetest.Cluster, group string) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	described, err := c.Admin().DescribeGroups(ctx, group)
	if err != nil {
		t.Fatalf("describe %s: %v", group, err)
	}
	out := map[string]int{}
	for _, m := range described[group].Members {
		id := "dynamic " + m.MemberID
		if m.InstanceID != nil {
			id = *m.InstanceID
		}
		n := 0
		if assigned, ok := m.Assigned.AsConsumer(); ok {
			for _, tp := range assigned.Topics {
				n += len(tp.Partitions)
			}
		}
		out[id] = n
	}
	return out
}
