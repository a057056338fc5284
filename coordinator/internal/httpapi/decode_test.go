package httpapi

import (
	"encoding/json"
	"net/url"
	"reflect"
	"testing"

	"github.com/sluice-io/sluice/api"
)

// TestCreateDecoding checks what the Service receives from POST /connectors:
// scalar coercion, null handling, and offsets kept in their JSON form.
func TestCreateDecoding(t *testing.T) {
	tests := []struct {
		name string
		body string
		want api.CreateConnectorRequest
	}{
		{"config values coerced as Jackson does",
			`{"name":"a","config":{"s":"x","i":10,"d":1.50,"e":1e3,"neg":-0,"t":true,"f":false,"u":"\u00e9<&>"}}`,
			api.CreateConnectorRequest{Name: "a", Config: map[string]string{
				"s": "x", "i": "10", "d": "1.50", "e": "1e3", "neg": "-0", "t": "true", "f": "false", "u": "é<&>"}}},
		{"null name and state",
			`{"name":null,"config":{},"initial_state":null}`,
			api.CreateConnectorRequest{Config: map[string]string{}}},
		{"name trimmed as Java trims it, so that the grants see the created name",
			`{"name":" \u0001a\u00a0\t","config":{},"initial_state":"paused"}`,
			api.CreateConnectorRequest{Name: "a\u00a0", Config: map[string]string{}, InitialState: "paused"}},
		{"scalar state coerced, validated by the Service",
			`{"config":{},"initial_state":5}`,
			api.CreateConnectorRequest{Config: map[string]string{}, InitialState: "5"}},
		{"repeated member: last wins",
			`{"name":"a","name":"b","config":{"k":"1","k":"2"}}`,
			api.CreateConnectorRequest{Name: "b", Config: map[string]string{"k": "2"}}},
		{"initial offsets null",
			`{"config":{},"initial_offsets":null}`,
			api.CreateConnectorRequest{Config: map[string]string{}}},
		{"initial offsets empty means start fresh",
			`{"config":{},"initial_offsets":[]}`,
			api.CreateConnectorRequest{Config: map[string]string{}, InitialOffsets: []api.ConnectorOffset{}}},
		{"initial offsets free-form, numbers as json.Number",
			`{"config":{},"initial_offsets":[{"partition":{"filename":"f","n":null},"offset":{"position":30,"f":5.0,"big":123456789012345678901234567890,"b":true,"o":{"x":[1,"y"]}}},{"partition":{}}]}`,
			api.CreateConnectorRequest{Config: map[string]string{}, InitialOffsets: []api.ConnectorOffset{
				{
					Partition: map[string]any{"filename": "f", "n": nil},
					Offset: map[string]any{
						"position": json.Number("30"), "f": json.Number("5.0"),
						"big": json.Number("123456789012345678901234567890"), "b": true,
						"o": map[string]any{"x": []any{json.Number("1"), "y"}},
					},
				},
				{Partition: map[string]any{}},
			}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			srv := serve(t, f)
			got := do(t, srv, "POST", "/connectors", tt.body)
			if got.status != 201 {
				t.Fatalf("got %d %s", got.status, got.body)
			}
			args, _ := f.called("CreateConnector")
			req := args[0].(api.CreateConnectorRequest)
			if !reflect.DeepEqual(req, tt.want) {
				t.Errorf("request\n got %#v\nwant %#v", req, tt.want)
			}
			if (req.InitialOffsets == nil) != (tt.want.InitialOffsets == nil) {
				t.Errorf("InitialOffsets nil = %v, want %v", req.InitialOffsets == nil, tt.want.InitialOffsets == nil)
			}
		})
	}
}

// TestOffsetsKeepJSONNumbers: PATCH offsets hands the Service numbers as
// written, so 5.0 is not 5 and a 100-bit integer survives to be refused by
// the Service with the spec's message.
func TestOffsetsKeepJSONNumbers(t *testing.T) {
	f := newFake()
	srv := serve(t, f)
	body := `{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":5.0}},` +
		`{"partition":{"k":1267650600228229401496703205376},"offset":{"p":-1e-3}}]}`
	if got := do(t, srv, "PATCH", "/connectors/a/offsets", body); got.status != 200 {
		t.Fatalf("got %d %s", got.status, got.body)
	}
	args, _ := f.called("AlterOffsets")
	want := []api.ConnectorOffset{
		{Partition: map[string]any{"kafka_topic": "t", "kafka_partition": json.Number("0")},
			Offset: map[string]any{"kafka_offset": json.Number("5.0")}},
		{Partition: map[string]any{"k": json.Number("1267650600228229401496703205376")},
			Offset: map[string]any{"p": json.Number("-1e-3")}},
	}
	if !reflect.DeepEqual(args[1], want) {
		t.Errorf("offsets\n got %#v\nwant %#v", args[1], want)
	}
}

// TestQueryBool pins Jersey's reading of a boolean query parameter with a
// default: blank means the default, else Boolean.valueOf.
func TestQueryBool(t *testing.T) {
	tests := []struct {
		query string
		def   bool
		want  bool
	}{
		{"", false, false},
		{"", true, true},
		{"x=true", false, true},
		{"x=TRUE", false, true},
		{"x=tRuE", false, true},
		{"x=1", false, false},
		{"x=yes", false, false},
		{"x=%20true", false, false}, // Boolean.valueOf does not trim
		{"x=", true, true},          // blank: the default
		{"x=%20", true, true},
		{"x=false", true, false},
		{"x=False", true, false},
		{"x=no", true, false}, // any non-blank value other than "true"
		{"x=true&x=false", false, true},
		{"x=false&x=true", false, false},
		{"x", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			if got := queryBool(q, "x", tt.def); got != tt.want {
				t.Errorf("queryBool(%q, def %v) = %v, want %v", tt.query, tt.def, got, tt.want)
			}
		})
	}
}

// TestConnectorsOnly drives the parameter through the route.
func TestConnectorsOnly(t *testing.T) {
	for query, want := range map[string]bool{
		"":                      true,
		"?connectorsOnly=true":  true,
		"?connectorsOnly=":      true,
		"?connectorsOnly=false": false,
		"?connectorsOnly=FALSE": false,
		"?connectorsOnly=0":     false,
	} {
		t.Run(query, func(t *testing.T) {
			f := newFake()
			srv := serve(t, f)
			if got := do(t, srv, "GET", "/connector-plugins"+query, ""); got.status != 200 {
				t.Fatalf("got %d %s", got.status, got.body)
			}
			if args, _ := f.called("ListPlugins"); args[0] != want {
				t.Errorf("connectorsOnly = %v, want %v", args[0], want)
			}
		})
	}
}

// TestNilFromService: lists and maps a Service leaves nil are still JSON
// arrays and objects.
func TestNilFromService(t *testing.T) {
	f := newFake()
	srv := serve(t, f)
	for path, want := range map[string]string{
		"/connector-plugins/X/config": `[]`,
		"/connectors/a/offsets":       `{"offsets":[]}`,
		"/connectors/a":               infoJSON,
		"/connectors/a/status":        stateJSON,
	} {
		if got := do(t, srv, "GET", path, ""); got.body != want {
			t.Errorf("GET %s = %s, want %s", path, got.body, want)
		}
	}
}

// TestHead: GET routes answer HEAD, as JAX-RS does, without a body.
func TestHead(t *testing.T) {
	f := newFake()
	srv := serve(t, f)
	got := do(t, srv, "HEAD", "/connectors", "")
	if got.status != 200 || got.body != "" {
		t.Errorf("got %d %q", got.status, got.body)
	}
}
