package javahost

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/shared/wire"
)

// updateFrames rewrites testdata/frames from goldenFrames: run
// `go test ./agent/internal/javahost -run TestGoldenFrames -update-frames`
// after changing a body, and commit the files with the change (the Java
// tests read them too).
var updateFrames = flag.Bool("update-frames", false, "rewrite testdata/frames from goldenFrames")

// framesDir holds the golden frames, one file per request, reply, notice
// and error reply: the exact bytes on the socket.
const framesDir = "testdata/frames"

// golden is one golden frame: its file, its frame, and the body's value —
// a pointer to a protocol type for a JSON body, or a binary batch.
type golden struct {
	file  string
	typ   uint8
	id    uint32
	op    string
	value any
}

// sinkBatch and sourceBatchBody stand for the binary bodies.
type sinkBatch struct {
	task string
	recs []connect.RawSinkRecord
}

type sourceBatchBody struct {
	recs  []connect.SourceRecord
	flags uint8
}

func str(s string) *string { return &s }
func i32(n int32) *int32   { return &n }

// goldenFrames are the frames of testdata/frames.
func goldenFrames() []golden {
	req := func(op string, id uint32, v any) golden {
		return golden{"request." + op + ".frame", frameRequest, id, op, v}
	}
	reply := func(op string, id uint32, v any) golden {
		return golden{"reply." + op + ".frame", frameReply, id, "", v}
	}
	notice := func(op string, v any) golden {
		return golden{"notice." + op + ".frame", frameNotice, 0, op, v}
	}
	config := map[string]string{"connector.class": "io.example.JdbcSourceConnector", "name": "orders", "tasks.max": "2", "topic.prefix": "shop-"}
	offsets := []partitionOffset{{Topic: "orders", Partition: 0, Offset: 42}, {Topic: "orders", Partition: 1, Offset: 7}}
	partitions := []topicPartition{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}}
	ts := int64(1764979200000)
	return []golden{
		req(OpHostHello, 1, &helloRequest{Protocol: ProtocolVersion}),
		reply(OpHostHello, 1, &helloReply{Version: "0.1.0", KafkaVersion: "4.4.0", Protocol: ProtocolVersion}),
		req(OpPluginsList, 2, &emptyBody{}),
		reply(OpPluginsList, 2, &[]api.PluginInfo{{Class: "io.example.JdbcSourceConnector", Type: "source", Version: "10.7.4"},
			{Class: "io.example.S3SinkConnector", Type: "sink", Version: "2.1.0"}}),
		req(OpConnectorValidate, 3, &connectorConfigRequest{Config: map[string]string{"connector.class": "io.example.JdbcSourceConnector",
			"exactly.once.support": "required"}}),
		reply(OpConnectorValidate, 3, &configsReply{
			Configs:   json.RawMessage(`[{"definition":{"name":"connection.url","type":"STRING","required":true,"default_value":null,"importance":"HIGH","documentation":"JDBC URL","group":"Connection","width":"LONG","display_name":"URL","dependents":[],"order":1},"value":{"name":"connection.url","value":null,"recommended_values":[],"errors":["Missing required configuration \"connection.url\" which has no default value."],"visible":true}}]`),
			Preflight: &wire.SourcePreflight{ExactlyOnce: &wire.PreflightAnswer{Support: "SUPPORTED"}}}),
		req(OpConnectorConfigDef, 4, &connectorClassRequest{Class: "io.example.JdbcSourceConnector", Version: "10.7.4"}),
		reply(OpConnectorConfigDef, 4, &configsReply{Configs: json.RawMessage(`[{"name":"connection.url","type":"STRING","required":true,"default_value":null,"importance":"HIGH","documentation":"JDBC URL","group":"Connection","width":"LONG","display_name":"URL","dependents":[],"order":1}]`)}),
		req(OpConnectorStart, 5, &connectorStartRequest{Name: "orders", Config: config}),
		req(OpConnectorTaskConfigs, 6, &taskConfigsRequest{Name: "orders", MaxTasks: 2}),
		reply(OpConnectorTaskConfigs, 6, &taskConfigsReply{Configs: []map[string]string{
			{"table": "orders", "task.class": "io.example.JdbcSourceTask"}, {"table": "lines", "task.class": "io.example.JdbcSourceTask"}}}),
		req(OpConnectorStop, 7, &connectorRef{Name: "orders"}),
		req(OpConnectorAlterOffsets, 8, &alterOffsetsRequest{Class: "io.example.JdbcSourceConnector", Config: config,
			Offsets: []api.ConnectorOffset{{Partition: map[string]any{"table": "orders"}, Offset: map[string]any{"id": float64(1200)}},
				{Partition: map[string]any{"table": "lines"}, Offset: nil}}}),
		reply(OpConnectorAlterOffsets, 8, &alterOffsetsReply{Definite: true}),
		req(OpTaskStart, 9, &taskStartRequest{ID: "orders-0", ConnectorConfig: config,
			TaskConfig: map[string]string{"table": "orders", "task.class": "io.example.JdbcSourceTask"},
			Worker: map[string]string{"exactly.once.source.support": "disabled", "key.converter": "org.apache.kafka.connect.json.JsonConverter",
				"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false"}}),
		reply(OpTaskStart, 9, &taskStartReply{Kind: "source"}),
		req(OpTaskPoll, 10, &taskRef{ID: "orders-0"}),
		reply(OpTaskPoll, 10, &sourceBatchBody{recs: []connect.SourceRecord{
			{Topic: "shop-orders", KafkaPartition: i32(2), Timestamp: time.UnixMilli(ts), RawKey: []byte(`{"id":1200}`), RawValue: []byte(`{"id":1200,"total":9.5}`),
				Headers: []connect.Header{{Key: "trace", Value: []byte("abc")}}, SourcePartition: map[string]any{"table": "orders"},
				SourceOffset: map[string]any{"id": float64(1200)}, Ref: 1},
			{Dropped: true, SourcePartition: map[string]any{"table": "orders"}, SourceOffset: map[string]any{"id": float64(1201)}},
			{Topic: "shop-orders", RawValue: []byte(`{"id":1202}`), SourcePartition: map[string]any{"table": "orders"},
				SourceOffset: map[string]any{"id": float64(1202)}, Ref: 3, Transaction: connect.TxnCommit},
		}}),
		req(OpTaskCommitRecords, 11, &commitRecordsRequest{ID: "orders-0", Records: []committedRecord{
			{Seq: 1, Topic: "shop-orders", Partition: 2, Offset: 118}, {Seq: 3, Topic: "shop-orders", Partition: 0, Offset: 40}}}),
		req(OpTaskCommit, 12, &taskRef{ID: "orders-0"}),
		req(OpTaskOpen, 13, &partitionsReq{ID: "s3-1", Partitions: partitions}),
		req(OpTaskClose, 14, &partitionsReq{ID: "s3-1", Partitions: partitions[:1]}),
		req(OpTaskPut, 15, &sinkBatch{task: "s3-1", recs: []connect.RawSinkRecord{
			{Topic: "orders", Partition: 0, Offset: 42, Timestamp: time.UnixMilli(ts), TimestampType: 1, Key: []byte("k1"), Value: []byte(`{"id":1}`),
				Headers: []connect.Header{{Key: "h", Value: []byte("v")}, {Key: "none", Value: nil}}},
			{Topic: "orders", Partition: 1, Offset: 7, Key: nil, Value: nil},
		}}),
		reply(OpTaskPut, 15, &putReply{Errant: []errantRecord{{Index: 1, failure: failure{Stage: "VALUE_CONVERTER",
			Class: "org.apache.kafka.connect.json.JsonConverter", Exception: "org.apache.kafka.connect.errors.DataException",
			Message: str("Converting byte[] to Kafka Connect data failed"), Trace: "org.apache.kafka.connect.errors.DataException: Converting byte[] to Kafka Connect data failed\n\tat org.apache.kafka.connect.json.JsonConverter.toConnectData(JsonConverter.java:333)"}}}}),
		req(OpTaskPreCommit, 16, &offsetsMsg{ID: "s3-1", Offsets: offsets}),
		reply(OpTaskPreCommit, 16, &offsetsReply{Offsets: offsets[:1]}),
		req(OpTaskStop, 17, &taskRef{ID: "s3-1"}),
		golden{"reply.empty.frame", frameReply, 17, "", &emptyBody{}},
		golden{"error.frame", frameError, 5, "", &HostError{Message: "Connection refused",
			Trace: "org.apache.kafka.connect.errors.RetriableException: Connection refused\n\tat io.example.JdbcSourceTask.poll(JdbcSourceTask.java:88)", Retriable: true}},
		req(OpOffsetsRead, 1, &offsetsReadRequest{ID: "orders-0", Partitions: []map[string]any{{"table": "orders"}, {"table": "new"}}}),
		reply(OpOffsetsRead, 1, &offsetsReadReply{Offsets: []map[string]any{{"id": float64(1199)}, nil}}),
		req(OpTaskReport, 2, &taskReportRequest{ID: "s3-1", Record: reportedRecord{Topic: "orders", Partition: 0, Offset: 43, Timestamp: &ts,
			TimestampType: 1, Key: []byte("k2"), Value: []byte("not json"), Headers: []recordHeader{{Key: "h", Value: []byte("v")}}},
			failure: failure{Stage: "TASK_PUT", Class: "io.example.S3SinkTask", Exception: "org.apache.kafka.connect.errors.ConnectException",
				Message: nil, Trace: "org.apache.kafka.connect.errors.ConnectException\n\tat io.example.S3SinkTask.put(S3SinkTask.java:51)"}}),
		notice(OpConnectorReconfigure, &connectorRef{Name: "orders"}),
		notice(OpConnectorError, &connectorErrorNotice{Name: "orders", Message: "table orders dropped",
			Trace: "org.apache.kafka.connect.errors.ConnectException: table orders dropped\n\tat io.example.JdbcSourceConnector.monitor(JdbcSourceConnector.java:120)"}),
		notice(OpTaskRequestCommit, &taskRef{ID: "s3-1"}),
		notice(OpTaskRewind, &offsetsMsg{ID: "s3-1", Offsets: offsets[1:]}),
		notice(OpTaskPause, &partitionsReq{ID: "s3-1", Partitions: partitions[1:]}),
		notice(OpTaskResume, &partitionsReq{ID: "s3-1", Partitions: partitions[1:]}),
	}
}

// encodeBody encodes a golden frame's body as its sender does.
func encodeBody(t *testing.T, v any) []byte {
	t.Helper()
	switch b := v.(type) {
	case *sinkBatch:
		body, err := encodeSinkBatch(b.task, b.recs)
		if err != nil {
			t.Fatal(err)
		}
		return body
	case *sourceBatchBody:
		return encodeSourceBatchFlagsForTest(b.recs, b.flags)
	}
	body, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// TestGoldenFrames decodes every golden frame into its type, checks it
// holds what goldenFrames says, and encodes it again into the same bytes.
func TestGoldenFrames(t *testing.T) {
	for _, g := range goldenFrames() {
		t.Run(g.file, func(t *testing.T) {
			path := filepath.Join(framesDir, g.file)
			if *updateFrames {
				wire, err := appendFrame(nil, frame{typ: g.typ, id: g.id, op: g.op, body: encodeBody(t, g.value)})
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, wire, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			onDisk, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update-frames to write it)", err)
			}
			r := bytes.NewReader(onDisk)
			f, err := readFrame(r)
			if err != nil || r.Len() != 0 {
				t.Fatalf("read: %v, %d bytes left over", err, r.Len())
			}
			if f.typ != g.typ || f.id != g.id || f.op != g.op {
				t.Fatalf("frame type %d, id %d, op %q; want %d, %d, %q", f.typ, f.id, f.op, g.typ, g.id, g.op)
			}
			var again []byte
			switch want := g.value.(type) {
			case *sourceBatchBody:
				batch, err := decodeSourceBatch(f.body)
				if err != nil {
					t.Fatal(err)
				}
				checkSourceBatch(t, batch, want)
				var flags uint8
				if batch.commit {
					flags |= batchCommit
				}
				if batch.abort {
					flags |= batchAbort
				}
				again = encodeSourceBatchFlagsForTest(batch.records, flags)
			case *sinkBatch:
				// The agent only writes sink batches: the host reads them
				// (GoldenFramesTest).
				again = encodeBody(t, want)
			default:
				got := reflect.New(reflect.TypeOf(g.value).Elem()).Interface()
				dec := json.NewDecoder(bytes.NewReader(f.body))
				dec.DisallowUnknownFields()
				if err := dec.Decode(got); err != nil {
					t.Fatalf("decode into %T: %v", got, err)
				}
				if !reflect.DeepEqual(got, g.value) {
					t.Fatalf("decoded %+v, want %+v", got, g.value)
				}
				again = encodeBody(t, got)
			}
			reencoded, err := appendFrame(nil, frame{typ: f.typ, id: f.id, op: f.op, body: again})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(reencoded, onDisk) {
				t.Fatalf("re-encoded\n%q\nwant the golden\n%q", reencoded, onDisk)
			}
		})
	}
}

// checkSourceBatch compares a decoded source batch with the records it
// was made of, field by field as the agent uses them.
func checkSourceBatch(t *testing.T, got sourceBatch, want *sourceBatchBody) {
	t.Helper()
	if len(got.records) != len(want.recs) {
		t.Fatalf("%d records, want %d", len(got.records), len(want.recs))
	}
	for i, w := range want.recs {
		g := got.records[i]
		if g.Dropped != w.Dropped || g.Topic != w.Topic || !bytes.Equal(g.RawKey, w.RawKey) || !bytes.Equal(g.RawValue, w.RawValue) ||
			!reflect.DeepEqual(g.SourcePartition, w.SourcePartition) || !reflect.DeepEqual(g.SourceOffset, w.SourceOffset) ||
			g.Ref != w.Ref || g.Transaction != w.Transaction || !g.Timestamp.Equal(w.Timestamp) || len(g.Headers) != len(w.Headers) {
			t.Errorf("record %d: %+v, want %+v", i, g, w)
		}
		if !w.Dropped && (g.KafkaPartition == nil) != (w.KafkaPartition == nil) {
			t.Errorf("record %d: partition %v, want %v", i, g.KafkaPartition, w.KafkaPartition)
		}
	}
}

// TestGoldenFramesCoverTheProtocol: every op of the protocol has a golden
// request or notice, every reply with a body of its own a golden reply
// (an empty one is reply.empty), and every file in testdata/frames is a
// golden frame.
func TestGoldenFramesCoverTheProtocol(t *testing.T) {
	files := map[string]golden{}
	for _, g := range goldenFrames() {
		files[g.file] = g
	}
	for _, op := range protocolOps {
		kind := "request."
		if op.notice {
			kind = "notice."
		}
		g, ok := files[kind+op.op+".frame"]
		if !ok {
			t.Errorf("%s: no golden %s", op.op, kind)
		} else if op.request != nil && reflect.TypeOf(g.value).Elem() != op.request {
			t.Errorf("%s: the golden request is a %T, the protocol says %v", op.op, g.value, op.request)
		}
		if op.notice {
			continue
		}
		reply := "reply." + op.op + ".frame"
		if op.reply == reflect.TypeFor[emptyBody]() {
			reply = "reply.empty.frame"
		}
		g, ok = files[reply]
		switch {
		case !ok:
			t.Errorf("%s: no golden reply %s", op.op, reply)
		case op.reply != nil && reflect.TypeOf(g.value).Elem() != op.reply:
			t.Errorf("%s: the golden reply is a %T, the protocol says %v", op.op, g.value, op.reply)
		}
	}
	entries, err := os.ReadDir(framesDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		if _, ok := files[e.Name()]; !ok {
			t.Errorf("%s/%s is no golden frame", framesDir, e.Name())
		}
	}
	for file := range files {
		if !slices.Contains(names, file) {
			t.Errorf("golden frame %s is not in %s", file, framesDir)
		}
	}
}

// TestHelloRefusesAnotherProtocol: a host that states another protocol
// version at hello is not taken, and the error names both versions.
func TestHelloRefusesAnotherProtocol(t *testing.T) {
	s := newFakeSupervisor(t, fakeOtherProtocol)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := s.Conn(ctx)
	if err == nil {
		t.Fatal("the agent took a host of another protocol version")
	}
	for _, want := range []string{"host protocol 2", "this agent speaks 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
