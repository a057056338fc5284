package values

import (
	"testing"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/converters"
)

// Type builders for the tests: a base type without modifier, with one, an
// array of an element, a domain over a base.
func base(name string) Type { return Type{Name: name, Modifier: -1, Kind: KindBase} }

func mod(t Type, m int32) Type { t.Modifier = m; return t }

func arrayOf(el Type) Type {
	return Type{Name: "_" + el.Name, Modifier: el.Modifier, Kind: KindArray, Elem: &el}
}

func domain(name string, over Type, m int32) Type {
	return Type{Name: name, Modifier: m, Kind: KindDomain, Base: &over}
}

func enum(name string, labels ...string) Type {
	return Type{Name: name, Modifier: -1, Kind: KindEnum, EnumLabels: labels}
}

// numericMod is the atttypmod of numeric(p,s).
func numericMod(p, s int32) int32 { return (p<<16 | s) + 4 }

func str(s string) *string { return &s }

func withModes(f func(*Modes)) Modes {
	m := DefaultModes()
	f(&m)
	return m
}

// jsonOf runs Kafka's JsonConverter (Sluice's) over a column's schema and
// converted value, with schemas in the envelope or without.
func jsonOf(t *testing.T, c Column, m Modes, text *string, withSchema bool) string {
	t.Helper()
	cv, err := Compile(c, m)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	v, err := cv.Value(text)
	if err != nil {
		t.Fatalf("Value(%v): %v", deref(text), err)
	}
	conv := &converters.JSON{}
	enable := "false"
	if withSchema {
		enable = "true"
	}
	if err := conv.Configure(map[string]string{"schemas.enable": enable}, false); err != nil {
		t.Fatal(err)
	}
	b, err := conv.FromConnectData("topic", cv.Schema(), v)
	if err != nil {
		t.Fatalf("JsonConverter: %v", err)
	}
	return string(b)
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func jsonOfValue(t *testing.T, s *connect.Schema, v any) string {
	t.Helper()
	conv := &converters.JSON{}
	if err := conv.Configure(map[string]string{"schemas.enable": "false"}, false); err != nil {
		t.Fatal(err)
	}
	b, err := conv.FromConnectData("topic", s, v)
	if err != nil {
		t.Fatalf("JsonConverter: %v", err)
	}
	return string(b)
}
