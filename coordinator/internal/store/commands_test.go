package store

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/shared/records"
)

// rec is an expected record; a nil value is a tombstone.
type rec struct {
	key   string
	value *string
}

func val(s string) *string { return &s }

func gotRecords(recs []records.Record) []rec {
	out := make([]rec, len(recs))
	for i, r := range recs {
		out[i] = rec{key: r.Key}
		if r.Value != nil {
			out[i].value = val(string(r.Value))
		}
	}
	return out
}

func (r rec) String() string {
	if r.value == nil {
		return r.key + " = null"
	}
	return r.key + " = " + *r.value
}

// TestCommandRecords pins the records each command writes, byte for byte as
// Kafka Connect writes them, and their order.
func TestCommandRecords(t *testing.T) {
	config := map[string]string{"connector.class": "FileStreamSource", "name": "my-conn"}
	const configValue = `{"properties":{"connector.class":"FileStreamSource","name":"my-conn"}}`
	tests := []struct {
		name string
		cmd  Command
		want []rec
	}{
		{"create running without a target state writes the config alone",
			CreateConnector{Name: "my-conn", Config: config},
			[]rec{{"connector-my-conn", val(configValue)}}},
		{"create paused writes the target state first",
			CreateConnector{Name: "my-conn", Config: config, TargetState: records.TargetPaused},
			[]rec{{"target-state-my-conn", val(`{"state":"PAUSED","state.v2":"PAUSED"}`)}, {"connector-my-conn", val(configValue)}}},
		{"create stopped writes the target state first, PAUSED for old readers",
			CreateConnector{Name: "my-conn", Config: config, TargetState: records.TargetStopped},
			[]rec{{"target-state-my-conn", val(`{"state":"PAUSED","state.v2":"STOPPED"}`)}, {"connector-my-conn", val(configValue)}}},
		{"create with an explicit STARTED (initial offsets) writes the target state too",
			CreateConnector{Name: "my-conn", Config: config, TargetState: records.TargetStarted},
			[]rec{{"target-state-my-conn", val(`{"state":"STARTED","state.v2":"STARTED"}`)}, {"connector-my-conn", val(configValue)}}},
		{"put config",
			PutConnectorConfig{Name: "my-conn", Config: config},
			[]rec{{"connector-my-conn", val(configValue)}}},
		{"put a nil config writes empty properties",
			PutConnectorConfig{Name: "c"},
			[]rec{{"connector-c", val(`{"properties":{}}`)}}},
		{"set target paused",
			SetTargetState{Name: "c", State: records.TargetPaused},
			[]rec{{"target-state-c", val(`{"state":"PAUSED","state.v2":"PAUSED"}`)}}},
		{"set target started",
			SetTargetState{Name: "c", State: records.TargetStarted},
			[]rec{{"target-state-c", val(`{"state":"STARTED","state.v2":"STARTED"}`)}}},
		{"put no task configs writes the commit alone",
			PutTaskConfigs{Name: "c"},
			[]rec{{"commit-c", val(`{"tasks":0}`)}}},
		{"put three task configs, then their commit",
			PutTaskConfigs{Name: "my-conn", Tasks: []map[string]string{{"t": "0"}, {"t": "1"}, {"t": "2", "task.class": "X"}}},
			[]rec{
				{"task-my-conn-0", val(`{"properties":{"t":"0"}}`)},
				{"task-my-conn-1", val(`{"properties":{"t":"1"}}`)},
				{"task-my-conn-2", val(`{"properties":{"t":"2","task.class":"X"}}`)},
				{"commit-my-conn", val(`{"tasks":3}`)},
			}},
		{"stop empties the task set, then targets STOPPED",
			StopConnector{Name: "c"},
			[]rec{{"commit-c", val(`{"tasks":0}`)}, {"target-state-c", val(`{"state":"PAUSED","state.v2":"STOPPED"}`)}}},
		{"delete tombstones the config and the target state",
			DeleteConnector{Name: "c"},
			[]rec{{"connector-c", nil}, {"target-state-c", nil}}},
		{"fencing count",
			PutFencingCount{Name: "c", Count: 3},
			[]rec{{"tasks-fencing-c", val(`{"task-count":3}`)}}},
		{"cluster log level, spelled as log4j does",
			SetLoggerLevel{Namespace: "io.sluice.agent", Level: " debug"},
			[]rec{{"logger-cluster-io.sluice.agent", val(`{"level":"DEBUG"}`)}}},
		{"cluster log level of the root, named as sent",
			SetLoggerLevel{Namespace: "ROOT", Level: "OFF"},
			[]rec{{"logger-cluster-ROOT", val(`{"level":"OFF"}`)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, err := encode([]Command{tt.cmd})
			if err != nil {
				t.Fatal(err)
			}
			if got := gotRecords(recs); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("records:\n got %v\nwant %v", got, tt.want)
			}
			// Every record must decode: a record no reader accepts is lost.
			for _, r := range recs {
				if _, err := records.DecodeConfig(r.Key, r.Value); err != nil {
					t.Fatalf("written record does not decode: %v", err)
				}
			}
		})
	}
}

// TestEncodeKeepsCommandOrder: commands in one call are written one after
// the other, each with its records in its own order.
func TestEncodeKeepsCommandOrder(t *testing.T) {
	recs, err := encode([]Command{
		PutTaskConfigs{Name: "c", Tasks: []map[string]string{{}}},
		SetTargetState{Name: "c", State: records.TargetPaused},
		PutFencingCount{Name: "c", Count: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []rec{
		{"task-c-0", val(`{"properties":{}}`)},
		{"commit-c", val(`{"tasks":1}`)},
		{"target-state-c", val(`{"state":"PAUSED","state.v2":"PAUSED"}`)},
		{"tasks-fencing-c", val(`{"task-count":1}`)},
	}
	if got := gotRecords(recs); !reflect.DeepEqual(got, want) {
		t.Fatalf("records:\n got %v\nwant %v", got, want)
	}
}

// TestInvalidCommands: a command whose records no reader would accept is
// refused, and a batch holding one encodes nothing.
func TestInvalidCommands(t *testing.T) {
	tests := []struct {
		name string
		cmds []Command
		want string
	}{
		{"REST's RUNNING is not a stored target state",
			[]Command{SetTargetState{Name: "c", State: "RUNNING"}}, `unknown target state "RUNNING"`},
		{"empty target state",
			[]Command{SetTargetState{Name: "c"}}, `unknown target state ""`},
		{"create with an unknown target state",
			[]Command{CreateConnector{Name: "c", TargetState: "paused"}}, `unknown target state "paused"`},
		{"negative fencing count",
			[]Command{PutFencingCount{Name: "c", Count: -1}}, "negative task count -1"},
		{"invalid log level",
			[]Command{SetLoggerLevel{Namespace: "root", Level: "LOUD"}}, `invalid log level "LOUD"`},
		{"empty logger namespace",
			[]Command{SetLoggerLevel{Level: "INFO"}}, "empty logger namespace"},
		{"one invalid command in a batch",
			[]Command{PutConnectorConfig{Name: "c"}, SetTargetState{Name: "c", State: "BOGUS"}}, `unknown target state "BOGUS"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, err := encode(tt.cmds)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			if recs != nil {
				t.Fatalf("records encoded despite the error: %v", gotRecords(recs))
			}
		})
	}
}

// TestCommandsAppliedToState: the records of a batch of commands, fed to a
// ConfigState as a follower reads them, give the expected connector.
func TestCommandsAppliedToState(t *testing.T) {
	config := map[string]string{"connector.class": "X", "tasks.max": "2"}
	tasks := []map[string]string{{"t": "0"}, {"t": "1"}}
	tests := []struct {
		name   string
		cmds   []Command
		want   Connector
		exists bool
		bound  int
	}{
		{"created paused with tasks and their fencing count",
			[]Command{
				CreateConnector{Name: "c", Config: config, TargetState: records.TargetPaused},
				PutTaskConfigs{Name: "c", Tasks: tasks},
				PutFencingCount{Name: "c", Count: 2},
			},
			Connector{Name: "c", Config: config, TargetState: records.TargetPaused, Tasks: tasks, FencingCount: 2, taskHighWater: 2},
			true, 2},
		{"created running without a target state",
			[]Command{CreateConnector{Name: "c", Config: config}},
			Connector{Name: "c", Config: config, TargetState: records.TargetStarted, Tasks: []map[string]string{}, FencingCount: -1},
			true, 0},
		{"stopped after running tasks",
			[]Command{
				CreateConnector{Name: "c", Config: config},
				PutTaskConfigs{Name: "c", Tasks: tasks},
				StopConnector{Name: "c"},
			},
			Connector{Name: "c", Config: config, TargetState: records.TargetStopped, Tasks: []map[string]string{}, FencingCount: -1, taskHighWater: 2},
			true, 2},
		{"config replaced, then resumed",
			[]Command{
				CreateConnector{Name: "c", Config: map[string]string{"old": "1"}, TargetState: records.TargetStopped},
				PutConnectorConfig{Name: "c", Config: config},
				SetTargetState{Name: "c", State: records.TargetStarted},
			},
			Connector{Name: "c", Config: config, TargetState: records.TargetStarted, Tasks: []map[string]string{}, FencingCount: -1},
			true, 0},
		{"deleted: gone, its task id bound kept",
			[]Command{
				CreateConnector{Name: "c", Config: config, TargetState: records.TargetPaused},
				PutTaskConfigs{Name: "c", Tasks: tasks},
				DeleteConnector{Name: "c"},
			},
			Connector{}, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewConfigState()
			recs, err := encode(tt.cmds)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				apply(t, s, r.Key, r.Value)
			}
			got, ok := s.Get("c")
			if ok != tt.exists {
				t.Fatalf("exists = %v, want %v", ok, tt.exists)
			}
			if ok {
				if got.Version == 0 {
					t.Fatal("version not set")
				}
				tt.want.Version = got.Version
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("connector:\n got %+v\nwant %+v", got, tt.want)
			}
			if b := s.TaskIDBound("c"); b != tt.bound {
				t.Fatalf("task id bound %d, want %d", b, tt.bound)
			}
		})
	}
}
