package converters

import "testing"

func TestSplitEnvelope(t *testing.T) {
	tests := []struct {
		data            string
		schema, payload string // "" with ok false
	}{
		{`{"schema":null,"payload":1}`, `null`, `1`},
		{`{"payload":[1,{"a":"}"}],"schema":{"type":"array"}}`, `{"type":"array"}`, `[1,{"a":"}"}]`},
		{" {\n\"schema\" :\t{} , \"payload\":\"q\\\"}\" }junk", `{}`, `"q\"}"`},
		{`{"schema":true,"payload":-1.5e3}`, `true`, `-1.5e3`},
		// Left to the full decoder.
		{`{"schema":null,"payload":1,"schema":null}`, "", ""},
		{`{"schema":null}`, "", ""},
		{`{"schema":null,"payload":1,"other":2}`, "", ""},
		{`{"sche\u006da":null,"payload":1}`, "", ""},
		{`{"schema":null "payload":1}`, "", ""},
		{`{"schema":null,"payload":1`, "", ""},
		{`{"schema":null,"payload":"1}`, "", ""},
		{`{"schema":null,"payload":[1}`, "", ""},
		{`{"schema":,"payload":1}`, "", ""},
		{`{"schema":null,}`, "", ""},
		{`{}`, "", ""},
		{`[]`, "", ""},
		{``, "", ""},
	}
	for _, tt := range tests {
		schema, payload, ok := splitEnvelope([]byte(tt.data))
		if ok != (tt.schema != "") || string(schema) != tt.schema || string(payload) != tt.payload {
			t.Errorf("splitEnvelope(%q) = %q, %q, %v; want %q, %q", tt.data, schema, payload, ok, tt.schema, tt.payload)
		}
	}
}

func TestDecodeExactly(t *testing.T) {
	for raw, ok := range map[string]bool{`1`: true, `{"a":[1]}`: true, `"x"`: true, `1 2`: false, `{"a":1}}`: false, `[1,}`: false, ``: false} {
		if _, got := decodeExactly([]byte(raw)); got != ok {
			t.Errorf("decodeExactly(%q) ok = %v, want %v", raw, got, ok)
		}
	}
}

// Every envelope a byte away from a good one — one byte dropped, or one of
// JSON's structural characters put in — reads with the read cache exactly
// as without: the same schema, value or error.
func TestJSONReadCacheAgreesOnNearMisses(t *testing.T) {
	const good = `{"schema":{"type":"struct","fields":[{"type":"string","optional":true,"field":"s"},` +
		`{"type":"array","items":{"type":"int64","optional":false},"optional":false,"field":"l"}],"optional":false,"name":"n"},` +
		` "payload":{"s":"a\"}]b","l":[1,-2]}}`
	c, ref := cachedAndNot(t, nil)
	var variants []string
	for i := range len(good) + 1 {
		if i < len(good) {
			variants = append(variants, good[:i]+good[i+1:])
		}
		for _, ins := range []string{`"`, `\`, `{`, `}`, `[`, `]`, `,`, `:`, ` `, `1`, `null`} {
			variants = append(variants, good[:i]+ins+good[i:])
		}
	}
	for _, data := range variants {
		sameRead(t, c, ref, data)
	}
}

func FuzzJSONReadCache(f *testing.F) {
	f.Add([]byte(`{"schema":{"type":"int32","optional":false},"payload":7}`))
	f.Add([]byte(`{"payload":"x","schema":{"type":"string","optional":true}} `))
	f.Add([]byte(`{"schema":null,"payload":{"a":[1,"}"]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, ref := cachedAndNot(t, nil)
		sameRead(t, c, ref, string(data))
	})
}
