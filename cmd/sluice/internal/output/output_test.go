package output

import (
	"bytes"
	"testing"
)

func TestWrite(t *testing.T) {
	v := map[string]any{"name": "a", "config": map[string]string{"k": "<v>"}}
	table := func() *Rows { return NewRows("NAME", "STATE").Add("a", "RUNNING").Add("long-name", "") }
	for f, want := range map[Format]string{
		JSON:  "{\n  \"config\": {\n    \"k\": \"<v>\"\n  },\n  \"name\": \"a\"\n}\n",
		YAML:  "config:\n  k: <v>\nname: a\n",
		Table: "NAME       STATE\na          RUNNING\nlong-name  -\n",
	} {
		var out bytes.Buffer
		if err := Write(&out, f, v, table); err != nil || out.String() != want {
			t.Errorf("%s: %q, %v; want %q", f, out.String(), err, want)
		}
	}
	if _, err := Parse("xml"); err == nil {
		t.Error("-o xml accepted")
	}
	if f, err := Parse("YAML"); err != nil || f != YAML {
		t.Errorf("Parse(YAML) = %q, %v", f, err)
	}
}
