package agentrpc

import (
	"context"
	"encoding/json"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"
)

// Commands that name many tasks are split into requests that each fit one
// NATS message, so that one large assignment does not hold up the others:
//
//	tasks ─► batches (each ≤ max_payload) ─► one request each, in order
//	         └─ one task larger than that alone ─► a batch of its own, sent in chunks

// envelopeRoom is what a command takes in a NATS message besides its list
// of tasks: the term, field names, the headers.
const envelopeRoom = 1 << 10

// budget is how many bytes of tasks one request may carry: the NATS
// server's max_payload, less the envelope. Zero means no limit is known
// (not connected yet): one request carries everything.
func (c *Client) budget() int64 {
	limit := c.nc.MaxPayload()
	if limit <= 0 {
		return 0
	}
	return max(limit-envelopeRoom, 1)
}

// batches splits items, in order, into runs whose JSON list takes at most
// budget bytes. An item larger than budget is a run of its own.
func batches[T any](items []T, budget int64) [][]T {
	if budget <= 0 || len(items) == 0 {
		return [][]T{items}
	}
	var out [][]T
	var cur []T
	var size int64
	for _, it := range items {
		b, _ := json.Marshal(it)
		n := int64(len(b)) + 1 // and its comma
		if len(cur) > 0 && size+n > budget {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, it)
		size += n
	}
	return append(out, cur)
}

// AssignFailure is a batch of assignments whose request failed.
type AssignFailure struct {
	Tasks []wire.TaskAssignment
	Err   error
}

// Assign starts or updates tasks on agent, in requests that each fit one
// NATS message; one assignment too large for one alone is sent in chunks.
// Every batch is sent, in order, whatever became of the ones before: a
// batch that failed is returned with its error, and the others still run.
// refused merges what the agent refused (wire.AssignReply). issued is the
// highest generation the leader has issued (wire.AssignRequest.Issued).
func (c *Client) Assign(ctx context.Context, agent string, term, issued int64, tasks []wire.TaskAssignment) (refused []api.TaskID, failed []AssignFailure) {
	for _, b := range batches(tasks, c.budget()) {
		var reply wire.AssignReply
		if err := c.call(ctx, wire.SubjectAgentAssign, agent, term, wire.AssignRequest{Term: term, Tasks: b, Issued: issued}, &reply); err != nil {
			failed = append(failed, AssignFailure{Tasks: b, Err: err})
			continue
		}
		refused = append(refused, reply.Refused...)
	}
	return refused, failed
}

// Revoke stops tasks on agent; it answers once they stopped and committed.
// The ids go in requests that each fit one NATS message; the replies are
// merged, and the first error is returned after every request was tried.
func (c *Client) Revoke(ctx context.Context, agent string, req wire.RevokeRequest) (wire.RevokeReply, error) {
	merged := wire.RevokeReply{Stopped: []api.TaskID{}}
	var errs []error
	for _, ids := range batches(req.Tasks, c.budget()) {
		part := req
		part.Tasks = ids
		var reply wire.RevokeReply
		if err := c.call(ctx, wire.SubjectAgentRevoke, agent, part.Term, part, &reply); err != nil {
			errs = append(errs, err)
			continue
		}
		merged.Stopped = append(merged.Stopped, reply.Stopped...)
		merged.Failed = append(merged.Failed, reply.Failed...)
	}
	if len(errs) > 0 {
		return merged, errs[0]
	}
	return merged, nil
}
