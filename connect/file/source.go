// Package file holds Sluice's file connectors, which accept the class names,
// config keys and offsets of Kafka Connect's FileStreamSourceConnector and
// FileStreamSinkConnector so that existing examples work unchanged. Relative
// paths resolve against the agent's working directory; unlike Kafka's, the
// source requires a file, since the standard input of a sidecar means
// nothing.
package file

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"strings"

	"github.com/sluice-io/sluice/connect"
)

// Class names, and the keys and offset fields the file source uses.
const (
	SourceClass = "org.apache.kafka.connect.file.FileStreamSourceConnector"
	SinkClass   = "org.apache.kafka.connect.file.FileStreamSinkConnector"

	FileConfig      = "file"
	TopicConfig     = "topic"
	BatchSizeConfig = "batch.size"

	// DefaultBatchSize is the most records one Poll returns by default,
	// and MaxBatchSize the most batch.size may ask for: a poll holds its
	// records, read whole lines, in memory.
	DefaultBatchSize = 2000
	MaxBatchSize     = 100_000

	FilenameField = "filename"
	PositionField = "position"
)

// SourcePlugin describes the file source for the plugin registry.
func SourcePlugin() *connect.Plugin {
	return &connect.Plugin{
		Class: SourceClass, Kind: connect.KindSource, Version: connect.Version,
		Aliases:      []string{"FileStreamSource", "FileStreamSourceConnector"},
		NewConnector: func() connect.Connector { return &SourceConnector{} },
		FileConfigs:  []string{FileConfig},
	}
}

// SourceConfigDef mirrors Kafka's FileStreamSourceConnector.CONFIG_DEF key
// for key, so GET /connector-plugins/…/config answers as Kafka Connect does;
// Validate adds Sluice's one rule on top: file is required.
func SourceConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: FileConfig, Type: connect.TypeString,
			Importance: connect.ImportanceHigh,
			Documentation: "Source filename. Relative paths resolve against the working directory of the agent that runs the task. " +
				"Sluice requires it: an agent has no standard input to read"}).
		Define(connect.ConfigKey{Name: TopicConfig, Type: connect.TypeString, Required: true,
			Validator: connect.NonEmptyString{}, Importance: connect.ImportanceHigh,
			Documentation: "The topic to publish data to"}).
		Define(connect.ConfigKey{Name: BatchSizeConfig, Type: connect.TypeInt, Default: int32(DefaultBatchSize),
			// Kafka's key has no validator; Sluice bounds it from above only,
			// so every value Kafka takes below the bound is still taken.
			Validator:     connect.IfSet{V: connect.Range{Max: MaxBatchSize}},
			Importance:    connect.ImportanceLow,
			Documentation: "The maximum number of records the source task can read from the file each time it is polled"})
}

// SourceConnector reads a file line by line into a topic with one task.
type SourceConnector struct {
	props map[string]string
}

var (
	_ connect.SourceConnector            = (*SourceConnector)(nil)
	_ connect.OffsetAlterer              = (*SourceConnector)(nil)
	_ connect.ExactlyOnceSourceConnector = (*SourceConnector)(nil)
)

// ExactlyOnceSupport implements connect.ExactlyOnceSourceConnector as
// Kafka's FileStreamSourceConnector does: a file (appended to only) can be
// read again from an offset, the standard input cannot.
func (*SourceConnector) ExactlyOnceSupport(props map[string]string) (connect.Support, error) {
	if strings.TrimSpace(props[FileConfig]) == "" {
		return connect.SupportUnsupported, nil
	}
	return connect.SupportSupported, nil
}

// ConfigDef implements connect.Connector.
func (*SourceConnector) ConfigDef() *connect.ConfigDef { return SourceConfigDef() }

// Validate implements connect.Connector: file must be given and not blank
// (Kafka's connector would read the standard input, which a sidecar agent
// does not have).
func (*SourceConnector) Validate(props map[string]string) []connect.ConfigValue {
	v, ok := props[FileConfig]
	switch {
	case !ok:
		return []connect.ConfigValue{{Name: FileConfig, Errors: []string{connect.MissingMessage(FileConfig)}, Visible: true}}
	case strings.TrimSpace(v) == "":
		return []connect.ConfigValue{{Name: FileConfig, Value: &v, Errors: []string{"Invalid value " + v + " for configuration " + FileConfig + ": String must be non-empty"}, Visible: true}}
	}
	return nil
}

// Start implements connect.Connector; the file is opened by the task, on
// its agent, so there is nothing to check here.
func (c *SourceConnector) Start(_ connect.ConnectorContext, props map[string]string) error {
	c.props = maps.Clone(props)
	return nil
}

// TaskConfigs implements connect.Connector: one task, whatever tasks.max
// says, since only one reader of a file makes sense.
func (c *SourceConnector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	return []map[string]string{maps.Clone(c.props)}, nil
}

// Stop implements connect.Connector.
func (*SourceConnector) Stop() error { return nil }

// NewTask implements connect.SourceConnector.
func (*SourceConnector) NewTask() connect.SourceTask { return &SourceTask{} }

// AlterOffsets implements connect.OffsetAlterer with the checks of Kafka's
// FileStreamSourceConnector.alterOffsets, in its order. A null offset is
// always allowed so that junk can be cleaned up.
func (*SourceConnector) AlterOffsets(props map[string]string, offsets []connect.Offset) (bool, error) {
	if strings.TrimSpace(props[FileConfig]) == "" {
		return false, errors.New("Offsets cannot be modified if the '" + FileConfig + "' configuration is unspecified. " +
			"This is because stdin is used for input and offsets are not tracked.")
	}
	for _, o := range offsets {
		if o.Offset == nil {
			continue
		}
		raw, ok := o.Offset[PositionField]
		if !ok {
			return false, errors.New("Offset objects should either be null or contain the key '" + PositionField + "'")
		}
		pos, ok := AsLong(raw)
		if !ok {
			return false, errors.New("The value for the '" + PositionField + "' key in the offset is expected to be a Long value")
		}
		if pos < 0 {
			return false, errors.New("The value for the '" + PositionField + "' key in the offset should be a non-negative value")
		}
		if o.Partition == nil {
			return false, errors.New("Partition objects cannot be null")
		}
		if _, ok := o.Partition[FilenameField]; !ok {
			return false, errors.New("Partition objects should contain the key '" + FilenameField + "'")
		}
	}
	// The task checks on start whether the position fits the file.
	return true, nil
}

// AsLong reports whether v is what Kafka sees as a Long once the REST body
// has been normalised: an integer JSON number within 64 bits. A json.Number
// must be written as an integer (5.0 is a Double in Kafka); a float64 counts
// when it holds an integral value, since a decoder without UseNumber cannot
// tell 5 from 5.0. Strings and booleans are never Longs.
func AsLong(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return 0, false
		}
		n, err := x.Int64()
		return n, err == nil
	case float64:
		if x != math.Trunc(x) || x < math.MinInt64 || x >= math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	}
	return 0, false
}
