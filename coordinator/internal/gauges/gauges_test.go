package gauges

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/wire"
)

// connectors is a config store of fixed connectors.
type connectors map[string]store.Connector

func (c connectors) Get(name string) (store.Connector, bool) {
	conn, ok := c[name]
	return conn, ok
}

// agents answer gauges commands from fixed replies, or fail.
type agents struct {
	replies map[string]wire.GaugesReply
	fail    map[string]error
	// mu guards asked: the reader asks its agents at the same time.
	mu    sync.Mutex
	asked []wire.GaugesRequest
}

func (a *agents) Gauges(_ context.Context, agent string, req wire.GaugesRequest) (wire.GaugesReply, error) {
	a.mu.Lock()
	a.asked = append(a.asked, req)
	a.mu.Unlock()
	if err := a.fail[agent]; err != nil {
		return wire.GaugesReply{}, err
	}
	return a.replies[agent], nil
}

// TestConnectorGauges checks the answer's every case: a task read from
// its agent, one whose agent failed, one its agent does not hold, one
// placed nowhere; and an unknown connector's 404.
func TestConnectorGauges(t *testing.T) {
	lag := api.Gauge{Name: "postgres_slot_lag_bytes", Help: "h", Value: 7}
	a := &agents{
		replies: map[string]wire.GaugesReply{
			"a1": {Tasks: []wire.TaskGauges{{ID: api.TaskID{Connector: "c", Task: 0}, Gauges: []api.Gauge{lag}}}},
			"a3": {Tasks: []wire.TaskGauges{}},
		},
		fail: map[string]error{"a2": &api.Error{Code: api.CodeTimeout, Message: "request on sluice.v3.g.agent.a2.gauges timed out"}},
	}
	placed := map[int]string{0: "a1", 1: "a2", 2: "a3"}
	r := &Reader{}
	r.Configure(Config{
		Connectors: connectors{"c": {Name: "c", Tasks: make([]map[string]string, 4)}},
		Placed: func(id api.TaskID) (string, bool) {
			agent, ok := placed[id.Task]
			return agent, ok
		},
		RPC:  a,
		Term: func() int64 { return 3 },
	})
	got, err := r.ConnectorGauges(context.Background(), "c")
	if err != nil {
		t.Fatal(err)
	}
	want := api.ConnectorGauges{Connector: "c", Tasks: []api.TaskGauges{
		{ID: 0, WorkerID: "a1", Gauges: []api.Gauge{lag}},
		{ID: 1, WorkerID: "a2", Gauges: []api.Gauge{}, Error: "agent a2 did not answer within 5s"},
		{ID: 2, WorkerID: "a3", Gauges: []api.Gauge{}, Error: "agent a3 does not run the task (yet): it is starting, moving or stopping"},
		{ID: 3, Gauges: []api.Gauge{}, Error: "the task is not placed on any agent"},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if len(a.asked) != 3 {
		t.Errorf("%d agents asked, want one request per agent (3)", len(a.asked))
	}
	for _, req := range a.asked {
		if req != (wire.GaugesRequest{Term: 3, Connector: "c"}) {
			t.Errorf("request %+v", req)
		}
	}

	_, err = r.ConnectorGauges(context.Background(), "nope")
	var e *api.Error
	if !errors.As(err, &e) || e.Code != api.CodeNotFound || e.Message != "Connector nope not found" {
		t.Errorf("unknown connector: %v", err)
	}
}
