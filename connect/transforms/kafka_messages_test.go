package transforms

import (
	"slices"
	"testing"

	"github.com/sluice-io/sluice/connect"
)

// TestKafkaConfigMessages validates and configures bad settings of each
// transformation and predicate, and expects exactly what Kafka Connect
// 4.4's own classes answer to the same settings (ConfigDef.validate's
// errors, then configure's exception).
func TestKafkaConfigMessages(t *testing.T) {
	const p = "org.apache.kafka.connect.transforms."
	missing := func(k string) string { return `Missing required configuration "` + k + `" which has no default value.` }
	tests := []struct {
		class     string
		props     []string
		validate  map[string][]string
		configure string // "" when configure succeeds
	}{
		{p + "Cast$Value", nil, map[string][]string{"spec": {missing("spec"), "Must specify at least one field to cast."}}, missing("spec")},
		{p + "Cast$Value", []string{"spec", "a:float128"}, map[string][]string{"spec": {"Invalid value java.lang.IllegalArgumentException: No enum constant org.apache.kafka.connect.data.Schema.Type.FLOAT128 for configuration Invalid type found in casting spec: float128"}},
			"Invalid value java.lang.IllegalArgumentException: No enum constant org.apache.kafka.connect.data.Schema.Type.FLOAT128 for configuration Invalid type found in casting spec: float128"},
		{p + "DropHeaders", []string{"headers", ""}, map[string][]string{"headers": {"Configuration 'headers' must not be empty. Valid values include: any non-empty value"}},
			"Configuration 'headers' must not be empty. Valid values include: any non-empty value"},
		{p + "DropHeaders", nil, map[string][]string{"headers": {missing("headers"), "Configuration 'headers' values must not be null."}}, missing("headers")},
		{p + "ExtractField$Value", nil, map[string][]string{"field": {missing("field")}}, missing("field")},
		{p + "ExtractField$Value", []string{"field", "a", "field.syntax.version", "V3"},
			map[string][]string{"field.syntax.version": {"Invalid value V3 for configuration field.syntax.version: String must be one of (case insensitive): V1, V2"}},
			"Invalid value V3 for configuration field.syntax.version: String must be one of (case insensitive): V1, V2"},
		{p + "Flatten$Value", []string{"delimiter", ""}, map[string][]string{}, ""},
		{p + "HeaderFrom$Value", []string{"fields", "a", "headers", "b"},
			map[string][]string{"operation": {missing("operation"), "Invalid value null for configuration operation: String must be one of: move, copy"}}, missing("operation")},
		{p + "HeaderFrom$Value", []string{"fields", "a,b", "headers", "x", "operation", "copy"}, map[string][]string{},
			"'fields' config must have the same number of elements as 'headers' config."},
		{p + "HoistField$Value", nil, map[string][]string{"field": {missing("field")}}, missing("field")},
		{p + "InsertHeader", []string{"header", "h"},
			map[string][]string{"value.literal": {missing("value.literal"), "Invalid value null for configuration value.literal: entry must be non null"}}, missing("value.literal")},
		{p + "MaskField$Value", []string{"fields", "a", "replacement", ""},
			map[string][]string{"replacement": {"Invalid value  for configuration replacement: String must be non-empty"}}, "Invalid value  for configuration replacement: String must be non-empty"},
		{p + "RegexRouter", []string{"regex", "a"}, map[string][]string{"replacement": {missing("replacement")}}, missing("replacement")},
		{p + "ReplaceField$Value", []string{"renames", "a:b:c"},
			map[string][]string{"renames": {"Invalid value [a:b:c] for configuration renames: Invalid rename mapping: a:b:c"}}, "Invalid value [a:b:c] for configuration renames: Invalid rename mapping: a:b:c"},
		{p + "SetSchemaMetadata$Value", []string{"schema.version", "x"},
			map[string][]string{"schema.version": {"Invalid value x for configuration schema.version: Not a number of type INT"}}, "Invalid value x for configuration schema.version: Not a number of type INT"},
		{p + "TimestampConverter$Value", nil,
			map[string][]string{"target.type": {missing("target.type"), "Invalid value null for configuration target.type: String must be one of: string, unix, Date, Time, Timestamp"}}, missing("target.type")},
		{p + "TimestampConverter$Value", []string{"target.type", "string"}, map[string][]string{},
			"TimestampConverter requires format option to be specified when using string timestamps"},
		{p + "TimestampConverter$Value", []string{"target.type", "unix", "unix.precision", "minutes"},
			map[string][]string{"unix.precision": {"Invalid value minutes for configuration unix.precision: String must be one of: nanoseconds, microseconds, milliseconds, seconds"}},
			"Invalid value minutes for configuration unix.precision: String must be one of: nanoseconds, microseconds, milliseconds, seconds"},
		{p + "TimestampConverter$Value", []string{"target.type", "date"},
			map[string][]string{"target.type": {"Invalid value date for configuration target.type: String must be one of: string, unix, Date, Time, Timestamp"}},
			"Invalid value date for configuration target.type: String must be one of: string, unix, Date, Time, Timestamp"},
		{p + "TimestampRouter", []string{"topic.format", ""}, map[string][]string{}, ""},
		{p + "ValueToKey", nil, map[string][]string{"fields": {missing("fields"), "Configuration 'fields' values must not be null."}}, missing("fields")},
		{p + "ValueToKey", []string{"fields", ""}, map[string][]string{"fields": {"Configuration 'fields' must not be empty. Valid values include: any non-empty value"}},
			"Configuration 'fields' must not be empty. Valid values include: any non-empty value"},
		{p + "predicates.HasHeaderKey", nil, map[string][]string{"name": {missing("name")}}, missing("name")},
		{p + "predicates.TopicNameMatches", []string{"pattern", ""}, map[string][]string{"pattern": {"Invalid value  for configuration pattern: String must be non-empty"}},
			"Invalid value  for configuration pattern: String must be non-empty"},
		{p + "predicates.TopicNameMatches", nil, map[string][]string{"pattern": {missing("pattern"),
			`Invalid value null for configuration pattern: Invalid regex: Cannot invoke "String.isEmpty()" because "this.pattern" is null`}}, missing("pattern")},
	}
	for _, tt := range tests {
		var plugin *connect.Plugin
		for _, pl := range Plugins() {
			if pl.Class == tt.class {
				plugin = pl
			}
		}
		if plugin == nil {
			t.Fatalf("no plugin %s", tt.class)
		}
		got := map[string][]string{}
		for _, v := range plugin.ConfigDef().Validate(props(tt.props...)) {
			if len(v.Errors) > 0 {
				got[v.Name] = v.Errors
			}
		}
		if len(got) != len(tt.validate) {
			t.Errorf("%s %v: validate %q, want %q", tt.class, tt.props, got, tt.validate)
		}
		for k, want := range tt.validate {
			if !slices.Equal(got[k], want) {
				t.Errorf("%s %v: validate %s %q, want %q", tt.class, tt.props, k, got[k], want)
			}
		}
		var err error
		if plugin.NewTransformation != nil {
			err = plugin.NewTransformation().Configure(props(tt.props...))
		} else {
			err = plugin.NewPredicate().Configure(props(tt.props...))
		}
		switch {
		case tt.configure == "" && err != nil:
			t.Errorf("%s %v: configure: %v", tt.class, tt.props, err)
		case tt.configure != "" && (err == nil || err.Error() != tt.configure):
			t.Errorf("%s %v: configure %v, want %s", tt.class, tt.props, err, tt.configure)
		}
	}
}

// TestNullsAndTombstones applies each $Value transformation to a record
// whose value is null, without a schema and with an optional one, and
// expects what Kafka's classes do: most pass a tombstone through; HoistField
// hoists the null; ExtractField extracts null; those that need a map or a
// struct say so.
func TestNullsAndTombstones(t *testing.T) {
	const p = "org.apache.kafka.connect.transforms."
	optStruct := &connect.Schema{Type: connect.SchemaTypeStruct, Optional: true, Fields: []connect.Field{{Name: "a", Schema: connect.OptionalStringSchema}}}
	tests := []struct {
		class      string
		props      []string
		schemaless string // "" passes the record through unchanged; "hoisted", or the error
		withSchema string
	}{
		{p + "Cast$Value", []string{"spec", "a:int8"}, "", ""},
		{p + "ExtractField$Value", []string{"field", "a"}, "", "extracted"},
		{p + "Flatten$Value", nil, "", ""},
		{p + "HoistField$Value", []string{"field", "f"}, "hoisted", "hoisted"},
		{p + "InsertField$Value", []string{"static.field", "s", "static.value", "v"}, "", ""},
		{p + "ReplaceField$Value", []string{"exclude", "a"}, "", ""},
		{p + "SetSchemaMetadata$Value", []string{"schema.name", "n"}, "", "renamed"},
		// A struct is no timestamp.
		{p + "TimestampConverter$Value", []string{"target.type", "unix"}, "", "Schema Schema{STRUCT} does not correspond to a known timestamp type format"},
		{p + "MaskField$Value", []string{"fields", "a"},
			"Only Map objects supported in absence of schema for [mask fields], found: null", "Only Struct objects supported for [mask fields], found: null"},
		{p + "ValueToKey", []string{"fields", "a"},
			"Only Map objects supported in absence of schema for [copying fields from value to key], found: null",
			"Only Struct objects supported for [copying fields from value to key], found: null"},
		{p + "HeaderFrom$Value", []string{"fields", "a", "headers", "h", "operation", "copy"},
			"Only Map objects supported in absence of schema for [header copy], found: null", "Only Struct objects supported for [header copy], found: null"},
	}
	for _, tt := range tests {
		for _, schema := range []*connect.Schema{nil, optStruct} {
			want := tt.schemaless
			if schema != nil {
				want = tt.withSchema
			}
			tr := newT(t, tt.class, tt.props...)
			in := sinkRec(schema, nil)
			out, err := tr.Apply(in)
			switch want {
			case "":
				if err != nil || out == nil || out.Value != nil || out.ValueSchema != schema {
					t.Errorf("%s (schema %v): %+v %v, want the tombstone unchanged", tt.class, schema != nil, out, err)
				}
			case "hoisted":
				if err != nil || out.Value.(map[string]any)["f"] != nil {
					t.Errorf("%s (schema %v): %+v %v", tt.class, schema != nil, out, err)
				}
			case "extracted", "renamed":
				if err != nil || out == nil || out.Value != nil {
					t.Errorf("%s (schema %v): %+v %v, want a null value", tt.class, schema != nil, out, err)
				}
			default:
				if err == nil || err.Error() != want {
					t.Errorf("%s (schema %v): %v, want %s", tt.class, schema != nil, err, want)
				}
			}
		}
	}
}
