package connect

import (
	"slices"
	"testing"
)

func testDef() *ConfigDef {
	return NewConfigDef().
		Define(ConfigKey{Name: "name", Type: TypeString, Required: true, Validator: NonEmptyStringWithoutControlChars{},
			Importance: ImportanceHigh, Group: "Common", OrderInGroup: 1}).
		Define(ConfigKey{Name: "tasks.max", Type: TypeInt, Default: int32(1), Validator: AtLeast(1),
			Importance: ImportanceHigh, Group: "Common", OrderInGroup: 2}).
		Define(ConfigKey{Name: "file", Type: TypeString, Required: true, Importance: ImportanceHigh}).
		Define(ConfigKey{Name: "flag", Type: TypeBoolean, Default: false, Importance: ImportanceLow}).
		Define(ConfigKey{Name: "list", Type: TypeList, Default: "", Importance: ImportanceLow}).
		Define(ConfigKey{Name: "short", Type: TypeShort, Default: int16(3), Importance: ImportanceLow}).
		Define(ConfigKey{Name: "mode", Type: TypeString, Default: "none", Validator: In("none", "all"), Importance: ImportanceLow}).
		Define(ConfigKey{Name: "ratio", Type: TypeDouble, Default: 0.5, Validator: Between(0.0, 1.0), Importance: ImportanceLow}).
		Define(ConfigKey{Name: "secret", Type: TypePassword, Importance: ImportanceLow})
}

func TestValidateMessages(t *testing.T) {
	tests := []struct {
		name  string
		props map[string]string
		key   string
		want  []string
		value *string
	}{
		{"missing required", map[string]string{}, "file", []string{`Missing required configuration "file" which has no default value.`}, nil},
		{"not a number", map[string]string{"tasks.max": "abc"}, "tasks.max", []string{
			"Invalid value abc for configuration tasks.max: Not a number of type INT",
			"Invalid value null for configuration tasks.max: Value must be non-null"}, nil},
		{"empty number", map[string]string{"tasks.max": ""}, "tasks.max", []string{
			"Invalid value  for configuration tasks.max: Not a number of type INT",
			"Invalid value null for configuration tasks.max: Value must be non-null"}, nil},
		{"below range", map[string]string{"tasks.max": "0"}, "tasks.max", []string{"Invalid value 0 for configuration tasks.max: Value must be at least 1"}, ptr("0")},
		{"trimmed int", map[string]string{"tasks.max": " 4 "}, "tasks.max", nil, ptr("4")},
		{"int overflow", map[string]string{"tasks.max": "2147483648"}, "tasks.max", []string{
			"Invalid value 2147483648 for configuration tasks.max: Not a number of type INT",
			"Invalid value null for configuration tasks.max: Value must be non-null"}, nil},
		{"empty name", map[string]string{"name": ""}, "name", []string{"Invalid value  for configuration name: String may not be empty"}, ptr("")},
		{"blank name is trimmed", map[string]string{"name": "  "}, "name", []string{"Invalid value  for configuration name: String may not be empty"}, ptr("")},
		{"control chars", map[string]string{"name": "a\tb\x01c"}, "name", []string{"Invalid value a\tb\x01c for configuration name: String may not contain control sequences but had the following ASCII chars: 9, 1"}, ptr("a\tb\x01c")},
		{"bad boolean", map[string]string{"flag": "yes"}, "flag", []string{"Invalid value yes for configuration flag: Expected value to be either true or false"}, nil},
		{"boolean any case", map[string]string{"flag": "TRUE"}, "flag", nil, ptr("true")},
		{"list", map[string]string{"list": " a , b,,c "}, "list", nil, ptr("a,b,,c")},
		{"short range", map[string]string{"short": "40000"}, "short", []string{"Invalid value 40000 for configuration short: Not a number of type SHORT"}, nil},
		{"valid string", map[string]string{"mode": "some"}, "mode", []string{"Invalid value some for configuration mode: String must be one of: none, all"}, ptr("some")},
		{"double above", map[string]string{"ratio": "2"}, "ratio", []string{"Invalid value 2.0 for configuration ratio: Value must be no more than 1.0"}, ptr("2.0")},
		{"password hidden", map[string]string{"secret": "s3cret"}, "secret", nil, ptr("[hidden]")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := FindValue(testDef().Validate(tt.props), tt.key)
			if v == nil {
				t.Fatalf("no value for %s", tt.key)
			}
			if !slices.Equal(v.Errors, tt.want) && !(len(v.Errors) == 0 && len(tt.want) == 0) {
				t.Errorf("errors = %q, want %q", v.Errors, tt.want)
			}
			if (v.Value == nil) != (tt.value == nil) || (v.Value != nil && *v.Value != *tt.value) {
				t.Errorf("value = %v, want %v", str(v.Value), str(tt.value))
			}
		})
	}
}

func ptr(s string) *string { return &s }

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestValidateOrderAndGroups(t *testing.T) {
	vals := testDef().Validate(map[string]string{"name": "x", "file": "f", "unknown": "ignored"})
	var names []string
	for _, v := range vals {
		names = append(names, v.Name)
		if len(v.Errors) > 0 {
			t.Errorf("%s: unexpected errors %q", v.Name, v.Errors)
		}
	}
	if want := testDef().Names(); !slices.Equal(names, want) {
		t.Errorf("order = %v, want %v", names, want)
	}
	if g := testDef().Groups(); !slices.Equal(g, []string{"Common"}) {
		t.Errorf("groups = %v", g)
	}
	k, _ := testDef().Key("file")
	if k.OrderInGroup != -1 || k.Width != WidthNone || k.DisplayName != "file" {
		t.Errorf("short define defaults = %+v", k)
	}
}

type fixedRecommender struct{}

func (fixedRecommender) ValidValues(string, map[string]any) []any { return []any{"a", "b"} }
func (fixedRecommender) Visible(_ string, parsed map[string]any) bool {
	return parsed["on"] == true
}

func TestRecommenderAndDependents(t *testing.T) {
	d := NewConfigDef().
		Define(ConfigKey{Name: "on", Type: TypeBoolean, Default: false, Dependents: []string{"child", "ghost"}}).
		Define(ConfigKey{Name: "child", Type: TypeString, Recommender: fixedRecommender{}})
	vals := d.Validate(map[string]string{"on": "true"})
	c := FindValue(vals, "child")
	if !c.Visible || !slices.Equal(c.RecommendedValues, []string{"a", "b"}) {
		t.Errorf("child = %+v", *c)
	}
	g := FindValue(vals, "ghost")
	if g == nil || g.Visible || !slices.Equal(g.Errors, []string{"ghost is referred in the dependents, but not defined."}) {
		t.Errorf("ghost = %+v", g)
	}
	if c := FindValue(d.Validate(nil), "child"); c.Visible {
		t.Errorf("child visible with on=false")
	}
}

func TestParseValues(t *testing.T) {
	v, err := testDef().Parse(map[string]string{"name": "n", "file": " f ", "tasks.max": "3", "list": "x,y", "flag": "true"})
	if err != nil {
		t.Fatal(err)
	}
	if v.String("file") != "f" || v.Int("tasks.max") != 3 || v.Long("tasks.max") != 3 || !v.Bool("flag") ||
		!slices.Equal(v.List("list"), []string{"x", "y"}) || v.Int("short") != 3 || v.Double("ratio") != 0.5 || !v.IsNull("secret") {
		t.Errorf("parsed = %v", v)
	}
	if _, err := testDef().Parse(map[string]string{"name": "n"}); err == nil || err.Error() != `Missing required configuration "file" which has no default value.` {
		t.Errorf("err = %v", err)
	}
	if _, err := testDef().Parse(map[string]string{"name": "n", "file": "f", "tasks.max": "0"}); err == nil ||
		err.Error() != "Invalid value 0 for configuration tasks.max: Value must be at least 1" {
		t.Errorf("err = %v", err)
	}
}

func TestParseHelpers(t *testing.T) {
	if n, err := ParseInt("k", "+7"); err != nil || n != 7 {
		t.Errorf("ParseInt = %d, %v", n, err)
	}
	if _, err := ParseLong("k", "1.5"); err == nil || err.Error() != "Invalid value 1.5 for configuration k: Not a number of type LONG" {
		t.Errorf("ParseLong err = %v", err)
	}
	if b, err := ParseBool("k", " False "); err != nil || b {
		t.Errorf("ParseBool = %v, %v", b, err)
	}
	if l := ParseList(""); l == nil || len(l) != 0 {
		t.Errorf("ParseList empty = %#v", l)
	}
	if _, err := ParseType("k", "inf", TypeDouble, nil); err == nil {
		t.Errorf("Go-only float spelling accepted")
	}
	if f, err := ParseType("k", "1e3d", TypeDouble, nil); err != nil || f != 1000.0 {
		t.Errorf("java double suffix = %v, %v", f, err)
	}
	if _, err := ParseType("k", "Nope", TypeClass, func(string) (string, bool) { return "", false }); err == nil ||
		err.Error() != "Invalid value Nope for configuration k: Class Nope could not be found." {
		t.Errorf("class err = %v", err)
	}
	if c, _ := ParseType("k", "Alias", TypeClass, func(string) (string, bool) { return "org.x.Full", true }); c != Class("org.x.Full") {
		t.Errorf("class = %v", c)
	}
}

func TestJavaDouble(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1.0", 0.5: "0.5", 1e7: "1.0E7", 1.5e-4: "1.5E-4", 0.001: "0.001", 1234567.25: "1234567.25", -2: "-2.0", 0: "0.0",
	} {
		if got := JavaDouble(f); got != want {
			t.Errorf("JavaDouble(%v) = %s, want %s", f, got, want)
		}
	}
}

func TestJavaHashSetOrder(t *testing.T) {
	// "Aa" and "BB" share a hash code, so they keep insertion order.
	for _, tt := range []struct{ in, want []string }{
		{[]string{"c", "a", "b"}, []string{"a", "b", "c"}},
		{[]string{"BB", "Aa"}, []string{"BB", "Aa"}},
		{[]string{"Aa", "BB"}, []string{"Aa", "BB"}},
		{[]string{"q", "a", "q"}, []string{"q", "a"}}, // 113 and 97 share bucket 1
		{[]string{"REQUIRED", "REQUESTED"}, JavaHashSetOrder([]string{"REQUESTED", "REQUIRED"})},
	} {
		if got := JavaHashSetOrder(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("JavaHashSetOrder(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestValidators(t *testing.T) {
	tests := []struct {
		v     Validator
		value any
		want  string
	}{
		{NonEmptyString{}, "", "Invalid value  for configuration k: String must be non-empty"},
		{NonEmptyString{}, nil, ""},
		{NonNull{}, nil, "Invalid value null for configuration k: entry must be non null"},
		{UniqueList{}, []string{"a", "a"}, "Invalid value [a, a] for configuration k: Duplicate alias provided."},
		{Composite{NonNull{}, UniqueList{}}, []string{"a"}, ""},
		{AtLeast(int64(0)), int64(-1), "Invalid value -1 for configuration k: Value must be at least 0"},
		{InCaseInsensitive("none", "all"), "ALL", ""},
		{InCaseInsensitive("a", "b"), "c", "Invalid value c for configuration k: String must be one of (case insensitive): A, B"},
	}
	for i, tt := range tests {
		err := tt.v.EnsureValid("k", tt.value)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%d: got %q, want %q", i, got, tt.want)
		}
	}
}

func TestPluginNames(t *testing.T) {
	p := &Plugin{Class: "org.apache.kafka.connect.file.FileStreamSourceConnector", Kind: KindSource, Version: "1"}
	if p.SimpleName() != "FileStreamSourceConnector" || p.PrunedName() != "FileStreamSource" {
		t.Errorf("names = %s, %s", p.SimpleName(), p.PrunedName())
	}
	c := &Plugin{Class: "org.apache.kafka.connect.json.JsonConverter", Kind: KindConverter}
	if c.PrunedName() != "Json" {
		t.Errorf("pruned = %s", c.PrunedName())
	}
	want := "PluginDesc{klass=class org.apache.kafka.connect.file.FileStreamSourceConnector, name='org.apache.kafka.connect.file.FileStreamSourceConnector', version='1', encodedVersion=1, type=source, typeName='source', location='classpath'}"
	if p.String() != want {
		t.Errorf("String = %s", p.String())
	}
}
