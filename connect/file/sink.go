package file

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"os"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/javatext"
)

// SinkPlugin describes the file sink for the plugin registry.
func SinkPlugin() *connect.Plugin {
	return &connect.Plugin{
		Class: SinkClass, Kind: connect.KindSink, Version: connect.Version,
		Aliases:      []string{"FileStreamSink", "FileStreamSinkConnector"},
		NewConnector: func() connect.Connector { return &SinkConnector{} },
		FileConfigs:  []string{FileConfig},
	}
}

// SinkConfigDef mirrors Kafka's FileStreamSinkConnector.CONFIG_DEF. The
// topics and topics.regex keys are common to every sink connector.
func SinkConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: FileConfig, Type: connect.TypeString,
		Importance:    connect.ImportanceHigh,
		Documentation: "Destination filename. If not specified, the standard output will be used"})
}

// SinkConnector appends each record's value to a file as one line.
type SinkConnector struct {
	props map[string]string
}

var (
	_ connect.SinkConnector = (*SinkConnector)(nil)
	_ connect.OffsetAlterer = (*SinkConnector)(nil)
)

// ConfigDef implements connect.Connector.
func (*SinkConnector) ConfigDef() *connect.ConfigDef { return SinkConfigDef() }

// Validate implements connect.Connector; the ConfigDef says everything.
func (*SinkConnector) Validate(map[string]string) []connect.ConfigValue { return nil }

// Start implements connect.Connector.
func (c *SinkConnector) Start(_ connect.ConnectorContext, props map[string]string) error {
	c.props = maps.Clone(props)
	return nil
}

// TaskConfigs implements connect.Connector: maxTasks identical tasks, which
// share the topic partitions through the consumer group.
func (c *SinkConnector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, maxTasks)
	for i := range out {
		out[i] = maps.Clone(c.props)
	}
	return out, nil
}

// Stop implements connect.Connector.
func (*SinkConnector) Stop() error { return nil }

// NewTask implements connect.SinkConnector.
func (*SinkConnector) NewTask() connect.SinkTask { return &SinkTask{} }

// AlterOffsets implements connect.OffsetAlterer: the sink keeps no offsets
// of its own and accepts any change, as Kafka's does.
func (*SinkConnector) AlterOffsets(map[string]string, []connect.Offset) (bool, error) {
	return true, nil
}

// SinkTask appends record values to a file, or to standard output when no
// file is configured.
type SinkTask struct {
	file *os.File
	w    *bufio.Writer
}

var _ connect.SinkTask = (*SinkTask)(nil)

// Start implements connect.SinkTask.
func (t *SinkTask) Start(ctx context.Context, tc connect.SinkTaskContext, props map[string]string) error {
	v, err := SinkConfigDef().Parse(props)
	if err != nil {
		return err
	}
	name := v.String(FileConfig)
	var out io.Writer = os.Stdout
	if name != "" {
		// The path as resolved (symlinks followed) is what is opened, so
		// a link changed after the check cannot lead elsewhere unnoticed.
		path, err := tc.AllowedPaths.Check(name, tc.WorkDir)
		if err != nil {
			return fmt.Errorf("FileStreamSinkTask may not write to '%s': %w", name, err)
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("Couldn't find or create file '%s' for FileStreamSinkTask: %w", name, err)
		}
		t.file, out = f, f
	}
	t.w = bufio.NewWriterSize(out, writeBufferBytes)
	return nil
}

// writeBufferBytes is the size of the buffer a batch of lines is gathered
// in: large enough that a batch of a busy topic costs a few writes, not one
// per 4 KiB.
const writeBufferBytes = 64 << 10

// Put implements connect.SinkTask. The batch's lines are in the file (in
// the OS, not yet on disk: that is Flush's job) when it returns, as each
// line of Kafka's file sink is, so that a reader of the file sees a record
// as soon as the task took it — not at the next offset flush.
func (t *SinkTask) Put(ctx context.Context, records []connect.SinkRecord) error {
	for _, r := range records {
		if _, err := t.w.WriteString(Line(r.ValueSchema, r.Value)); err != nil {
			return err
		}
		if err := t.w.WriteByte('\n'); err != nil {
			return err
		}
	}
	return t.w.Flush()
}

// Line renders a record value as the sink writes it: as Kafka's
// FileStreamSink does, the text Java's String.valueOf gives the value the
// worker holds (package javatext) — a string as is, null as "null", a
// struct as Struct{…}, a map as {k=v, …}, numbers as Java prints them.
// Bytes, where Java prints an identity hash ([B@1b6d3586), are written as
// they are (with ByteArrayConverter the line is the record's own bytes);
// bytes inside a struct, map or array are written as base64.
func Line(schema *connect.Schema, value any) string {
	switch v := value.(type) {
	case string: // the common case, without a detour
		return v
	case []byte:
		if !isDecimal(schema) {
			return string(v)
		}
	}
	return javatext.String(schema, value)
}

// isDecimal reports whether s is the Decimal logical type, whose bytes
// stand for a number.
func isDecimal(s *connect.Schema) bool { return s != nil && s.Name == javatext.DecimalName }

// Flush implements connect.SinkTask: buffered lines reach the file and the
// file reaches the disk before the runtime commits the consumed offsets.
func (t *SinkTask) Flush(ctx context.Context) error {
	if err := t.w.Flush(); err != nil {
		return err
	}
	if t.file != nil {
		return t.file.Sync()
	}
	return nil
}

// Stop implements connect.SinkTask.
func (t *SinkTask) Stop() error {
	if t.w == nil {
		return nil
	}
	err := t.w.Flush()
	if t.file != nil {
		if cerr := t.file.Close(); err == nil {
			err = cerr
		}
		t.file = nil
	}
	return err
}
