package values

import "testing"

// BenchmarkConverterValue measures converting one row of common column
// types, as a streamed change does.
func BenchmarkConverterValue(b *testing.B) {
	cols := []struct {
		c    Column
		text string
	}{
		{Column{Name: "id", Type: base("int8")}, "123456789012"},
		{Column{Name: "name", Type: mod(base("varchar"), 68), Optional: true}, "a customer name"},
		{Column{Name: "amount", Type: mod(base("numeric"), numericMod(12, 2)), Optional: true}, "12345678.91"},
		{Column{Name: "ratio", Type: base("numeric"), Optional: true}, "3.14159265358979"},
		{Column{Name: "at", Type: base("timestamptz"), Optional: true}, "2024-02-29 11:45:30.123456+00"},
		{Column{Name: "day", Type: base("date"), Optional: true}, "2024-02-29"},
		{Column{Name: "doc", Type: base("jsonb"), Optional: true}, `{"a": 1, "b": [true, null]}`},
		{Column{Name: "tags", Type: arrayOf(base("text")), Optional: true}, `{a,"b c",d}`},
	}
	convs := make([]*Converter, len(cols))
	for i, c := range cols {
		cv, err := Compile(c.c, DefaultModes())
		if err != nil {
			b.Fatal(err)
		}
		convs[i] = cv
	}
	b.ReportAllocs()
	for b.Loop() {
		for i, cv := range convs {
			if _, err := cv.Value(&cols[i].text); err != nil {
				b.Fatal(err)
			}
		}
	}
}
