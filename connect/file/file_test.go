package file

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/sluice-io/sluice/connect"
)

type offsets map[string]map[string]any

func (o offsets) Offset(_ context.Context, p map[string]any) (map[string]any, error) {
	b, _ := json.Marshal(p)
	return o[string(b)], nil
}

func startSource(t *testing.T, dir string, props map[string]string, committed offsets) *SourceTask {
	t.Helper()
	task := (&SourceConnector{}).NewTask().(*SourceTask)
	if err := task.Start(context.Background(), connect.SourceTaskContext{Offsets: committed, WorkDir: dir}, props); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = task.Stop() })
	return task
}

func lines(t *testing.T, recs []connect.SourceRecord) ([]string, []int64) {
	t.Helper()
	var ls []string
	var pos []int64
	for _, r := range recs {
		ls = append(ls, r.Value.(string))
		pos = append(pos, r.SourceOffset[PositionField].(int64))
		if r.ValueSchema != connect.StringSchema || r.Key != nil || r.Topic != "t" ||
			!reflect.DeepEqual(r.SourcePartition, map[string]any{FilenameField: "in.txt"}) {
			t.Errorf("record = %+v", r)
		}
	}
	return ls, pos
}

func TestSourceLines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(path, []byte("a\nbb\r\nc\rd\r"), 0o644); err != nil {
		t.Fatal(err)
	}
	task := startSource(t, dir, map[string]string{"file": "in.txt", "topic": "t"}, nil)
	recs, err := task.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ls, pos := lines(t, recs)
	// The trailing \r may start a \r\n, so "d" waits.
	if !reflect.DeepEqual(ls, []string{"a", "bb", "c"}) || !reflect.DeepEqual(pos, []int64{2, 6, 8}) {
		t.Fatalf("lines = %q at %v", ls, pos)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if _, err := f.WriteString("\npartial"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	recs, _ = task.Poll(context.Background())
	ls, pos = lines(t, recs)
	if !reflect.DeepEqual(ls, []string{"d"}) || !reflect.DeepEqual(pos, []int64{11}) {
		t.Fatalf("lines = %q at %v", ls, pos)
	}
	start := time.Now()
	if recs, _ := task.Poll(context.Background()); len(recs) != 0 {
		t.Fatalf("partial line emitted: %v", recs)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("idle poll took %v", d)
	}
}

func TestSourceBatchAndResume(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte("l0\nl1\nl2\nl3\nl4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	task := startSource(t, dir, map[string]string{"file": "in.txt", "topic": "t", "batch.size": "2"}, nil)
	var all []string
	for range 3 {
		recs, _ := task.Poll(context.Background())
		if len(recs) > 2 {
			t.Fatalf("batch of %d", len(recs))
		}
		ls, _ := lines(t, recs)
		all = append(all, ls...)
	}
	if !reflect.DeepEqual(all, []string{"l0", "l1", "l2", "l3", "l4"}) {
		t.Fatalf("lines = %q", all)
	}
	// Resume after l1 (position 6): the next line is l2.
	committed := offsets{`{"filename":"in.txt"}`: {"position": json.Number("6")}}
	task2 := startSource(t, dir, map[string]string{"file": "in.txt", "topic": "t"}, committed)
	recs, _ := task2.Poll(context.Background())
	ls, pos := lines(t, recs)
	if !reflect.DeepEqual(ls, []string{"l2", "l3", "l4"}) || pos[0] != 9 {
		t.Fatalf("resumed lines = %q at %v", ls, pos)
	}
}

func TestSourceWaitsForFile(t *testing.T) {
	dir := t.TempDir()
	task := startSource(t, dir, map[string]string{"file": "in.txt", "topic": "t"}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if recs, err := task.Poll(ctx); recs != nil || err != nil {
		t.Fatalf("missing file: %v %v", recs, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, err := task.Poll(context.Background())
	if ls, _ := lines(t, recs); err != nil || !reflect.DeepEqual(ls, []string{"x"}) {
		t.Fatalf("after create: %q %v", ls, err)
	}
}

func TestSourceBadCommittedOffset(t *testing.T) {
	task := &SourceTask{}
	err := task.Start(context.Background(), connect.SourceTaskContext{Offsets: offsets{`{"filename":"f"}`: {"position": "3"}}},
		map[string]string{"file": "f", "topic": "t"})
	if err == nil || err.Error() != "Offset position is the incorrect type" {
		t.Errorf("err = %v", err)
	}
}

func TestSourceConnector(t *testing.T) {
	c := &SourceConnector{}
	props := map[string]string{"file": "f", "topic": "t", "tasks.max": "4"}
	if err := c.Start(nil, props); err != nil {
		t.Fatal(err)
	}
	cfgs, _ := c.TaskConfigs(4)
	if len(cfgs) != 1 || !reflect.DeepEqual(cfgs[0], props) {
		t.Errorf("task configs = %v", cfgs)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	// file is optional in the definition (as in Kafka) and required by Validate.
	if v := connect.FindValue(c.ConfigDef().Validate(map[string]string{"topic": ""}), "file"); v != nil && len(v.Errors) > 0 {
		t.Errorf("definition errors for file = %q", v.Errors)
	}
	v := connect.FindValue(c.Validate(map[string]string{"topic": ""}), "file")
	if v == nil || len(v.Errors) != 1 || v.Errors[0] != `Missing required configuration "file" which has no default value.` {
		t.Errorf("file errors = %+v", v)
	}
	v = connect.FindValue(c.Validate(map[string]string{"file": " "}), "file")
	if v == nil || len(v.Errors) != 1 || v.Errors[0] != "Invalid value   for configuration file: String must be non-empty" {
		t.Errorf("blank file errors = %+v", v)
	}
	v = connect.FindValue(c.ConfigDef().Validate(map[string]string{"topic": ""}), "topic")
	if v.Errors[0] != "Invalid value  for configuration topic: String must be non-empty" {
		t.Errorf("topic errors = %q", v.Errors)
	}
}

func TestSourceAlterOffsets(t *testing.T) {
	props := map[string]string{"file": "f", "topic": "t"}
	part := map[string]any{"filename": "f"}
	tests := []struct {
		name    string
		offsets []connect.Offset
		want    string
	}{
		{"tombstone with junk partition", []connect.Offset{{Partition: map[string]any{"x": 1}}}, ""},
		{"json number", []connect.Offset{{Partition: part, Offset: map[string]any{"position": json.Number("10")}}}, ""},
		{"int64", []connect.Offset{{Partition: part, Offset: map[string]any{"position": int64(0)}}}, ""},
		{"integral float64", []connect.Offset{{Partition: part, Offset: map[string]any{"position": float64(3)}}}, ""},
		{"no position", []connect.Offset{{Partition: part, Offset: map[string]any{"pos": 1}}}, "Offset objects should either be null or contain the key 'position'"},
		{"decimal", []connect.Offset{{Partition: part, Offset: map[string]any{"position": json.Number("5.0")}}}, "The value for the 'position' key in the offset is expected to be a Long value"},
		{"string", []connect.Offset{{Partition: part, Offset: map[string]any{"position": "5"}}}, "The value for the 'position' key in the offset is expected to be a Long value"},
		{"null position", []connect.Offset{{Partition: part, Offset: map[string]any{"position": nil}}}, "The value for the 'position' key in the offset is expected to be a Long value"},
		{"too big", []connect.Offset{{Partition: part, Offset: map[string]any{"position": json.Number("9223372036854775808")}}}, "The value for the 'position' key in the offset is expected to be a Long value"},
		{"negative", []connect.Offset{{Partition: part, Offset: map[string]any{"position": json.Number("-1")}}}, "The value for the 'position' key in the offset should be a non-negative value"},
		{"offset checked before partition", []connect.Offset{{Partition: map[string]any{}, Offset: map[string]any{"position": json.Number("-1")}}}, "The value for the 'position' key in the offset should be a non-negative value"},
		{"no filename", []connect.Offset{{Partition: map[string]any{"file": "f"}, Offset: map[string]any{"position": int64(1)}}}, "Partition objects should contain the key 'filename'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, err := (&SourceConnector{}).AlterOffsets(props, tt.offsets)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want || ok != (tt.want == "") {
				t.Errorf("got %v, %q; want %q", ok, got, tt.want)
			}
		})
	}
}

func TestSink(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "out.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &SinkConnector{}
	if err := c.Start(nil, map[string]string{"file": "out.txt"}); err != nil {
		t.Fatal(err)
	}
	cfgs, _ := c.TaskConfigs(3)
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 3 {
		t.Fatalf("task configs = %v", cfgs)
	}
	task := c.NewTask()
	if err := task.Start(context.Background(), connect.SinkTaskContext{WorkDir: dir}, cfgs[0]); err != nil {
		t.Fatal(err)
	}
	st := &connect.Schema{Type: connect.SchemaTypeStruct, Fields: []connect.Field{{Name: "line", Schema: connect.StringSchema}}}
	recs := []connect.SinkRecord{{Value: "a"}, {Value: nil}, {Value: []byte("b")}, {Value: map[string]any{"k": 1}}, {Value: int64(5)},
		{ValueSchema: st, Value: map[string]any{"line": "c"}}}
	if err := task.Put(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	// A reader sees the batch once Put returns, before any offset flush.
	const want = "old\na\nnull\nb\n{k=1}\n5\nStruct{line=c}\n"
	if got, _ := os.ReadFile(filepath.Join(dir, "out.txt")); string(got) != want {
		t.Errorf("file after Put = %q", got)
	}
	if err := task.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "out.txt")); string(got) != want {
		t.Errorf("file after Flush = %q", got)
	}
	if err := task.Stop(); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.AlterOffsets(nil, []connect.Offset{{}}); !ok || err != nil {
		t.Errorf("alter = %v %v", ok, err)
	}
	bad := c.NewTask()
	if err := bad.Start(context.Background(), connect.SinkTaskContext{WorkDir: dir}, map[string]string{"file": "no/such/dir/x"}); err == nil {
		t.Errorf("unwritable file accepted")
	}
}

// TestSourceBoundedPoll: a poll holds at most 4 MiB of lines, however large
// batch.size is, and a line that never ends fails the task once it passes
// 8 MiB instead of being read into memory to the end of the file.
func TestSourceBoundedPoll(t *testing.T) {
	dir := t.TempDir()
	line := string(make([]byte, 1<<20-1)) + "\n"
	var body []byte
	for range 10 {
		body = append(body, line...)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	task := startSource(t, dir, map[string]string{"file": "in.txt", "topic": "t", "batch.size": "100000"}, nil)
	for _, want := range []int{4, 4, 2} {
		recs, err := task.Poll(context.Background())
		if err != nil || len(recs) != want {
			t.Fatalf("poll: %d lines of 1 MiB (%v), want %d", len(recs), err, want)
		}
	}

	if err := os.WriteFile(filepath.Join(dir, "endless.txt"), make([]byte, 9<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	endless := startSource(t, dir, map[string]string{"file": "endless.txt", "topic": "t"}, nil)
	if _, err := endless.Poll(context.Background()); err == nil {
		t.Fatal("a 9 MiB line without an end was read whole")
	}
}
