package logging

import (
	"bytes"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseLevel(t *testing.T) {
	tests := []struct {
		in   string
		want slog.Level
		name string
		ok   bool
	}{
		{"DEBUG", slog.LevelDebug, "DEBUG", true},
		{"debug", slog.LevelDebug, "DEBUG", true},
		{" Warn ", slog.LevelWarn, "WARN", true},
		{"trace", LevelTrace, "TRACE", true},
		{"FATAL", LevelFatal, "FATAL", true},
		{"off", LevelOff, "OFF", true},
		{"all", LevelAll, "ALL", true},
		{"INFO", slog.LevelInfo, "INFO", true},
		{"ERROR", slog.LevelError, "ERROR", true},
		{"WARNING", 0, "", false},
		{"debug+2", 0, "", false},
		{"", 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			lv, name, ok := ParseLevel(tt.in)
			if lv != tt.want || name != tt.name || ok != tt.ok {
				t.Fatalf("ParseLevel(%q) = %v, %q, %v; want %v, %q, %v", tt.in, lv, name, ok, tt.want, tt.name, tt.ok)
			}
		})
	}
}

func TestLevelName(t *testing.T) {
	for lv, want := range map[slog.Level]string{
		slog.LevelInfo: "INFO", LevelTrace: "TRACE", LevelOff: "OFF", LevelAll: "ALL",
		slog.LevelDebug + 2: "DEBUG+2",
	} {
		if got := LevelName(lv); got != want {
			t.Errorf("LevelName(%v) = %q, want %q", lv, got, want)
		}
	}
}

// components makes the loggers a coordinator and an agent make.
func components(l *Loggers) {
	for _, name := range []string{Coordinator, Herder, REST, Agent, AgentTransport, AgentTasks, AgentOffsets} {
		l.Logger(name)
	}
}

// TestSetLevel: which loggers a level set on a namespace changes, what they
// then show, and what SetLevel reports, as Kafka Connect 4.4 answers.
func TestSetLevel(t *testing.T) {
	type set struct{ ns, level string }
	tests := []struct {
		name        string
		sets        []set
		wantChanged []string // of the last set
		want        map[string]string
	}{
		{"a prefix covers its children",
			[]set{{"io.sluice.agent", "debug"}},
			[]string{Agent, AgentOffsets, AgentTasks, AgentTransport},
			map[string]string{Root: "INFO", Coordinator: "INFO", Herder: "INFO", REST: "INFO",
				Agent: "DEBUG", AgentTransport: "DEBUG", AgentTasks: "DEBUG", AgentOffsets: "DEBUG"}},
		{"a leaf alone",
			[]set{{Herder, "TRACE"}},
			[]string{Herder},
			map[string]string{Root: "INFO", Coordinator: "INFO", Herder: "TRACE", REST: "INFO",
				Agent: "INFO", AgentTransport: "INFO", AgentTasks: "INFO", AgentOffsets: "INFO"}},
		{"a new namespace is made, and covers what is below it",
			[]set{{"io.sluice", "WARN"}},
			[]string{"io.sluice", Agent, AgentOffsets, AgentTasks, AgentTransport, Coordinator, Herder, REST},
			map[string]string{Root: "INFO", "io.sluice": "WARN", Coordinator: "WARN", Herder: "WARN", REST: "WARN",
				Agent: "WARN", AgentTransport: "WARN", AgentTasks: "WARN", AgentOffsets: "WARN"}},
		{"the root resets every level below it",
			[]set{{Herder, "DEBUG"}, {Agent, "ERROR"}, {"ROOT", "WARN"}},
			[]string{Agent, AgentOffsets, AgentTasks, AgentTransport, Coordinator, Herder, REST, Root},
			map[string]string{Root: "WARN", Coordinator: "WARN", Herder: "WARN", REST: "WARN",
				Agent: "WARN", AgentTransport: "WARN", AgentTasks: "WARN", AgentOffsets: "WARN"}},
		{"a child set after its parent keeps its own level",
			[]set{{Agent, "DEBUG"}, {AgentTasks, "ERROR"}},
			[]string{AgentTasks},
			map[string]string{Root: "INFO", Coordinator: "INFO", Herder: "INFO", REST: "INFO",
				Agent: "DEBUG", AgentTransport: "DEBUG", AgentTasks: "ERROR", AgentOffsets: "DEBUG"}},
		{"the same level again changes nothing",
			[]set{{Agent, "DEBUG"}, {Agent, "debug"}},
			nil,
			map[string]string{Root: "INFO", Coordinator: "INFO", Herder: "INFO", REST: "INFO",
				Agent: "DEBUG", AgentTransport: "DEBUG", AgentTasks: "DEBUG", AgentOffsets: "DEBUG"}},
		{"a logger that is OFF is left out of the list, and counts as changed when set again",
			[]set{{REST, "OFF"}, {REST, "OFF"}},
			[]string{REST},
			map[string]string{Root: "INFO", Coordinator: "INFO", Herder: "INFO",
				Agent: "INFO", AgentTransport: "INFO", AgentTasks: "INFO", AgentOffsets: "INFO"}},
		{"a plain prefix, as Kafka Connect matches it",
			[]set{{"io.sluice.agent.t", "DEBUG"}},
			[]string{"io.sluice.agent.t"},
			map[string]string{Root: "INFO", Coordinator: "INFO", Herder: "INFO", REST: "INFO", "io.sluice.agent.t": "DEBUG",
				Agent: "INFO", AgentTransport: "INFO", AgentTasks: "INFO", AgentOffsets: "INFO"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewText(&bytes.Buffer{}, slog.LevelInfo)
			components(l)
			var changed []string
			for _, s := range tt.sets {
				var err error
				if changed, err = l.SetLevel(s.ns, s.level); err != nil {
					t.Fatal(err)
				}
			}
			if !reflect.DeepEqual(changed, tt.wantChanged) {
				t.Errorf("changed = %q, want %q", changed, tt.wantChanged)
			}
			got := map[string]string{}
			for name, info := range l.All() {
				got[name] = info.Level
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("levels:\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestSetLevelInvalid(t *testing.T) {
	l := NewText(&bytes.Buffer{}, slog.LevelInfo)
	if _, err := l.SetLevel(Root, "LOUD"); err == nil {
		t.Fatal("an invalid level was accepted")
	}
	if info, _ := l.Level(Root); info.Level != "INFO" || !info.LastModified.IsZero() {
		t.Fatalf("root after an invalid level: %+v", info)
	}
}

// TestLastModified: only the loggers whose level changed get a new time.
func TestLastModified(t *testing.T) {
	l := NewText(&bytes.Buffer{}, slog.LevelInfo)
	components(l)
	clock := time.UnixMilli(1_000)
	l.now = func() time.Time { return clock }
	if _, err := l.SetLevel(Agent, "DEBUG"); err != nil {
		t.Fatal(err)
	}
	clock = time.UnixMilli(2_000)
	if _, err := l.SetLevel(AgentTasks, "ERROR"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{Agent: 1_000, AgentTransport: 1_000, AgentTasks: 2_000, Herder: 0, Root: 0} {
		info, ok := l.Level(name)
		var got int64
		if !info.LastModified.IsZero() {
			got = info.LastModified.UnixMilli()
		}
		if !ok || got != want {
			t.Errorf("%s: last modified %d (found %v), want %d", name, got, ok, want)
		}
	}
}

func TestLevelLookup(t *testing.T) {
	l := NewText(&bytes.Buffer{}, slog.LevelWarn)
	l.Logger(Herder)
	tests := []struct {
		name  string
		found bool
		level string
	}{
		{"root", true, "WARN"},
		{"ROOT", true, "WARN"},
		{Herder, true, "WARN"},
		{Coordinator, false, ""}, // a parent nobody made or named does not exist
		{"io.sluice.coordinator.herder.x", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, ok := l.Level(tt.name)
			if ok != tt.found || info.Level != tt.level {
				t.Fatalf("Level(%q) = %+v, %v; want %q, %v", tt.name, info, ok, tt.level, tt.found)
			}
		})
	}
}

// TestLevelChangesOutput: a named logger writes what its current level
// lets through, with the attributes it was given before the change.
func TestLevelChangesOutput(t *testing.T) {
	var buf bytes.Buffer
	l := NewText(&buf, slog.LevelInfo)
	log := l.Logger(Herder).With("agent", "a-1")
	log.Debug("hidden")
	if _, err := l.SetLevel("io.sluice.coordinator", "DEBUG"); err != nil {
		t.Fatal(err)
	}
	log.Debug("shown")
	if _, err := l.SetLevel(Root, "OFF"); err != nil {
		t.Fatal(err)
	}
	log.Error("silenced")
	out := buf.String()
	if strings.Contains(out, "hidden") || strings.Contains(out, "silenced") || !strings.Contains(out, `level=DEBUG msg=shown agent=a-1 logger=io.sluice.coordinator.herder`) {
		t.Fatalf("output:\n%s", out)
	}
}

// TestFromLogger: loggers made over a plain logger start at what it logged.
func TestFromLogger(t *testing.T) {
	var buf bytes.Buffer
	l := FromLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if info, _ := l.Level(Root); info.Level != "WARN" {
		t.Fatalf("root level %q, want WARN", info.Level)
	}
	l.Logger(Agent).Info("hidden")
	l.Logger(Agent).Warn("shown")
	if out := buf.String(); strings.Contains(out, "hidden") || !strings.Contains(out, "shown") {
		t.Fatalf("output:\n%s", out)
	}
}
