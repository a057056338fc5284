package converters

import (
	"math/big"
	"strconv"
	"testing"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/javatext"
)

// decimalSchema is Connect's Decimal of a scale, optional, with a default.
func decimalSchema(scale int32, def []byte) *connect.Schema {
	one := int32(1)
	return &connect.Schema{Type: connect.SchemaTypeBytes, Optional: true, Name: javatext.DecimalName, Version: &one,
		Parameters: map[string]string{javatext.DecimalScale: strconv.Itoa(int(scale))}, Default: def}
}

// TestDecimalFormatNumeric: with decimal.format=NUMERIC a Decimal — value
// and schema default — is a JSON number spelled as BigDecimal.toString
// spells it, byte for byte what Kafka 4.4's JsonConverter writes for the
// same values; either form reads back, whatever the setting.
func TestDecimalFormatNumeric(t *testing.T) {
	numeric, base64 := &JSON{}, &JSON{}
	if err := numeric.Configure(map[string]string{"decimal.format": "numeric"}, false); err != nil {
		t.Fatal(err)
	}
	if err := base64.Configure(map[string]string{}, false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		unscaled string
		scale    int32
		want     string
	}{
		{"102345", 4, "10.2345"}, {"1", -3, "1E+3"}, {"1", 8, "1E-8"}, {"-1250", 2, "-12.50"}, {"0", 0, "0"},
		{"12345678901234567890123456789012", 2, "123456789012345678901234567890.12"},
	} {
		n, _ := new(big.Int).SetString(tc.unscaled, 10)
		v := javatext.BigIntegerBytes(n)
		s := decimalSchema(tc.scale, v)
		got, err := numeric.FromConnectData("t", s, v)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"schema":{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"` +
			strconv.Itoa(int(tc.scale)) + `"},"default":` + tc.want + `},"payload":` + tc.want + `}`
		if string(got) != want {
			t.Errorf("%s: %s, want %s", tc.want, got, want)
		}
		for _, c := range []*JSON{numeric, base64} {
			_, back, err := c.ToConnectData("t", got)
			if err != nil {
				t.Fatalf("%s read back: %v", got, err)
			}
			if d, _ := javatext.Decimal(s, back); d != tc.want {
				t.Errorf("%s read back as %s", got, d)
			}
		}
		b64, err := base64.FromConnectData("t", s, v)
		if err != nil {
			t.Fatal(err)
		}
		if _, back, err := numeric.ToConnectData("t", b64); err != nil || string(back.([]byte)) != string(v) {
			t.Errorf("%s read by the NUMERIC converter: %v %v", b64, back, err)
		}
	}
	// A number read into a Decimal of its schema's scale: 12.5 is 1250 at
	// scale 2; a digit more than the scale holds is refused, not rounded.
	in := `{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},"payload":12.5}`
	if _, v, err := base64.ToConnectData("t", []byte(in)); err != nil || new(big.Int).SetBytes(v.([]byte)).Int64() != 1250 {
		t.Errorf("12.5 at scale 2: %v %v", v, err)
	}
	in = `{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},"payload":12.505}`
	if _, _, err := base64.ToConnectData("t", []byte(in)); err == nil {
		t.Error("12.505 at scale 2 read without an error")
	}
}
