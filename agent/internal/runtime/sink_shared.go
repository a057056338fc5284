package runtime

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/records"
)

// A sink's consumer group is connect-<name> whatever the cluster, as in
// Kafka Connect: a same-named sink of another Sluice cluster on the same
// Kafka, or a Kafka Connect worker's (a pipeline half moved), joins the
// same group and takes part of the topic's partitions. Nothing fails — the
// members split the partitions, exactly as two Kafka Connect clusters'
// sinks do — so nothing refuses it; but it is rarely meant, and each side
// then sees only part of the topic. So at each assignment a static member
// looks at the group's other members, and logs a warning once for each new
// set of members that are not its own cluster's tasks of the connector.

// sharedGroupWarning says what a sink sharing its group means and does.
const sharedGroupWarning = "sink shares its consumer group with members outside this cluster: they split the topic's partitions with this connector's tasks, as two Kafka Connect clusters' sinks would; give the connector a group of its own (consumer.override.group.id) to read every partition"

// describeGroupTimeout bounds the look at the group's members.
const describeGroupTimeout = 10 * time.Second

// sharedGroup is what a sink task last warned of.
type sharedGroup struct {
	mu     sync.Mutex
	warned string // the foreign members last warned of, joined
}

// noteGroupMembers looks at group's members through cl, the task's
// consumer (the callback's: it may run before open stored it), in the
// background (it is called from the group's rebalance callback, which
// must not wait on the group), and warns of members outside the cluster.
// Only a static member can tell: dynamic members, its own included, carry
// no instance id.
func (r *sinkRunner) noteGroupMembers(cl *kgo.Client, group string) {
	if r.member == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), describeGroupTimeout)
		defer cancel()
		described, err := kadm.NewClient(cl).DescribeGroups(ctx, group)
		if err == nil {
			err = described.Error()
		}
		if err != nil {
			r.t.log.Debug("describing the consumer group failed", "group", group, "err", err)
			return
		}
		foreign := foreignMembers(described[group].Members, r.t.cfg.GroupID, r.t.id.Connector)
		key := strings.Join(foreign, ",")
		r.shared.mu.Lock()
		defer r.shared.mu.Unlock()
		if key == "" || key == r.shared.warned {
			return
		}
		r.shared.warned = key
		r.t.log.Warn(sharedGroupWarning, "group", group, "members", foreign)
	}()
}

// foreignMembers are the members of a sink's group that are not tasks of
// connector in the cluster with groupID, sorted: their instance ids, or for
// a dynamic member (no instance id) its client id and host.
func foreignMembers(members []kadm.DescribedGroupMember, groupID, connector string) []string {
	var out []string
	for _, m := range members {
		switch {
		case m.InstanceID == nil:
			out = append(out, "dynamic "+m.ClientID+"@"+m.ClientHost)
		case !records.IsSinkInstanceOf(*m.InstanceID, groupID, connector):
			out = append(out, *m.InstanceID)
		}
	}
	slices.Sort(out)
	return out
}
