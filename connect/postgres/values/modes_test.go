package values

import (
	"strings"
	"testing"
)

func TestParseModesDefaults(t *testing.T) {
	m, err := ParseModes(map[string]string{"topic.prefix": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if m != DefaultModes() {
		t.Errorf("got %+v, want Debezium's defaults %+v", m, DefaultModes())
	}
	want := Modes{Decimal: "precise", Time: "adaptive", Binary: "bytes", Interval: "numeric", HStore: "json", MoneyFractionDigits: 2}
	if m != want {
		t.Errorf("defaults %+v, want %+v", m, want)
	}
}

func TestParseModesValues(t *testing.T) {
	m, err := ParseModes(map[string]string{
		"decimal.handling.mode":  " STRING ",
		"time.precision.mode":    "Connect",
		"binary.handling.mode":   "base64-url-safe",
		"interval.handling.mode": "string",
		"hstore.handling.mode":   "map",
		"money.fraction.digits":  "4",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Modes{Decimal: DecimalString, Time: TimeConnect, Binary: BinaryBase64URLSafe, Interval: IntervalString, HStore: HStoreMap, MoneyFractionDigits: 4}
	if m != want {
		t.Errorf("got %+v, want %+v", m, want)
	}
}

func TestParseModesRejects(t *testing.T) {
	tests := []struct {
		key, value string
		wantParts  []string
	}{
		{"time.precision.mode", "isostring", []string{`"isostring"`, "time.precision.mode", "adaptive, adaptive_time_microseconds, connect, microseconds, nanoseconds"}},
		{"decimal.handling.mode", "exact", []string{"decimal.handling.mode", "precise, double, string"}},
		{"binary.handling.mode", "base32", []string{"binary.handling.mode", "bytes, base64, base64-url-safe, hex"}},
		{"interval.handling.mode", "iso", []string{"interval.handling.mode", "numeric, string"}},
		{"hstore.handling.mode", "", []string{"hstore.handling.mode", "json, map"}},
		{"money.fraction.digits", "-1", []string{"money.fraction.digits", "0 to 32767"}},
		{"money.fraction.digits", "two", []string{"money.fraction.digits"}},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			_, err := ParseModes(map[string]string{tt.key: tt.value})
			if err == nil {
				t.Fatal("accepted")
			}
			for _, p := range tt.wantParts {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("error %q does not name %q", err, p)
				}
			}
		})
	}
}

func TestCompileRejectsHandMadeModes(t *testing.T) {
	m := DefaultModes()
	m.Time = "isostring"
	_, err := Compile(Column{Name: "c", Type: base("date")}, m)
	if err == nil || !strings.Contains(err.Error(), "time.precision.mode") {
		t.Fatalf("got %v, want an error naming time.precision.mode", err)
	}
}
