package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/natsrpc"
	"github.com/sluice-io/sluice/shared/wire"
	"github.com/sluice-io/sluice/sluicetest"
)

// TestAgentRefusesOffsetsPastItsLease: a request's timeout runs from when
// the agent handles it, so an agent that was cut off from the leader (or
// paused) with the request waiting must tell from its own lease that the
// leader may have moved on: past its lease it refuses offsets requests as
// unavailable, until it has registered again.
func TestAgentRefusesOffsetsPastItsLease(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, Lease: time.Second})
	nc, err := nats.Connect(c.NATSURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	subject := wire.AgentSubject(wire.SubjectAgentSourceOffsets, c.GroupID, c.Agents[0].ID())
	// The test stands in for the leader, signing as it does.
	var sign natsrpc.Signer
	fence := func(term int64) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req := wire.SourceOffsetsRequest{Term: term, Connector: "fenced", Op: wire.OffsetsOpAlter,
			FenceIDs: []string{c.GroupID + "-fenced-0"}}
		return natsrpc.Call(ctx, nc, subject, req, &wire.OffsetsReply{}, natsrpc.SignWith(sign))
	}
	_, lease := c.Coordinator.Leader()
	sign = c.Coordinator.CommandSigner(lease.Term)
	// A 1 s lease is short on a loaded machine: a heartbeat answered late
	// leaves the agent unregistered for a moment; it accepts once it is.
	sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
		err := fence(lease.Term)
		return err == nil, fmt.Sprintf("a registered agent refused: %v", err)
	})

	c.StopCoordinator()
	sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
		err := fence(lease.Term)
		return api.IsCode(err, api.CodeUnavailable) && strings.Contains(err.Error(), "longer than its lease"),
			fmt.Sprintf("an agent cut off from its leader answered %v", err)
	})

	c.StartCoordinator()
	c.WaitAgents(1)
	_, lease = c.Coordinator.Leader()
	sign = c.Coordinator.CommandSigner(lease.Term)
	// The coordinator counts the agent before the agent has read the
	// coordinator's answer.
	sluicetest.Eventually(t, 10*time.Second, func() (bool, string) {
		err := fence(lease.Term)
		return err == nil, fmt.Sprintf("the agent, registered again, answered %v", err)
	})
}
