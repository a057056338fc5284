package values

import (
	"strconv"

	"github.com/sluice-io/sluice/connect"
)

// Logical schema names Debezium and Kafka Connect give column values.
const (
	decimalName        = "org.apache.kafka.connect.data.Decimal"
	connectDateName    = "org.apache.kafka.connect.data.Date"
	connectTimeName    = "org.apache.kafka.connect.data.Time"
	connectTimestamp   = "org.apache.kafka.connect.data.Timestamp"
	variableScaleName  = "io.debezium.data.VariableScaleDecimal"
	dateName           = "io.debezium.time.Date"
	timeName           = "io.debezium.time.Time"
	microTimeName      = "io.debezium.time.MicroTime"
	nanoTimeName       = "io.debezium.time.NanoTime"
	timestampName      = "io.debezium.time.Timestamp"
	microTimestampName = "io.debezium.time.MicroTimestamp"
	nanoTimestampName  = "io.debezium.time.NanoTimestamp"
	zonedTimestampName = "io.debezium.time.ZonedTimestamp"
	zonedTimeName      = "io.debezium.time.ZonedTime"
	microDurationName  = "io.debezium.time.MicroDuration"
	intervalName       = "io.debezium.time.Interval"
	jsonName           = "io.debezium.data.Json"
	uuidName           = "io.debezium.data.Uuid"
	xmlName            = "io.debezium.data.Xml"
	enumName           = "io.debezium.data.Enum"
	bitsName           = "io.debezium.data.Bits"
	pointName          = "io.debezium.data.geometry.Point"
	tsvectorName       = "io.debezium.data.Tsvector"
	ltreeName          = "io.debezium.data.Ltree"
)

// named is a version-1 logical schema, as every one Debezium uses here is.
func named(typ, name string, params map[string]string) *connect.Schema {
	v := int32(1)
	return &connect.Schema{Type: typ, Name: name, Version: &v, Parameters: params}
}

func plain(typ string) *connect.Schema { return &connect.Schema{Type: typ} }

// decimalSchema is Connect's Decimal with Debezium's precision parameter;
// precision < 0 leaves it out (money's schema has none).
func decimalSchema(precision, scale int) *connect.Schema {
	p := map[string]string{"scale": strconv.Itoa(scale)}
	if precision >= 0 {
		p["connect.decimal.precision"] = strconv.Itoa(precision)
	}
	return named(connect.SchemaTypeBytes, decimalName, p)
}

func variableScaleSchema() *connect.Schema {
	s := named(connect.SchemaTypeStruct, variableScaleName, nil)
	s.Doc = "Variable scaled decimal"
	s.Fields = []connect.Field{
		{Name: "scale", Schema: plain(connect.SchemaTypeInt32)},
		{Name: "value", Schema: plain(connect.SchemaTypeBytes)},
	}
	return s
}

func pointSchema() *connect.Schema {
	s := named(connect.SchemaTypeStruct, pointName, nil)
	s.Doc = "Geometry (POINT)"
	s.Fields = []connect.Field{
		{Name: "x", Schema: plain(connect.SchemaTypeFloat64)},
		{Name: "y", Schema: plain(connect.SchemaTypeFloat64)},
		{Name: "wkb", Schema: &connect.Schema{Type: connect.SchemaTypeBytes, Optional: true}},
		{Name: "srid", Schema: &connect.Schema{Type: connect.SchemaTypeInt32, Optional: true}},
	}
	return s
}

// binarySchema is binary.handling.mode's schema: bytes, or a string for the
// text encodings.
func binarySchema(m Modes) *connect.Schema {
	if m.Binary == BinaryBytes {
		return plain(connect.SchemaTypeBytes)
	}
	return plain(connect.SchemaTypeString)
}

// The time.precision.mode choices Debezium makes for a precision (the
// column's fractional-second digits): adaptive picks milli-, micro- or
// nanosecond types by it.
type timeUnit int

const (
	unitConnect timeUnit = iota // Connect's logical types, milliseconds
	unitMillis
	unitMicros
	unitNanos
)

func adaptiveUnit(precision int) timeUnit {
	switch {
	case precision <= 3:
		return unitMillis
	case precision <= 6:
		return unitMicros
	}
	return unitNanos
}

func timeOfDayUnit(m Modes, precision int) timeUnit {
	switch m.Time {
	case TimeAdaptive:
		return adaptiveUnit(precision)
	case TimeConnect:
		return unitConnect
	case TimeNanoseconds:
		return unitNanos
	}
	return unitMicros // adaptive_time_microseconds, microseconds
}

func timestampUnit(m Modes, precision int) timeUnit {
	switch m.Time {
	case TimeAdaptive, TimeAdaptiveTimeMicroseconds:
		return adaptiveUnit(precision)
	case TimeConnect:
		return unitConnect
	case TimeNanoseconds:
		return unitNanos
	}
	return unitMicros
}

func timeSchema(u timeUnit) *connect.Schema {
	switch u {
	case unitConnect:
		return named(connect.SchemaTypeInt32, connectTimeName, nil)
	case unitMillis:
		return named(connect.SchemaTypeInt32, timeName, nil)
	case unitMicros:
		return named(connect.SchemaTypeInt64, microTimeName, nil)
	}
	return named(connect.SchemaTypeInt64, nanoTimeName, nil)
}

func timestampSchema(u timeUnit) *connect.Schema {
	switch u {
	case unitConnect:
		return named(connect.SchemaTypeInt64, connectTimestamp, nil)
	case unitMillis:
		return named(connect.SchemaTypeInt64, timestampName, nil)
	case unitMicros:
		return named(connect.SchemaTypeInt64, microTimestampName, nil)
	}
	return named(connect.SchemaTypeInt64, nanoTimestampName, nil)
}

func dateSchema(m Modes) *connect.Schema {
	if m.Time == TimeConnect {
		return named(connect.SchemaTypeInt32, connectDateName, nil)
	}
	return named(connect.SchemaTypeInt32, dateName, nil)
}
