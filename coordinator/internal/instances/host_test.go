package instances

import (
	"errors"
	"reflect"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/plugins"
)

func TestMaxTasks(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
	}{{"3", 3}, {" 2 ", 2}, {"", 1}, {"x", 1}, {"0", 1}, {"-4", 1}, {"10000", 10000}, {"2147483647", 10000}} {
		if got := MaxTasks(map[string]string{"tasks.max": tt.in}); got != tt.want {
			t.Errorf("MaxTasks(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
	if got := MaxTasks(nil); got != 1 {
		t.Errorf("unset: %d", got)
	}
}

func TestGenerate(t *testing.T) {
	props := map[string]string{"connector.class": "FileStreamSink", "file": "out.txt", "topics": "t", "tasks.max": "2"}
	got, err := Generate(plugins.Builtin(), nil, props)
	want := map[string]string{"connector.class": "FileStreamSink", "file": "out.txt", "topics": "t", "tasks.max": "2",
		"task.class": "org.apache.kafka.connect.file.FileStreamSinkTask"}
	if err != nil || !reflect.DeepEqual(got, []map[string]string{want, want}) {
		t.Fatalf("Generate = %v, %v", got, err)
	}
	_, err = Generate(plugins.Builtin(), nil, map[string]string{"connector.class": "NoSuch"})
	if e := api.AsError(err); e.Code != api.CodeBadRequest || e.Message != plugins.Builtin().UnknownConnectorMessage("NoSuch") {
		t.Errorf("unknown class: %v", err)
	}
}

func TestGenerateFailures(t *testing.T) {
	tests := []struct {
		name  string
		fail  func(*fakePlugin)
		want  string
		stops int
	}{
		{"start", func(f *fakePlugin) { f.failStarts(errors.New("down")) }, "starting " + sourceClass + ": down", 0},
		{"task configs", func(f *fakePlugin) { f.failTasks(errors.New("down")) }, "computing the task configs of " + sourceClass + ": down", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakePlugin()
			tt.fail(f)
			_, err := Generate(f.registry(t), nil, conn("a", "").Config)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
			if c := f.counts(); c.stops != tt.stops || c.live != 0 {
				t.Errorf("calls %+v: want %d Stop and nothing left started", c, tt.stops)
			}
			f.checkContract(t)
		})
	}
}

func TestLocalHost(t *testing.T) {
	f := newFakePlugin()
	h := NewLocalHost(f.registry(t), nil)
	ctx := t.Context()
	if _, err := h.TaskConfigs(ctx, "a", 1); err == nil {
		t.Error("TaskConfigs of an instance never started")
	}
	if err := h.Stop(ctx, "a"); err != nil {
		t.Errorf("Stop of an instance never started: %v", err)
	}
	p, err := h.Start(ctx, "a", conn("a", "").Config, discard{})
	if err != nil || p != (Plugin{Class: sourceClass, Kind: connect.KindSource}) {
		t.Fatalf("Start = %+v, %v", p, err)
	}
	if _, err := h.Start(ctx, "a", conn("a", "").Config, discard{}); err == nil {
		t.Error("a second instance under one name")
	}
	if tasks, err := h.TaskConfigs(ctx, "a", 3); err != nil || len(tasks) != 3 || tasks[0]["task.class"] != "" {
		t.Errorf("TaskConfigs = %v, %v (raw, as the plugin returns them)", tasks, err)
	}
	if err := h.Stop(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(ctx, "a"); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if c := f.counts(); c.starts != 1 || c.stops != 1 {
		t.Errorf("calls %+v", c)
	}
	f.checkContract(t)
}
