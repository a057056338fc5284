package signals

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

type connectors map[string]store.Connector

func (c connectors) Get(name string) (store.Connector, bool) { v, ok := c[name]; return v, ok }

// rpc answers err, else the signal's id, and remembers the request.
type rpc struct {
	err  error
	sent []wire.SignalRequest
	to   []string
}

func (r *rpc) Signal(_ context.Context, agent string, req wire.SignalRequest) (wire.SignalReply, error) {
	r.sent, r.to = append(r.sent, req), append(r.to, agent)
	return wire.SignalReply{ID: "id-1"}, r.err
}

func TestSignal(t *testing.T) {
	task := []map[string]string{{}}
	conns := connectors{
		"running":  {Name: "running", TargetState: records.TargetStarted, Tasks: task},
		"paused":   {Name: "paused", TargetState: records.TargetPaused, Tasks: task},
		"stopped":  {Name: "stopped", TargetState: records.TargetStopped},
		"unplaced": {Name: "unplaced", TargetState: records.TargetStarted, Tasks: task},
		"starting": {Name: "starting", TargetState: records.TargetStarted},
	}
	placed := func(id api.TaskID) (string, bool) { return "agent-1", id.Connector != "unplaced" }
	sig := api.ConnectorSignal{Type: "stop-snapshot"}
	for _, tt := range []struct {
		name, connector string
		agentErr        error
		code            api.Code
		msg             string
	}{
		{name: "sent", connector: "running"},
		{name: "a paused connector's task holds it until it resumes", connector: "paused"},
		{name: "unknown", connector: "nope", code: api.CodeNotFound, msg: "Connector nope not found"},
		{name: "stopped", connector: "stopped", code: api.CodeConflict, msg: "Connector stopped is stopped"},
		{name: "no tasks yet", connector: "starting", code: api.CodeConflict, msg: "has no tasks yet"},
		{name: "not placed", connector: "unplaced", code: api.CodeConflict, msg: "task 0 is not placed on any agent"},
		{name: "the agent's refusal as it is", connector: "running", agentErr: api.Errorf(api.CodeBadRequest, "Connector running's class X does not take signals"),
			code: api.CodeBadRequest, msg: "does not take signals"},
		{name: "an agent that does not answer", connector: "running", agentErr: api.Errorf(api.CodeTimeout, "timed out"),
			code: api.CodeInternal, msg: "Request timed out: agent agent-1 did not answer"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &rpc{err: tt.agentErr}
			var s Sender
			s.Configure(Config{Connectors: conns, Placed: placed, RPC: r, Term: func() int64 { return 7 }})
			got, err := s.Signal(context.Background(), tt.connector, sig)
			if tt.code != 0 {
				if !api.IsCode(err, tt.code) || !strings.Contains(err.Error(), tt.msg) {
					t.Fatalf("error %v, want %d with %q", err, tt.code, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := api.SignalSent{Connector: tt.connector, ID: "id-1", Type: "stop-snapshot", WorkerID: "agent-1"}
			if got != want || len(r.sent) != 1 || r.sent[0].Term != 7 || r.sent[0].Task != (api.TaskID{Connector: tt.connector}) || r.to[0] != "agent-1" {
				t.Fatalf("answer %+v, sent %+v to %v", got, r.sent, r.to)
			}
		})
	}
}
