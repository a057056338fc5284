package transforms

import (
	"slices"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/converters"
)

// Class names of the header transformations and of Filter.
const (
	FilterClass       = "org.apache.kafka.connect.transforms.Filter"
	InsertHeaderClass = "org.apache.kafka.connect.transforms.InsertHeader"
	DropHeadersClass  = "org.apache.kafka.connect.transforms.DropHeaders"
)

// filter is Kafka's Filter: it drops every record it is applied to (with a
// predicate, those the predicate picks).
type filter struct{}

func (filter) Configure(map[string]string) error { return nil }

func (filter) Apply(*connect.TransformRecord) (*connect.TransformRecord, error) { return nil, nil }

func (filter) Close() error { return nil }

func insertHeaderDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "header", Type: connect.TypeString, Required: true, Validator: connect.NonNull{},
			Importance: connect.ImportanceHigh, Documentation: "The name of the header."}).
		Define(connect.ConfigKey{Name: "value.literal", Type: connect.TypeString, Required: true, Validator: connect.NonNull{},
			Importance: connect.ImportanceHigh, Documentation: "The literal value that is to be set as the header value on all records."})
}

// insertHeader is Kafka's InsertHeader: every record gets the header, its
// value what Values.parseString makes of the literal (written by the
// connector's header converter).
type insertHeader struct {
	header string
	value  connect.Header
}

func (t *insertHeader) Configure(props map[string]string) error {
	v, err := insertHeaderDef().Parse(props)
	if err != nil {
		return err
	}
	t.header = v.String("header")
	schema, data := converters.ParseString(v.String("value.literal"))
	t.value = typedHeader(t.header, schema, data)
	return nil
}

// typedHeader is a header a transformation makes: Connect data, with
// SimpleHeaderConverter's bytes until the header converter writes its own.
func typedHeader(key string, schema *connect.Schema, data any) connect.Header {
	h := connect.Header{Key: key, Typed: true, Schema: schema, Data: data}
	h.Value, _ = converters.SimpleHeader{}.FromConnectData("", schema, data)
	return h
}

func (t *insertHeader) Apply(r *connect.TransformRecord) (*connect.TransformRecord, error) {
	out := *r
	out.Headers = append(slices.Clone(r.Headers), t.value)
	return &out, nil
}

func (*insertHeader) Close() error { return nil }

func dropHeadersDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "headers", Type: connect.TypeList, Required: true, Validator: connect.DistinctList{},
			Importance: connect.ImportanceHigh, Documentation: "The name of the headers to be removed."})
}

// dropHeaders is Kafka's DropHeaders: it removes every header of the named
// keys.
type dropHeaders struct{ names map[string]bool }

func (t *dropHeaders) Configure(props map[string]string) error {
	v, err := dropHeadersDef().Parse(props)
	if err != nil {
		return err
	}
	t.names = map[string]bool{}
	for _, n := range v.List("headers") {
		t.names[n] = true
	}
	return nil
}

func (t *dropHeaders) Apply(r *connect.TransformRecord) (*connect.TransformRecord, error) {
	out := *r
	out.Headers = slices.DeleteFunc(slices.Clone(r.Headers), func(h connect.Header) bool { return t.names[h.Key] })
	return &out, nil
}

func (*dropHeaders) Close() error { return nil }
