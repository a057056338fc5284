package records

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Target states as Kafka Connect stores them. REST says RUNNING where the
// store says STARTED.
const (
	TargetStarted = "STARTED"
	TargetPaused  = "PAUSED"
	TargetStopped = "STOPPED"
)

// Key prefixes of the config topic.
const (
	prefixConnector   = "connector-"
	prefixTargetState = "target-state-"
	prefixTask        = "task-"
	prefixCommit      = "commit-"
	prefixFencing     = "tasks-fencing-"
	prefixLogger      = "logger-cluster-"
)

// ConfigKind says what a config-topic record is about.
type ConfigKind int

// The kinds of config-topic records Sluice reads; others are ignored.
const (
	KindUnknown ConfigKind = iota
	KindConnector
	KindTargetState
	KindTask
	KindCommit
	KindFencing
	// KindLoggerLevel is a cluster-wide log level (KIP-976).
	KindLoggerLevel
)

// ConfigRecord is a decoded config-topic record. Tombstone is set when the
// record has a null value.
type ConfigRecord struct {
	Kind       ConfigKind
	Connector  string
	Task       int
	Properties map[string]string
	// TargetState is STARTED, PAUSED or STOPPED.
	TargetState string
	// Count is the task count of a commit or fencing record.
	Count int
	// Logger and Level are a logger level record's namespace and level.
	Logger    string
	Level     string
	Tombstone bool
	// Plugin is the plugin version a connector record's config resolved
	// to when it was written; nil when the record has none (written by
	// Kafka Connect, or by a Sluice before KIP-891's ranges).
	Plugin *PluginPin
}

// PluginPin is the plugin a connector config resolved to when it was
// written: the version its connector.plugin.version (a version, a range,
// latest or nothing) chose among the versions the live agents had. It is
// kept with the config, in a field Kafka Connect does not read, so that
// every task of the connector runs that one version until the config is
// written again.
type PluginPin struct {
	// Class is the connector class the config named, and Spec its
	// connector.plugin.version as written: the pin holds for a config
	// that still names both.
	Class string `json:"class"`
	Spec  string `json:"spec,omitempty"`
	// Version is the version chosen; Java tells a Java plugin of an
	// agent's connector host from a built-in Go plugin.
	Version string `json:"version"`
	Java    bool   `json:"java,omitempty"`
}

// ConnectorKey is the config-topic key of a connector's config.
func ConnectorKey(name string) string { return prefixConnector + name }

// TargetStateKey is the config-topic key of a connector's target state.
func TargetStateKey(name string) string { return prefixTargetState + name }

// TaskKey is the config-topic key of one task's config.
func TaskKey(name string, task int) string { return fmt.Sprintf("%s%s-%d", prefixTask, name, task) }

// CommitKey is the config-topic key that commits a connector's task configs.
func CommitKey(name string) string { return prefixCommit + name }

// FencingKey is the config-topic key of the exactly-once task-count record.
func FencingKey(name string) string { return prefixFencing + name }

// LoggerKey is the config-topic key of a cluster-wide log level, as Kafka
// Connect names it: logger-cluster-<namespace>.
func LoggerKey(namespace string) string { return prefixLogger + namespace }

type propertiesValue struct {
	Properties map[string]string `json:"properties"`
	// Plugin is a connector record's PluginPin, under a name of Sluice's
	// own beside Kafka Connect's "properties".
	Plugin *PluginPin `json:"sluice.plugin,omitempty"`
}

type targetStateValue struct {
	State   string `json:"state"`
	StateV2 string `json:"state.v2,omitempty"`
}

type commitValue struct {
	Tasks int `json:"tasks"`
}

type fencingValue struct {
	TaskCount int `json:"task-count"`
}

type loggerValue struct {
	Level *string `json:"level"`
}

// EncodeProperties encodes a connector or task config value.
func EncodeProperties(props map[string]string) []byte {
	if props == nil {
		props = map[string]string{}
	}
	return mustJSON(propertiesValue{Properties: props})
}

// EncodeConnectorConfig encodes a connector config value with the plugin
// version it resolved to (nil: none).
func EncodeConnectorConfig(props map[string]string, pin *PluginPin) []byte {
	if props == nil {
		props = map[string]string{}
	}
	return mustJSON(propertiesValue{Properties: props, Plugin: pin})
}

// EncodeTargetState encodes a target state the way Kafka Connect does: the
// v1 field holds what an old worker understands (STOPPED falls back to
// PAUSED) and readers prefer state.v2.
func EncodeTargetState(state string) []byte {
	v1 := state
	if state == TargetStopped {
		v1 = TargetPaused
	}
	return mustJSON(targetStateValue{State: v1, StateV2: state})
}

// EncodeCommit encodes a task-config commit record.
func EncodeCommit(tasks int) []byte { return mustJSON(commitValue{Tasks: tasks}) }

// EncodeFencing encodes an exactly-once task-count record.
func EncodeFencing(count int) []byte { return mustJSON(fencingValue{TaskCount: count}) }

// EncodeLoggerLevel encodes a cluster-wide log level record: {"level":<level>}.
func EncodeLoggerLevel(level string) []byte { return mustJSON(loggerValue{Level: &level}) }

// DecodeConfig decodes a config-topic record. Records of kinds Sluice does
// not use decode as KindUnknown without error, so a topic shared with Kafka
// Connect (session keys, restart requests) reads cleanly.
func DecodeConfig(key string, value []byte) (ConfigRecord, error) {
	rec := ConfigRecord{Tombstone: value == nil}
	switch {
	case strings.HasPrefix(key, prefixConnector):
		rec.Kind, rec.Connector = KindConnector, strings.TrimPrefix(key, prefixConnector)
		if value != nil {
			var v propertiesValue
			if err := json.Unmarshal(value, &v); err != nil {
				return rec, fmt.Errorf("decode %s: %w", key, err)
			}
			rec.Properties, rec.Plugin = v.Properties, v.Plugin
		}
	case strings.HasPrefix(key, prefixTargetState):
		rec.Kind, rec.Connector = KindTargetState, strings.TrimPrefix(key, prefixTargetState)
		if value != nil {
			var v targetStateValue
			if err := json.Unmarshal(value, &v); err != nil {
				return rec, fmt.Errorf("decode %s: %w", key, err)
			}
			rec.TargetState = v.StateV2
			if rec.TargetState == "" {
				rec.TargetState = v.State
			}
			switch rec.TargetState {
			case TargetStarted, TargetPaused, TargetStopped:
			default:
				return rec, fmt.Errorf("decode %s: unknown target state %q", key, rec.TargetState)
			}
		}
	case strings.HasPrefix(key, prefixFencing):
		rec.Kind, rec.Connector = KindFencing, strings.TrimPrefix(key, prefixFencing)
		if value != nil {
			var v fencingValue
			if err := json.Unmarshal(value, &v); err != nil {
				return rec, fmt.Errorf("decode %s: %w", key, err)
			}
			rec.Count = v.TaskCount
		}
	case strings.HasPrefix(key, prefixLogger):
		rec.Kind, rec.Logger = KindLoggerLevel, strings.TrimPrefix(key, prefixLogger)
		if value != nil {
			var v loggerValue
			if err := json.Unmarshal(value, &v); err != nil {
				return rec, fmt.Errorf("decode %s: %w", key, err)
			}
			if v.Level == nil {
				return rec, fmt.Errorf("decode %s: no level", key)
			}
			rec.Level = *v.Level
		}
	case strings.HasPrefix(key, prefixTask):
		name, task, ok := splitTaskKey(strings.TrimPrefix(key, prefixTask))
		if !ok {
			return rec, fmt.Errorf("decode %s: malformed task key", key)
		}
		rec.Kind, rec.Connector, rec.Task = KindTask, name, task
		if value != nil {
			var v propertiesValue
			if err := json.Unmarshal(value, &v); err != nil {
				return rec, fmt.Errorf("decode %s: %w", key, err)
			}
			rec.Properties = v.Properties
		}
	case strings.HasPrefix(key, prefixCommit):
		rec.Kind, rec.Connector = KindCommit, strings.TrimPrefix(key, prefixCommit)
		if value != nil {
			var v commitValue
			if err := json.Unmarshal(value, &v); err != nil {
				return rec, fmt.Errorf("decode %s: %w", key, err)
			}
			rec.Count = v.Tasks
		}
	}
	return rec, nil
}

// splitTaskKey splits "<name>-<n>" at the last dash: connector names may
// themselves contain dashes, task numbers never do.
func splitTaskKey(s string) (string, int, bool) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return s[:i], n, true
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only fixed, marshalable types reach here.
		panic(fmt.Sprintf("records: marshal %T: %v", v, err))
	}
	return b
}

// Record is a key and value to append to a topic; a nil Value is a tombstone.
type Record struct {
	Key   string
	Value []byte
}
