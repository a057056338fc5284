package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/shared/records"
)

// A sink task is a static member of its connector's consumer group
// (KIP-345): its group.instance.id is derived from the cluster's group id,
// the connector and the task (records.SinkInstanceID), the same on
// whichever agent of the cluster runs it and unlike any other cluster's.
//
//   - An agent that crashed leaves its members in the group, and with
//     dynamic membership their partitions would wait out the session
//     timeout (45 s by default). The task's replacement joins with the same
//     instance id, and the broker hands it the member's place and partitions
//     at once, without a rebalance.
//   - The broker fences the old member, should it still be alive (a paused
//     or cut-off agent whose task was placed elsewhere): its heartbeats and
//     commits fail with FENCED_INSTANCE_ID. The old instance then stops at
//     once — it must not join again, which would fence its replacement in
//     turn — and fails.
//   - A static member does not leave the group when its client closes, so
//     a task that stops for any other reason (stopped, paused, moved,
//     deleted, its task count lowered) leaves explicitly, by instance and
//     member id, after its final commit: the group is left as dynamic
//     membership would leave it, and the offsets of a stopped sink can be
//     changed at once. The member id keeps a late leave from removing a
//     replacement that already took the place.

// errFencedMember is a sink task's consumer fenced by its group: another
// instance of the task joined with its group.instance.id.
var errFencedMember = errors.New("fenced: a newer instance of this sink task joined its consumer group with the same group.instance.id")

// memberLeaveTimeout bounds the leave of a stopping static member.
const memberLeaveTimeout = 5 * time.Second

// staticMember is a sink task's static membership.
type staticMember struct {
	group, instance string
	fenced          atomic.Bool
}

// membershipOpts are the consumer options of the task's group membership:
// none for dynamic membership (Config.SinkDynamicMembership).
func (r *sinkRunner) membershipOpts(group string) []kgo.Opt {
	if r.t.cfg.SinkDynamicMembership {
		return nil
	}
	r.member = &staticMember{group: group, instance: records.SinkInstanceID(r.t.cfg.GroupID, r.t.id.Connector, r.t.id.Task)}
	return []kgo.Opt{kgo.InstanceID(r.member.instance), kgo.WithHooks(fenceHook{r})}
}

// fenceHook stops a fenced member's consumer the moment its group session
// ends with FENCED_INSTANCE_ID, before franz-go joins again after its
// backoff; the task loop then fails the task.
type fenceHook struct{ r *sinkRunner }

// OnGroupManageError implements kgo.HookGroupManageError.
func (h fenceHook) OnGroupManageError(err error) {
	if !errors.Is(err, kerr.FencedInstanceID) {
		return
	}
	h.r.member.fenced.Store(true)
	h.r.t.log.Warn("sink task fenced: a newer instance joined its consumer group", "group", h.r.member.group, "group_instance_id", h.r.member.instance)
	// Not from here: Close waits for the group's loop, which runs this hook.
	go h.r.client.Close()
}

// fencedErr returns errFencedMember once the task's member was fenced, and
// wraps a commit error that says it was.
func (r *sinkRunner) fencedErr(err error) error {
	if r.member == nil {
		return err
	}
	if errors.Is(err, kerr.FencedInstanceID) {
		r.member.fenced.Store(true)
	}
	if r.member.fenced.Load() {
		if err == nil {
			return fmt.Errorf("%w (%s)", errFencedMember, r.member.instance)
		}
		return fmt.Errorf("%w (%s): %v", errFencedMember, r.member.instance, err)
	}
	return err
}

// closeMember closes the consumer and, for a static member that was not
// fenced, leaves the group by its instance and member id.
func (r *sinkRunner) closeMember() {
	m := r.member
	var before string
	if m != nil {
		before, _ = r.client.GroupMetadata()
	}
	r.client.Close() // commits in OnPartitionsRevoked first
	if m == nil || m.fenced.Load() {
		return
	}
	// The member id is read again after the close: a join and sync in
	// flight when it began finish first, and a member that joined then,
	// left by nobody, would keep the group from being deleted (an offsets
	// reset) until its session timed out.
	memberID, _ := r.client.GroupMetadata()
	if memberID == "" {
		memberID = before
	}
	if memberID == "" {
		return
	}
	if err := r.leaveGroup(memberID); err != nil {
		r.t.log.Warn("leaving the consumer group failed; the member leaves at its session timeout", "group", m.group,
			"group_instance_id", m.instance, "err", err)
	}
}

// leaveGroup sends the LeaveGroup of a static member, through a client of
// its own: the task's is closed by then.
func (r *sinkRunner) leaveGroup(memberID string) error {
	cl, err := kgo.NewClient(r.t.kafkaOpts("leave")...)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), memberLeaveTimeout)
	defer cancel()
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = r.member.group
	member := kmsg.NewLeaveGroupRequestMember()
	member.MemberID, member.InstanceID = memberID, &r.member.instance
	member.Reason = kmsg.StringPtr("the sink task stopped")
	req.Members = append(req.Members, member)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return err
	}
	// Fenced or unknown is no failure: a replacement took the place, or the
	// group already dropped the member. Either way it is not ours to leave.
	for _, m := range resp.Members {
		if err := kerr.ErrorForCode(m.ErrorCode); err != nil && !errors.Is(err, kerr.FencedInstanceID) && !errors.Is(err, kerr.UnknownMemberID) {
			return err
		}
	}
	return nil
}
