package javatext

import (
	"encoding/json"
	"math/big"
	"testing"
	"time"

	"github.com/sluice-io/sluice/connect"
)

// The expected texts are what Java 17 prints, in UTC.

func TestDate(t *testing.T) {
	for ms, want := range map[int64]string{
		0:                "Thu Jan 01 00:00:00 UTC 1970",
		-1:               "Wed Dec 31 23:59:59 UTC 1969",
		946080000000:     "Sat Dec 25 00:00:00 UTC 1999",
		951782400000:     "Tue Feb 29 00:00:00 UTC 2000",
		4107542400000:    "Mon Mar 01 00:00:00 UTC 2100",
		-2208988800000:   "Mon Jan 01 00:00:00 UTC 1900",
		-12219292800000:  "Fri Oct 15 00:00:00 UTC 1582", // the Gregorian calendar's first day
		-12219292800001:  "Thu Oct 04 23:59:59 UTC 1582", // the Julian calendar's last
		-30610224000000:  "Wed Dec 27 00:00:00 UTC 999",
		-77914137600000:  "Tue Jan 06 00:00:00 UTC 500",
		-62135596800000:  "Mon Jan 03 00:00:00 UTC 1",
		-62167219200000:  "Sat Jan 03 00:00:00 UTC 1", // 1 BCE: the year of its era
		-62198755200000:  "Fri Jan 03 00:00:00 UTC 2", // 2 BCE
		-100000000000000: "Thu Feb 26 14:13:20 UTC 1200",
		253402300799999:  "Fri Dec 31 23:59:59 UTC 9999",
		253402300800000:  "Sat Jan 01 00:00:00 UTC 10000",
		1000000000000000: "Fri Sep 27 01:46:40 UTC 33658",
	} {
		if got := Date(ms); got != want {
			t.Errorf("Date(%d) = %q, want %q", ms, got, want)
		}
	}
}

func TestBigDecimal(t *testing.T) {
	for _, tt := range []struct {
		unscaled string
		scale    int32
		want     string
	}{
		{"12345", 10, "0.0000012345"},
		{"12345", 7, "0.0012345"},
		{"-12345", -3, "-1.2345E+7"},
		{"0", 3, "0.000"},
		{"0", -3, "0E+3"},
		{"0", 8, "0E-8"},
		{"5", 0, "5"},
		{"1", 6, "0.000001"},
		{"1", 7, "1E-7"},
		{"12", 7, "0.0000012"},
		{"-1", 1, "-0.1"},
		{"123456789012345678901234567890", 20, "1234567890.12345678901234567890"},
	} {
		n, _ := new(big.Int).SetString(tt.unscaled, 10)
		if got := BigDecimal(n, tt.scale); got != tt.want {
			t.Errorf("BigDecimal(%s, %d) = %q, want %q", tt.unscaled, tt.scale, got, tt.want)
		}
	}
}

// TestString covers values other runtimes than JsonConverter hand a sink:
// Go's own integer and slice types, time.Time, JSON numbers left as text,
// typed map keys without a schema, and the logical types' own forms.
func TestString(t *testing.T) {
	row := &connect.Schema{Type: connect.SchemaTypeStruct, Fields: []connect.Field{
		{Name: "at", Schema: &connect.Schema{Type: connect.SchemaTypeInt64, Name: TimestampName, Optional: true}},
		{Name: "price", Schema: &connect.Schema{Type: connect.SchemaTypeBytes, Name: DecimalName, Parameters: map[string]string{DecimalScale: "2"}}},
		{Name: "f", Schema: &connect.Schema{Type: connect.SchemaTypeFloat32}},
	}}
	for _, tt := range []struct {
		name   string
		schema *connect.Schema
		value  any
		want   string
	}{
		{"null", nil, nil, "null"},
		{"go int", nil, 7, "7"},
		{"string slice", nil, []string{"a", "b"}, "[a, b]"},
		{"time", nil, time.UnixMilli(0), "Thu Jan 01 00:00:00 UTC 1970"},
		{"json integer", nil, json.Number("12"), "12"},
		{"json fraction", nil, json.Number("1e7"), "1.0E7"},
		{"json number as float", &connect.Schema{Type: connect.SchemaTypeFloat32}, json.Number("0.1"), "0.1"},
		{"float64 held for a float schema", &connect.Schema{Type: connect.SchemaTypeFloat32}, float64(float32(0.1)), "0.1"},
		// Integer keys: the hash code is the value, so 16 shares 0's
		// bucket; bucket-mates are in the order of their text.
		{"a null key is in bucket 0", nil, map[any]any{int32(1): "b", nil: "a"}, "{null=a, 1=b}"},
		{"int32 keys", nil, map[any]any{int32(16): "b", int32(1): "c", int32(0): "a"}, "{0=a, 16=b, 1=c}"},
		{"timestamp as time.Time", row, map[string]any{"at": time.UnixMilli(1700000000123), "price": []byte{0x07, 0xcf}, "f": float32(1.5)},
			"Struct{at=Tue Nov 14 22:13:20 UTC 2023,price=19.99,f=1.5}"},
		{"decimal without a usable scale is its bytes", &connect.Schema{Type: connect.SchemaTypeBytes, Name: DecimalName}, []byte{1}, "AQ=="},
	} {
		if got := String(tt.schema, tt.value); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
