package javahost

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-io/sluice/connect"
)

// fakeHost is a test double of the Java connector host: a Conn of its own
// on the other end of the socket, serving the protocol with canned plugin
// behaviour and keeping what it was told, which "test.state" returns.
type fakeHost struct {
	mode  string // the fakeEnv the test set
	c     *Conn
	ready chan struct{} // closed once c is set: a request may come first

	mu    sync.Mutex
	state fakeState
	seq   uint32
}

// fakeState is what the fake host was told.
type fakeState struct {
	Started    []string            `json:"started"`
	Stopped    []string            `json:"stopped"`
	Committed  []uint32            `json:"committed"`
	Commits    int                 `json:"commits"`
	Put        []string            `json:"put"`
	Opened     []string            `json:"opened"`
	Closed     []string            `json:"closed"`
	Connectors []string            `json:"connectors"`
	Worker     map[string]string   `json:"worker"`
	Offsets    map[string][]string `json:"offsets"` // task → what offsets.read answered at its start
}

// fakeOtherProtocol is the fake host's mode in which it states another
// protocol version at hello than the agent's.
const fakeOtherProtocol = "other-protocol"

// The fake host's behaviour, chosen by a connector config's "fake" key.
const (
	fakeCrash = "crash" // task.start: write to stderr and exit 137
	fakeFail  = "fail"  // connector.start, task.start: throw
)

func (h *fakeHost) Request(ctx context.Context, op string, body []byte) ([]byte, error) {
	var req struct {
		ID              string            `json:"id"`
		Name            string            `json:"name"`
		Config          map[string]string `json:"config"`
		ConnectorConfig map[string]string `json:"connector_config"`
		Worker          map[string]string `json:"worker"`
		MaxTasks        int               `json:"max_tasks"`
		Records         []struct {
			Seq uint32 `json:"seq"`
		} `json:"records"`
		Partitions []topicPartition `json:"partitions"`
		Offsets    json.RawMessage  `json:"offsets"`
	}
	<-h.ready
	if op != "task.put" {
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, fmt.Errorf("fake host: %s: %w", op, err)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch op {
	case OpHostHello:
		var hello helloRequest
		if err := json.Unmarshal(body, &hello); err != nil {
			return nil, err
		}
		protocol := ProtocolVersion
		if h.mode == fakeOtherProtocol {
			protocol = ProtocolVersion + 1
		}
		return json.Marshal(helloReply{Version: "fake", KafkaVersion: "4.4.0", Protocol: protocol})
	case "test.state":
		return json.Marshal(h.state)
	case "task.start":
		switch req.ConnectorConfig["fake"] {
		case fakeCrash:
			fmt.Fprintln(os.Stderr, "Exception in thread \"task\" java.lang.OutOfMemoryError: Java heap space")
			os.Exit(137)
		case fakeFail:
			return nil, &HostError{Message: "boom", Trace: "org.apache.kafka.connect.errors.ConnectException: boom\n\tat Fake.start(Fake.java:1)"}
		}
		h.state.Started = append(h.state.Started, req.ID)
		h.state.Worker = req.Worker
		kind := "source"
		if strings.Contains(req.ConnectorConfig["connector.class"], "Sink") {
			return json.Marshal(map[string]string{"kind": "sink"})
		}
		// A source task reads its offsets while starting, as Kafka
		// Connect's do.
		h.mu.Unlock()
		var read struct {
			Offsets []map[string]any `json:"offsets"`
		}
		err := h.c.CallJSON(ctx, "offsets.read", map[string]any{"id": req.ID, "partitions": []map[string]any{{"file": "in"}, {"file": "none"}}}, &read)
		h.mu.Lock()
		if err != nil {
			// As a Java task whose OffsetStorageReader throws may go on
			// from the start.
			return json.Marshal(map[string]string{"kind": kind})
		}
		if h.state.Offsets == nil {
			h.state.Offsets = map[string][]string{}
		}
		for _, o := range read.Offsets {
			b, _ := json.Marshal(o)
			h.state.Offsets[req.ID] = append(h.state.Offsets[req.ID], string(b))
		}
		return json.Marshal(map[string]string{"kind": kind})
	case "task.poll":
		var recs []connect.SourceRecord
		for range 2 {
			h.seq++
			recs = append(recs, connect.SourceRecord{Topic: "out", RawKey: []byte("k"), RawValue: fmt.Appendf(nil, "v%d", h.seq),
				Headers:         []connect.Header{{Key: "h", Value: []byte("hv")}},
				SourcePartition: map[string]any{"file": "in"}, SourceOffset: map[string]any{"pos": float64(h.seq)}, Ref: uint64(h.seq)})
		}
		return encodeSourceBatchForTest(recs), nil
	case "task.commit_records":
		for _, r := range req.Records {
			h.state.Committed = append(h.state.Committed, r.Seq)
		}
	case "task.commit":
		h.state.Commits++
	case "task.put":
		id, recs, err := decodeSinkBatchForTest(body)
		if err != nil {
			return nil, err
		}
		// "bad" fails its conversion (the reply names it); "report" is
		// reported by the task, serialized again as "reported".
		var errant []map[string]any
		for i, r := range recs {
			switch string(r.Value) {
			case "bad":
				errant = append(errant, map[string]any{"index": i, "stage": "VALUE_CONVERTER", "class": "JsonConverter",
					"exception": "DataException", "message": "not JSON", "trace": "DataException: not JSON"})
				continue
			case "report":
				h.mu.Unlock()
				err := h.c.CallJSON(ctx, "task.report", map[string]any{"id": id,
					"record": map[string]any{"topic": r.Topic, "partition": r.Partition, "offset": r.Offset, "timestamp": 7,
						"timestamp_type": 1, "key": nil, "value": []byte("reported"), "headers": []map[string]any{{"key": "h", "value": nil}}},
					"stage": "TASK_PUT", "class": "org.apache.kafka.connect.sink.SinkTask", "exception": "E", "message": nil, "trace": ""}, nil)
				h.mu.Lock()
				if err != nil {
					return nil, err
				}
			}
			h.state.Put = append(h.state.Put, fmt.Sprintf("%s-%d@%d=%s", r.Topic, r.Partition, r.Offset, r.Value))
			// Records that ask for a SinkTaskContext action get it.
			switch string(r.Value) {
			case "rewind":
				h.notify("task.rewind", mustJSON(offsetsMsg{id, []partitionOffset{{r.Topic, r.Partition, 0}}}))
			case "pause", "resume":
				h.notify("task."+string(r.Value), mustJSON(partitionsReq{id, []topicPartition{{r.Topic, r.Partition}}}))
			case "commit":
				h.notify("task.request_commit", mustJSON(taskRef{id}))
			}
		}
		if errant != nil {
			return json.Marshal(map[string]any{"errant": errant})
		}
	case "task.open", "task.close":
		for _, p := range req.Partitions {
			tp := fmt.Sprintf("%s-%d", p.Topic, p.Partition)
			if op == "task.open" {
				h.state.Opened = append(h.state.Opened, tp)
			} else {
				h.state.Closed = append(h.state.Closed, tp)
			}
		}
	case "task.pre_commit":
		// Everything but the last record of each partition may be
		// committed, so the agent's commit must follow this answer.
		var in []partitionOffset
		if err := json.Unmarshal(req.Offsets, &in); err != nil {
			return nil, err
		}
		out := []partitionOffset{}
		for _, o := range in {
			out = append(out, partitionOffset{o.Topic, o.Partition, o.Offset - 1})
		}
		return json.Marshal(map[string]any{"offsets": out})
	case "task.stop":
		h.state.Stopped = append(h.state.Stopped, req.ID)
	case "connector.validate":
		return []byte(`{"configs":[{"definition":{"name":"file"},"value":{"name":"file","value":"x","errors":[]}}]}`), nil
	case "connector.config_def":
		return []byte(`{"configs":[{"definition":{"name":"file"}}]}`), nil
	case "connector.start":
		if req.Config["fake"] == fakeFail {
			return nil, &HostError{Message: "cannot start", Trace: "java.lang.IllegalStateException: cannot start\n\tat Fake"}
		}
		h.state.Connectors = append(h.state.Connectors, req.Name)
		h.notify("connector.reconfigure", mustJSON(map[string]string{"name": req.Name}))
	case "connector.task_configs":
		var out []map[string]string
		for i := range req.MaxTasks {
			out = append(out, map[string]string{"task": fmt.Sprint(i)})
		}
		return json.Marshal(map[string]any{"configs": out})
	case "connector.stop":
		h.state.Connectors = nil
	case "connector.alter_offsets":
		var offs []map[string]any
		if err := json.Unmarshal(req.Offsets, &offs); err != nil || len(offs) == 0 {
			return nil, &HostError{Message: "no offsets to alter", Trace: "T"}
		}
		return []byte(`{"definite":true}`), nil
	case "test.raise":
		h.notify("connector.error", mustJSON(map[string]string{"name": req.Name, "message": "lost the database", "trace": "T"}))
	default:
		return nil, fmt.Errorf("fake host: no op %q", op)
	}
	return []byte("{}"), nil
}

func (h *fakeHost) Notice(string, []byte) {}

// notify sends a notification from another goroutine, as the real host's
// come, not in the request's answer; a closed connection drops it.
func (h *fakeHost) notify(op string, body []byte) {
	go func() { _ = h.c.Notify(op, body) }()
}

// fakeEnv switches a test binary started as the host's java into the fake
// host (TestMain).
const fakeEnv = "SLUICE_JAVAHOST_FAKE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(runFake(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// runFake is the fake host's main: the arguments are the JVM's.
func runFake(mode string, args []string) int {
	arg := func(name string) string {
		for i, a := range args {
			if a == name && i+1 < len(args) {
				return args[i+1]
			}
		}
		return ""
	}
	if !strings.Contains(strings.Join(args, " "), MainClass) {
		fmt.Fprintln(os.Stderr, "fake host: no main class in", args)
		return 2
	}
	switch {
	case mode == "exit":
		fmt.Fprintln(os.Stderr, "Error: Could not find or load main class")
		return 1
	case containsArg(args, "--scan"):
		fmt.Printf(`[{"class":"io.example.JdbcSourceConnector","type":"source","version":"10.7.4"},{"class":"org.apache.kafka.connect.file.FileStreamSourceConnector","type":"source","version":"4.4.0"},{"class":"io.example.Plugin","type":"sink","version":%q},{"class":"io.example.JdbcSourceConnector","type":"source","version":"10.7.4"}]`, arg("--plugin-path"))
		return 0
	}
	nc, err := net.Dial("unix", arg("--socket"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake host:", err)
		return 1
	}
	h := &fakeHost{mode: mode, ready: make(chan struct{})}
	h.c = newConn(nc, h, nil, nil)
	close(h.ready)
	<-h.c.Done()
	return 0
}

func containsArg(args []string, a string) bool {
	for _, x := range args {
		if x == a {
			return true
		}
	}
	return false
}

// newFakeSupervisor is a Supervisor whose java is this test binary as the
// fake host.
func newFakeSupervisor(t *testing.T, mode string) *Supervisor {
	t.Helper()
	t.Setenv(fakeEnv, mode)
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/"+HostJar, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := NewSupervisor(Config{Java: exe, HostDir: dir, PluginPath: []string{"/p1", "p2"}, WorkDir: t.TempDir()})
	t.Cleanup(s.Stop)
	return s
}

// hostState asks the fake host what it was told.
func hostState(t *testing.T, s *Supervisor) fakeState {
	t.Helper()
	c, err := s.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var st fakeState
	if err := c.CallJSON(context.Background(), "test.state", struct{}{}, &st); err != nil {
		t.Fatal(err)
	}
	return st
}
