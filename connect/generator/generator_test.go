package generator

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/sluice-io/sluice/connect"
)

func TestTaskConfigs(t *testing.T) {
	props := map[string]string{"topic": "t", "streams": "5"}
	split := func(props map[string]string, maxTasks int) ([]map[string]string, error) {
		t.Helper()
		c := &Connector{}
		if err := c.Start(nil, props); err != nil {
			return nil, err
		}
		defer func() { _ = c.Stop() }()
		return c.TaskConfigs(maxTasks)
	}
	cfgs, err := split(props, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 2 || cfgs[0][TaskStreamsConfig] != "0,2,4" || cfgs[1][TaskStreamsConfig] != "1,3" || cfgs[0]["topic"] != "t" {
		t.Errorf("configs = %v", cfgs)
	}
	if _, set := props[TaskStreamsConfig]; set {
		t.Errorf("input props modified")
	}
	again, _ := split(props, 2)
	if !reflect.DeepEqual(cfgs, again) {
		t.Errorf("not deterministic")
	}
	if cfgs, _ := split(map[string]string{"topic": "t", "streams": "2"}, 8); len(cfgs) != 2 {
		t.Errorf("more tasks than streams: %d", len(cfgs))
	}
	if _, err := split(map[string]string{}, 1); err == nil {
		t.Errorf("missing topic accepted by Start")
	}
	c := &Connector{}
	v := connect.FindValue(c.ConfigDef().Validate(map[string]string{"topic": "t", "streams": "0"}), "streams")
	if len(v.Errors) != 1 || v.Errors[0] != "Invalid value 0 for configuration streams: Value must be at least 1" {
		t.Errorf("streams errors = %q", v.Errors)
	}
}

func TestValue(t *testing.T) {
	v := Value(3, 12, 100)
	if len(v) != 100 {
		t.Errorf("len = %d", len(v))
	}
	var doc struct {
		Stream  int64  `json:"stream"`
		Seq     int64  `json:"seq"`
		Payload string `json:"payload"`
	}
	if err := json.Unmarshal([]byte(v), &doc); err != nil || doc.Stream != 3 || doc.Seq != 12 {
		t.Errorf("value %q: %+v %v", v, doc, err)
	}
	if got := Value(1, 2, 5); got != `{"stream":1,"seq":2,"payload":""}` {
		t.Errorf("minimal = %q", got)
	}
	// The filler's letter i is 'a'+(seq+i)%26, whatever the size and seq.
	for _, c := range []struct{ seq int64 }{{0}, {12}, {25}, {26}, {1234567}} {
		for _, size := range []int{40, 100, 1000} {
			v := Value(7, c.seq, size)
			if err := json.Unmarshal([]byte(v), &doc); err != nil || len(v) != size {
				t.Fatalf("Value(7, %d, %d) = %q (%d bytes): %v", c.seq, size, v, len(v), err)
			}
			for i := range len(doc.Payload) {
				if want := byte('a' + (c.seq+int64(i))%26); doc.Payload[i] != want {
					t.Fatalf("Value(7, %d, %d): payload[%d] = %c, want %c", c.seq, size, i, doc.Payload[i], want)
				}
			}
		}
	}
}

type offsets map[int64]int64

func (o offsets) Offset(_ context.Context, p map[string]any) (map[string]any, error) {
	if n, ok := o[p[StreamField].(int64)]; ok {
		return map[string]any{SeqField: json.Number(json.Number(itoa(n)))}, nil
	}
	return nil, nil
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestPollResumeCountAndRate(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	task := &Task{now: clk.now}
	props := map[string]string{"topic": "t", "streams": "2", "count": "3", "rate": "10", TaskStreamsConfig: "0,1"}
	if err := task.Start(context.Background(), connect.SourceTaskContext{Offsets: offsets{1: 0}}, props); err != nil {
		t.Fatal(err)
	}
	// Before the first poll the gauges say where each stream resumes.
	if got := gaugeValues(task.Gauges()); !reflect.DeepEqual(got, map[string]float64{
		"generator_stream_records{stream=0}": 0, "generator_stream_records{stream=1}": 1, "generator_stream_count": 3}) {
		t.Errorf("gauges at start = %v", got)
	}
	clk.t = clk.t.Add(time.Second) // 10 tokens
	recs, err := task.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Key.(string)+":"+itoa(r.SourceOffset[SeqField].(int64)))
		if r.Topic != "t" || r.SourcePartition[StreamField] != r.SourcePartition[StreamField].(int64) || len(r.Value.(string)) != 100 {
			t.Errorf("record = %+v", r)
		}
	}
	// Stream 1 resumes after its committed seq 0; each stops at count 3.
	if want := []string{"0:0", "1:1", "0:1", "1:2", "0:2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("records = %v, want %v", got, want)
	}
	if got := gaugeValues(task.Gauges()); !reflect.DeepEqual(got, map[string]float64{
		"generator_stream_records{stream=0}": 3, "generator_stream_records{stream=1}": 3, "generator_stream_count": 3}) {
		t.Errorf("gauges when done = %v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if recs, err := task.Poll(ctx); recs != nil || err != nil {
		t.Errorf("done poll = %v, %v", recs, err)
	}
}

// gaugeValues are gauges by name{label=value}.
func gaugeValues(gauges []connect.Gauge) map[string]float64 {
	out := map[string]float64{}
	for _, g := range gauges {
		key := g.Name
		if s, ok := g.Labels["stream"]; ok {
			key += "{stream=" + s + "}"
		}
		out[key] = g.Value
	}
	return out
}

func TestPollPacing(t *testing.T) {
	clk := &clock{t: time.Unix(0, 0)}
	task := &Task{now: clk.now}
	if err := task.Start(context.Background(), connect.SourceTaskContext{}, map[string]string{"topic": "t", "rate": "100"}); err != nil {
		t.Fatal(err)
	}
	clk.t = clk.t.Add(50 * time.Millisecond)
	recs, _ := task.Poll(context.Background())
	if len(recs) != 5 {
		t.Errorf("after 50ms at 100/s: %d records", len(recs))
	}
	clk.t = clk.t.Add(time.Hour) // the bucket holds at most one second
	recs, _ = task.Poll(context.Background())
	if len(recs) != 100 {
		t.Errorf("after a long pause: %d records", len(recs))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if recs, _ := task.Poll(ctx); len(recs) != 0 {
		t.Errorf("no tokens: %d records", len(recs))
	}
}

// TestPollBoundedByBytes: however many tokens a high rate gives, one poll
// holds at most 4 MiB of values (and always at least one record), so large
// records cannot make a task allocate without bound.
func TestPollBoundedByBytes(t *testing.T) {
	tests := []struct {
		recordBytes string
		want        int
	}{
		{"100", maxBatch},
		{"1048576", 4},
		{"1000000", 4},
		{"0", maxBatch},
	}
	for _, tt := range tests {
		t.Run(tt.recordBytes, func(t *testing.T) {
			clk := &clock{t: time.Unix(0, 0)}
			task := &Task{now: clk.now}
			props := map[string]string{"topic": "t", "rate": "1000000", "record.bytes": tt.recordBytes}
			if err := task.Start(context.Background(), connect.SourceTaskContext{}, props); err != nil {
				t.Fatal(err)
			}
			clk.t = clk.t.Add(time.Second)
			recs, _ := task.Poll(context.Background())
			if len(recs) != tt.want {
				t.Fatalf("%d records of %s bytes in one poll, want %d", len(recs), tt.recordBytes, tt.want)
			}
		})
	}
}
