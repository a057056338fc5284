package values

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The connector config keys that choose how column values are represented,
// spelled as Debezium spells them.
const (
	DecimalHandlingModeConfig  = "decimal.handling.mode"
	TimePrecisionModeConfig    = "time.precision.mode"
	BinaryHandlingModeConfig   = "binary.handling.mode"
	IntervalHandlingModeConfig = "interval.handling.mode"
	HStoreHandlingModeConfig   = "hstore.handling.mode"
	MoneyFractionDigitsConfig  = "money.fraction.digits"
)

// decimal.handling.mode values.
const (
	DecimalPrecise = "precise"
	DecimalDouble  = "double"
	DecimalString  = "string"
)

// time.precision.mode values. Debezium also has isostring, which Sluice does
// not support.
const (
	TimeAdaptive                 = "adaptive"
	TimeAdaptiveTimeMicroseconds = "adaptive_time_microseconds"
	TimeConnect                  = "connect"
	TimeMicroseconds             = "microseconds"
	TimeNanoseconds              = "nanoseconds"
)

// binary.handling.mode values.
const (
	BinaryBytes         = "bytes"
	BinaryBase64        = "base64"
	BinaryBase64URLSafe = "base64-url-safe"
	BinaryHex           = "hex"
)

// interval.handling.mode values.
const (
	IntervalNumeric = "numeric"
	IntervalString  = "string"
)

// hstore.handling.mode values.
const (
	HStoreJSON = "json"
	HStoreMap  = "map"
)

// Modes are the connector's handling modes (Debezium's config keys and
// defaults): decimal.handling.mode precise|double|string (default precise),
// time.precision.mode adaptive|adaptive_time_microseconds|connect|
// microseconds|nanoseconds (default adaptive), binary.handling.mode
// bytes|base64|base64-url-safe|hex (default bytes), interval.handling.mode
// numeric|string (default numeric), hstore.handling.mode json|map (default
// json), money.fraction.digits (default 2). Values are the lower-case
// spellings of the constants above.
type Modes struct {
	Decimal, Time, Binary, Interval, HStore string
	MoneyFractionDigits                     int
}

// DefaultModes returns Debezium's defaults.
func DefaultModes() Modes {
	return Modes{
		Decimal:             DecimalPrecise,
		Time:                TimeAdaptive,
		Binary:              BinaryBytes,
		Interval:            IntervalNumeric,
		HStore:              HStoreJSON,
		MoneyFractionDigits: 2,
	}
}

// modeChoices lists, per key, the values Sluice supports, in the order the
// error message names them.
var modeChoices = []struct {
	key     string
	allowed []string
	field   func(*Modes) *string
}{
	{DecimalHandlingModeConfig, []string{DecimalPrecise, DecimalDouble, DecimalString}, func(m *Modes) *string { return &m.Decimal }},
	{TimePrecisionModeConfig, []string{TimeAdaptive, TimeAdaptiveTimeMicroseconds, TimeConnect, TimeMicroseconds, TimeNanoseconds},
		func(m *Modes) *string { return &m.Time }},
	{BinaryHandlingModeConfig, []string{BinaryBytes, BinaryBase64, BinaryBase64URLSafe, BinaryHex}, func(m *Modes) *string { return &m.Binary }},
	{IntervalHandlingModeConfig, []string{IntervalNumeric, IntervalString}, func(m *Modes) *string { return &m.Interval }},
	{HStoreHandlingModeConfig, []string{HStoreJSON, HStoreMap}, func(m *Modes) *string { return &m.HStore }},
}

// ParseModes reads the handling-mode keys from a connector config. Like
// Debezium it ignores case and surrounding blanks; a value Sluice does not
// support is an error naming the key and the allowed values, never ignored.
// A key that is absent keeps Debezium's default.
func ParseModes(props map[string]string) (Modes, error) {
	m := DefaultModes()
	for _, c := range modeChoices {
		raw, ok := props[c.key]
		if !ok {
			continue
		}
		v := strings.ToLower(strings.TrimSpace(raw))
		if !slices.Contains(c.allowed, v) {
			return Modes{}, fmt.Errorf("invalid value %q for %s: Sluice supports %s", raw, c.key, strings.Join(c.allowed, ", "))
		}
		*c.field(&m) = v
	}
	if raw, ok := props[MoneyFractionDigitsConfig]; ok {
		// Debezium types the key as a SHORT; a negative scale is no money
		// amount PostgreSQL can hold.
		n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 16)
		if err != nil || n < 0 {
			return Modes{}, fmt.Errorf("invalid value %q for %s: must be a whole number from 0 to 32767", raw, MoneyFractionDigitsConfig)
		}
		m.MoneyFractionDigits = int(n)
	}
	return m, nil
}

// valid reports a Modes value that ParseModes could not have produced (a
// caller that built it by hand), so that Schema and Value fail loudly rather
// than guess.
func (m Modes) valid() error {
	for _, c := range modeChoices {
		if got := *c.field(&m); !slices.Contains(c.allowed, got) {
			return fmt.Errorf("invalid value %q for %s: Sluice supports %s", got, c.key, strings.Join(c.allowed, ", "))
		}
	}
	if m.MoneyFractionDigits < 0 {
		return fmt.Errorf("invalid value %d for %s", m.MoneyFractionDigits, MoneyFractionDigitsConfig)
	}
	return nil
}
