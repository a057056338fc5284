package transforms

import (
	"strings"
	"time"

	"github.com/sluice-io/sluice/connect"
)

// TimestampConverterClass is TimestampConverter's class name (with $Key or
// $Value).
const TimestampConverterClass = "org.apache.kafka.connect.transforms.TimestampConverter"

// Kafka's logical types of time, carried in their physical form: a
// Timestamp is epoch milliseconds (int64), a Date days since the epoch
// (int32), a Time milliseconds since midnight (int32) — as JsonConverter
// writes them.
const (
	timestampLogical = "org.apache.kafka.connect.data.Timestamp"
	dateLogical      = "org.apache.kafka.connect.data.Date"
	timeLogical      = "org.apache.kafka.connect.data.Time"
)

func timestampConverterDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "field", Type: connect.TypeString, Default: "", Importance: connect.ImportanceHigh,
			Documentation: "The field containing the timestamp, or empty if the entire value is a timestamp"}).
		Define(connect.ConfigKey{Name: "target.type", Type: connect.TypeString, Required: true,
			Validator:  connect.In("string", "unix", "Date", "Time", "Timestamp"),
			Importance: connect.ImportanceHigh, Documentation: "The desired timestamp representation: string, unix, Date, Time, or Timestamp"}).
		Define(connect.ConfigKey{Name: "format", Type: connect.TypeString, Default: "", Importance: connect.ImportanceMedium,
			Documentation: "A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when type=string or used to parse the input if the input is a string."}).
		Define(connect.ConfigKey{Name: "unix.precision", Type: connect.TypeString, Default: "milliseconds",
			Validator:  connect.In("nanoseconds", "microseconds", "milliseconds", "seconds"),
			Importance: connect.ImportanceLow, Documentation: "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or nanoseconds. Used to generate the output when type=unix or used to parse the input if the input is a Long.Note: This SMT will cause precision loss during conversions from, and to, values with sub-millisecond components."}).
		Define(replaceNullKey())
}

// timestampConverter is Kafka's TimestampConverter: a timestamp (the whole
// key or value, or one field of it) becomes a string, a Unix number, or a
// Date, Time or Timestamp.
type timestampConverter struct {
	side      side
	field     string
	target    string
	format    *dateFormat
	precision string
}

const timestampPurpose = "converting timestamp formats"

func (t *timestampConverter) Configure(props map[string]string) error {
	v, err := timestampConverterDef().Parse(props)
	if err != nil {
		return err
	}
	t.field, t.target, t.precision = v.String("field"), v.String("target.type"), v.String("unix.precision")
	pattern := v.String("format")
	if t.target == "string" && strings.TrimSpace(pattern) == "" {
		return &connect.ConfigError{Message: "TimestampConverter requires format option to be specified when using string timestamps"}
	}
	if strings.TrimSpace(pattern) != "" {
		if t.format, err = parseDateFormat(pattern); err != nil {
			return &connect.ConfigError{Message: "TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: " + pattern}
		}
	}
	return nil
}

// targetSchema is the schema of a converted timestamp.
func (t *timestampConverter) targetSchema(optional bool) *connect.Schema {
	one := int32(1)
	switch t.target {
	case "string":
		return &connect.Schema{Type: connect.SchemaTypeString, Optional: optional}
	case "unix":
		return &connect.Schema{Type: connect.SchemaTypeInt64, Optional: optional}
	case "Date":
		return &connect.Schema{Type: connect.SchemaTypeInt32, Name: dateLogical, Version: &one, Optional: optional}
	case "Time":
		return &connect.Schema{Type: connect.SchemaTypeInt32, Name: timeLogical, Version: &one, Optional: optional}
	}
	return &connect.Schema{Type: connect.SchemaTypeInt64, Name: timestampLogical, Version: &one, Optional: optional}
}

func (t *timestampConverter) Apply(r *connect.TransformRecord) (*connect.TransformRecord, error) {
	schema, data := t.side.get(r)
	if schema == nil {
		if data == nil || t.field == "" {
			v, err := t.convert(data, "")
			if err != nil {
				return nil, err
			}
			return t.side.with(r, nil, v), nil
		}
		m, err := requireMap(data, timestampPurpose)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		for k, v := range m {
			out[k] = v
		}
		if out[t.field], err = t.convert(m[t.field], ""); err != nil {
			return nil, err
		}
		return t.side.with(r, nil, out), nil
	}
	if t.field == "" {
		from, err := typeOfSchema(schema)
		if err != nil {
			return nil, err
		}
		v, err := t.convert(data, from)
		if err != nil {
			return nil, err
		}
		return t.side.with(r, t.targetSchema(schema.Optional), v), nil
	}
	var m map[string]any
	if data != nil {
		var err error
		if m, err = requireStruct(schema, data, timestampPurpose); err != nil {
			return nil, err
		}
	}
	ns := copyBasics(schema, connect.SchemaTypeStruct)
	out := make(map[string]any, len(m))
	for _, f := range schema.Fields {
		if f.Name != t.field {
			ns.Fields = append(ns.Fields, f)
			out[f.Name] = m[f.Name]
			continue
		}
		ns.Fields = append(ns.Fields, connect.Field{Name: f.Name, Schema: t.targetSchema(f.Schema.Optional)})
		from, err := typeOfSchema(f.Schema)
		if err != nil {
			return nil, err
		}
		if out[f.Name], err = t.convert(m[f.Name], from); err != nil {
			return nil, err
		}
	}
	if m == nil {
		return t.side.with(r, ns, nil), nil
	}
	return t.side.with(r, ns, out), nil
}

func (*timestampConverter) Close() error { return nil }

// typeOfSchema is the timestamp type a schema holds (Kafka's
// timestampTypeFromSchema).
func typeOfSchema(s *connect.Schema) (string, error) {
	switch {
	case s.Name == timestampLogical:
		return "Timestamp", nil
	case s.Name == dateLogical:
		return "Date", nil
	case s.Name == timeLogical:
		return "Time", nil
	case s.Type == connect.SchemaTypeString:
		return "string", nil
	case s.Type == connect.SchemaTypeInt64:
		return "unix", nil
	}
	return "", dataErrorf("Schema %s does not correspond to a known timestamp type format", schemaString(s))
}

// schemaString is Kafka's ConnectSchema.toString: Schema{NAME:TYPE}, or
// Schema{TYPE} without a name.
func schemaString(s *connect.Schema) string {
	if s.Name != "" {
		return "Schema{" + s.Name + ":" + strings.ToUpper(s.Type) + "}"
	}
	return "Schema{" + strings.ToUpper(s.Type) + "}"
}

// convert converts v, of type from ("" infers it), to the target type.
func (t *timestampConverter) convert(v any, from string) (any, error) {
	if v == nil {
		return nil, nil
	}
	if from == "" {
		switch v.(type) {
		case int64, int:
			from = "unix"
		case string:
			from = "string"
		default:
			return nil, dataErrorf("TimestampConverter does not support class %s objects as timestamps", javaClassName(v))
		}
	}
	raw, err := t.toRaw(v, from)
	if err != nil {
		return nil, err
	}
	ms := raw.UnixMilli()
	switch t.target {
	case "string":
		return t.format.format(raw), nil
	case "unix":
		switch t.precision {
		case "seconds":
			return ms / 1000, nil
		case "microseconds":
			return ms * 1000, nil
		case "nanoseconds":
			return ms * 1_000_000, nil
		}
		return ms, nil
	case "Date":
		return int32(floorDiv(ms, 86_400_000)), nil
	case "Time":
		return int32(ms - floorDiv(ms, 86_400_000)*86_400_000), nil
	}
	return ms, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// toRaw reads v of type from as an instant.
func (t *timestampConverter) toRaw(v any, from string) (time.Time, error) {
	switch from {
	case "string":
		s, _ := v.(string)
		if t.format == nil {
			return time.Time{}, dataErrorf("TimestampConverter requires format option to be specified when using string timestamps")
		}
		tm, err := t.format.parse(s)
		if err != nil {
			return time.Time{}, dataErrorf("Could not parse timestamp: value (%s) does not match pattern (%s)", s, t.format.src)
		}
		return tm, nil
	case "unix":
		n, _ := asInt64(v)
		switch t.precision {
		case "seconds":
			return time.UnixMilli(n * 1000).UTC(), nil
		case "microseconds":
			return time.UnixMilli(n / 1000).UTC(), nil
		case "nanoseconds":
			return time.UnixMilli(n / 1_000_000).UTC(), nil
		}
		return time.UnixMilli(n).UTC(), nil
	case "Date":
		n, _ := asInt64(v)
		return time.UnixMilli(n * 86_400_000).UTC(), nil
	}
	// Timestamp and Time are milliseconds.
	n, _ := asInt64(v)
	return time.UnixMilli(n).UTC(), nil
}
