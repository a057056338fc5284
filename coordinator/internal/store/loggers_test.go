package store

import (
	"reflect"
	"testing"

	"github.com/sluice-io/sluice/shared/records"
)

// TestLoggerLevels: the list holds each namespace's latest level, in the
// order they were last set (the order to apply them in); a tombstone drops a
// namespace; every change grows the version and wakes waiters.
func TestLoggerLevels(t *testing.T) {
	set := func(ns, level string) records.ConfigRecord {
		return records.ConfigRecord{Kind: records.KindLoggerLevel, Logger: ns, Level: level}
	}
	drop := func(ns string) records.ConfigRecord {
		return records.ConfigRecord{Kind: records.KindLoggerLevel, Logger: ns, Tombstone: true}
	}
	tests := []struct {
		name    string
		recs    []records.ConfigRecord
		want    []LoggerLevel
		version int64
	}{
		{"none", nil, []LoggerLevel{}, 0},
		{"in the order set",
			[]records.ConfigRecord{set("root", "WARN"), set("io.sluice.agent", "DEBUG")},
			[]LoggerLevel{{"root", "WARN"}, {"io.sluice.agent", "DEBUG"}}, 2},
		{"a namespace set again moves to the end",
			[]records.ConfigRecord{set("io.sluice.agent", "DEBUG"), set("root", "WARN"), set("io.sluice.agent", "TRACE")},
			[]LoggerLevel{{"root", "WARN"}, {"io.sluice.agent", "TRACE"}}, 3},
		{"a tombstone drops its namespace",
			[]records.ConfigRecord{set("root", "WARN"), set("io.sluice.agent", "DEBUG"), drop("root")},
			[]LoggerLevel{{"io.sluice.agent", "DEBUG"}}, 3},
		{"a tombstone for nothing changes nothing",
			[]records.ConfigRecord{drop("root")},
			[]LoggerLevel{}, 0},
		{"other kinds are not logger levels",
			[]records.ConfigRecord{{Kind: records.KindConnector, Connector: "c"}},
			[]LoggerLevel{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLoggerLevels()
			for _, r := range tt.recs {
				changed := l.Changed()
				_, before := l.All()
				l.Apply(r)
				if _, after := l.All(); after != before {
					select {
					case <-changed:
					default:
						t.Fatal("a change did not close Changed")
					}
				}
			}
			got, version := l.All()
			if !reflect.DeepEqual(got, tt.want) || version != tt.version {
				t.Fatalf("got %v (version %d), want %v (version %d)", got, version, tt.want, tt.version)
			}
		})
	}
}
