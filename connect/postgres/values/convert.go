package values

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/connect"
)

// spec is how values of one type convert: the schema (required; Compile
// makes it optional for a nullable column), the text-to-value function, and
// the value Debezium puts in a NOT NULL column it has no value for (the
// non-key columns of a delete's old row under REPLICA IDENTITY DEFAULT).
type spec struct {
	schema *connect.Schema
	conv   func(string) (any, error)
	zero   any
	// snapshot, when set, converts a value read by the snapshot's SELECT
	// where Debezium's JDBC path gives another result than its pgoutput
	// path (conv).
	snapshot func(string) (any, error)
	// unstreamed marks a type Debezium's pgoutput path has no decoder
	// for: a streamed value is always null (the zero in a NOT NULL column).
	unstreamed bool
}

// build chooses a type's conversion as Debezium's PostgresValueConverter
// does, keyed by the root type's name (built-in names are fixed; extension
// types such as hstore have no fixed OID).
func build(r resolved, m Modes) (spec, error) {
	switch r.t.Kind {
	case KindEnum:
		return spec{
			schema: named(connect.SchemaTypeString, enumName, map[string]string{"allowed": strings.Join(r.t.EnumLabels, ",")}),
			conv:   func(s string) (any, error) { return s, nil },
			zero:   "",
		}, nil
	case KindArray:
		return buildArray(r, m)
	case KindBase:
	default:
		return spec{}, fmt.Errorf("type %s of kind %d: %w", r.t.Name, r.t.Kind, ErrOmitted)
	}
	str := func(schema *connect.Schema) (spec, error) {
		return spec{schema: schema, conv: func(s string) (any, error) { return s, nil }, zero: ""}, nil
	}
	switch r.t.Name {
	case "bool":
		return spec{schema: plain(connect.SchemaTypeBoolean), conv: parseBool, zero: false}, nil
	case "int2":
		return intSpec(connect.SchemaTypeInt16, 16, int16(0)), nil
	case "int4":
		return intSpec(connect.SchemaTypeInt32, 32, int32(0)), nil
	case "int8", "oid":
		return intSpec(connect.SchemaTypeInt64, 64, int64(0)), nil
	case "float4":
		return spec{schema: plain(connect.SchemaTypeFloat32), zero: float32(0), conv: func(s string) (any, error) {
			f, err := strconv.ParseFloat(s, 32)
			return float32(f), err
		}}, nil
	case "float8":
		return spec{schema: plain(connect.SchemaTypeFloat64), zero: float64(0), conv: func(s string) (any, error) {
			return strconv.ParseFloat(s, 64)
		}}, nil
	case "numeric":
		return numericSpec(r, m), nil
	case "money":
		return moneySpec(m), nil
	case "name":
		// Debezium's pgoutput column resolver has no case for name, so
		// it streams null; the snapshot reads the text through JDBC.
		sp, _ := str(plain(connect.SchemaTypeString))
		sp.unstreamed = true
		return sp, nil
	case "text", "varchar", "bpchar", "char", "citext", "isbn",
		"inet", "cidr", "macaddr", "macaddr8",
		"int4range", "int8range", "numrange", "tsrange", "tstzrange", "daterange":
		return str(plain(connect.SchemaTypeString))
	case "json", "jsonb":
		return str(named(connect.SchemaTypeString, jsonName, nil))
	case "uuid":
		return str(named(connect.SchemaTypeString, uuidName, nil))
	case "xml":
		return str(named(connect.SchemaTypeString, xmlName, nil))
	case "tsvector":
		return str(named(connect.SchemaTypeString, tsvectorName, nil))
	case "ltree":
		return str(named(connect.SchemaTypeString, ltreeName, nil))
	case "bytea":
		return byteaSpec(m), nil
	case "bit", "varbit":
		return bitsSpec(r), nil
	case "date":
		return spec{schema: dateSchema(m), zero: int32(0),
			conv:     func(s string) (any, error) { return parseDate(s) },
			snapshot: func(s string) (any, error) { return parseJDBCDate(s) }}, nil
	case "time":
		return timeSpec(timeOfDayUnit(m, r.scale()), false), nil
	case "timestamp":
		return timestampSpec(timestampUnit(m, r.scale()), parseLocalTimestamp), nil
	case "timestamptz":
		return zonedTimestampSpec(r.scale(), parseZonedTimestamp), nil
	case "timetz":
		return spec{schema: named(connect.SchemaTypeString, zonedTimeName, nil), zero: "00:00:00Z",
			conv: func(s string) (any, error) { return zonedTime(s) }}, nil
	case "interval":
		return intervalSpec(m), nil
	case "point":
		return spec{schema: pointSchema(), conv: parsePoint, zero: pointValue(0, 0)}, nil
	case "hstore":
		return hstoreSpec(m), nil
	case "geometry", "geography", "vector", "halfvec", "sparsevec":
		return spec{}, fmt.Errorf("type %s: %w", r.t.Name, ErrUnsupported)
	}
	// What pgjdbc reports as OTHER, DISTINCT, STRUCT or REF_CURSOR has no
	// Debezium converter: box, circle, pg_lsn, tsquery, composite types ...
	return spec{}, fmt.Errorf("type %s: %w", r.t.Name, ErrOmitted)
}

// parseBool is pgoutput's boolean: "t" (any case) is true, anything else
// false.
func parseBool(s string) (any, error) { return strings.EqualFold(s, "t"), nil }

func intSpec(typ string, bits int, zero any) spec {
	return spec{schema: plain(typ), zero: zero, conv: func(s string) (any, error) {
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return nil, err
		}
		switch bits {
		case 16:
			return int16(n), nil
		case 32:
			return int32(n), nil
		}
		return n, nil
	}}
}

// errSpecialDecimal is Debezium's refusal to put NaN or ±Infinity in a
// Decimal or VariableScaleDecimal (precise mode).
func errSpecialDecimal(v string) error {
	return fmt.Errorf("got a special value (%s) for a decimal column, which decimal.handling.mode=precise cannot express; Debezium writes null for it (set decimal.handling.mode=string or double to keep it)", v)
}

// specialDecimals are numeric's non-finite values, with the names Debezium's
// SpecialValueDecimal prints in string mode.
var specialDecimals = map[string]struct {
	name string
	f    float64
}{
	"NaN":       {"NAN", math.NaN()},
	"Infinity":  {"POSITIVE_INFINITY", math.Inf(1)},
	"-Infinity": {"NEGATIVE_INFINITY", math.Inf(-1)},
}

func numericSpec(r resolved, m Modes) spec {
	precision, scale, variable := r.length(), r.scale(), r.variableScale()
	// Debezium rescales a fixed-scale numeric to its column's scale (a
	// value read with more digits, such as a default, loses them exactly or
	// fails).
	adjust := func(d decimal) (decimal, error) {
		if variable {
			return d, nil
		}
		out, exact := d.withScale(int32(scale))
		if !exact {
			return decimal{}, fmt.Errorf("numeric value %s does not fit scale %d", d.plainString(), scale)
		}
		return out, nil
	}
	s := spec{}
	switch m.Decimal {
	case DecimalDouble:
		s.schema, s.zero = plain(connect.SchemaTypeFloat64), float64(0)
	case DecimalString:
		s.schema, s.zero = plain(connect.SchemaTypeString), "0"
		if !variable && scale > 0 {
			s.zero = "0." + strings.Repeat("0", scale)
		}
	default:
		if variable {
			s.schema = variableScaleSchema()
			s.zero = map[string]any{"scale": int32(0), "value": []byte{0}}
		} else {
			s.schema = decimalSchema(precision, scale)
			s.zero = make([]byte, 1)
		}
	}
	s.conv = func(text string) (any, error) {
		if sp, ok := specialDecimals[text]; ok {
			switch m.Decimal {
			case DecimalDouble:
				return sp.f, nil
			case DecimalString:
				return sp.name, nil
			}
			return nil, errSpecialDecimal(text)
		}
		d, err := parseDecimal(text)
		if err != nil {
			return nil, err
		}
		if d, err = adjust(d); err != nil {
			return nil, err
		}
		switch m.Decimal {
		case DecimalDouble:
			return d.float64(), nil
		case DecimalString:
			return d.plainString(), nil
		}
		if variable {
			d = d.stripTrailingZeros()
			if d.scale < 0 {
				d, _ = d.withScale(0)
			}
			return map[string]any{"scale": d.scale, "value": d.unscaledBytes()}, nil
		}
		return d.unscaledBytes(), nil
	}
	return s
}

// parseMoney reads money's text in lc_monetary=C ("$1,234.56",
// "-$1,234.56") as Debezium's PostgresMoney does: sign, then drop the
// currency symbol and the thousands separators.
func parseMoney(s string) (decimal, error) {
	if s == "" {
		return decimal{}, fmt.Errorf("not a money amount: %q", s)
	}
	neg := s[0] == '-' || s[0] == '('
	v := strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(s, "-"), ")"), "(")
	if v != "" && (v[0] < '0' || v[0] > '9') && v[0] != '.' {
		v = v[1:]
	}
	v = strings.ReplaceAll(v, ",", "")
	if neg {
		v = "-" + v
	}
	d, err := parseDecimal(v)
	if err != nil {
		return decimal{}, fmt.Errorf("not a money amount: %q", s)
	}
	return d, nil
}

func moneySpec(m Modes) spec {
	digits := m.MoneyFractionDigits
	zeroDec, _ := decimal{unscaled: new(big.Int), scale: 0}.withScale(int32(digits))
	s := spec{}
	switch m.Decimal {
	case DecimalDouble:
		s.schema, s.zero = plain(connect.SchemaTypeFloat64), float64(0)
	case DecimalString:
		s.schema, s.zero = plain(connect.SchemaTypeString), zeroDec.plainString()
	default:
		s.schema, s.zero = decimalSchema(-1, digits), zeroDec.unscaledBytes()
	}
	s.conv = func(text string) (any, error) {
		d, err := parseMoney(text)
		if err != nil {
			return nil, err
		}
		switch m.Decimal {
		case DecimalDouble:
			return d.float64(), nil
		case DecimalString:
			return d.plainString(), nil
		}
		d, _ = d.withScale(int32(digits))
		return d.unscaledBytes(), nil
	}
	return s
}

// parseBytea reads bytea_output=hex text ("\x0aff").
func parseBytea(s string) ([]byte, error) {
	h, ok := strings.CutPrefix(s, `\x`)
	if !ok {
		return nil, fmt.Errorf("bytea is not in hex output format (set bytea_output=hex): %.20q", s)
	}
	return hex.DecodeString(h)
}

func byteaSpec(m Modes) spec {
	s := spec{schema: binarySchema(m), zero: ""}
	enc := func(b []byte) any { return b }
	switch m.Binary {
	case BinaryBytes:
		s.zero = []byte{}
	case BinaryBase64:
		enc = func(b []byte) any { return base64.StdEncoding.EncodeToString(b) }
	case BinaryBase64URLSafe:
		enc = func(b []byte) any { return base64.URLEncoding.EncodeToString(b) }
	case BinaryHex:
		enc = func(b []byte) any { return hex.EncodeToString(b) }
	}
	s.conv = func(text string) (any, error) {
		b, err := parseBytea(text)
		if err != nil {
			return nil, err
		}
		return enc(b), nil
	}
	return s
}

// bitsSpec is bit and varbit: a single bit is a boolean; longer strings are
// Debezium's Bits, the bits little-endian (the last character is bit 0) in
// as few bytes as the highest set bit needs.
func bitsSpec(r resolved) spec {
	n := r.length()
	if n <= 1 {
		return spec{schema: plain(connect.SchemaTypeBoolean), zero: false, conv: func(s string) (any, error) {
			v, err := strconv.ParseInt(s, 2, 64)
			return v != 0, err
		}}
	}
	return spec{schema: named(connect.SchemaTypeBytes, bitsName, map[string]string{"length": strconv.Itoa(n)}), zero: []byte{},
		conv: func(s string) (any, error) {
			high := -1
			for i := range len(s) {
				switch s[len(s)-1-i] {
				case '1':
					high = i
				case '0':
				default:
					return nil, fmt.Errorf("not a bit string: %q", s)
				}
			}
			out := make([]byte, (high+8)/8)
			for i := 0; i <= high; i++ {
				if s[len(s)-1-i] == '1' {
					out[i/8] |= 1 << (i % 8)
				}
			}
			return out, nil
		}}
}

// timeSpec is time. An array element (jdbc) reaches Debezium as a
// java.sql.Time: milliseconds, and 24:00:00 wrapped to midnight.
func timeSpec(u timeUnit, jdbc bool) spec {
	s := spec{schema: timeSchema(u), zero: int64(0)}
	if u == unitConnect || u == unitMillis {
		s.zero = int32(0)
	}
	s.conv = func(text string) (any, error) {
		c, err := parseClock(text)
		if err != nil {
			return nil, err
		}
		if jdbc {
			c = c / 1e6 * 1e6 % (24 * 3600 * 1e9)
		}
		switch u {
		case unitConnect:
			// Debezium's Time.toMilliOfDay accepts up to 24:00:00 here.
			if c < 0 || c > 24*3600*1e9 {
				return nil, fmt.Errorf("time %s is out of the range of Kafka Connect's Time", text)
			}
			return int32(c / 1e6), nil
		case unitMillis:
			return int32(c / 1e6), nil
		case unitMicros:
			return int64(c / 1e3), nil
		}
		return int64(c), nil
	}
	return s
}

// zonedTimestampSpec is timestamptz: ISO-8601 at UTC with the column's
// precision as the fraction's width; infinities stay words.
func zonedTimestampSpec(width int, parse func(string) (instant, error)) spec {
	return spec{schema: named(connect.SchemaTypeString, zonedTimestampName, nil), zero: "1970-01-01T00:00:00Z",
		conv: func(s string) (any, error) {
			if s == "infinity" || s == "-infinity" {
				return s, nil
			}
			in, err := parse(s)
			if err != nil {
				return nil, err
			}
			return in.isoUTC(width), nil
		}}
}

func timestampSpec(u timeUnit, parse func(string) (instant, error)) spec {
	return spec{schema: timestampSchema(u), zero: int64(0), conv: func(text string) (any, error) {
		var in instant
		switch text {
		case "infinity", "-infinity":
			if u == unitNanos {
				if text == "infinity" {
					return int64(math.MaxInt64), nil
				}
				return int64(math.MinInt64), nil
			}
			v := pgInfinity
			if text == "-infinity" {
				v = pgNegInfinity
			}
			in = instant{sec: floorDiv(v, 1e6), nanos: (v - floorDiv(v, 1e6)*1e6) * 1e3}
		default:
			var err error
			if in, err = parse(text); err != nil {
				return nil, err
			}
		}
		switch u {
		case unitConnect, unitMillis:
			return in.millis(), nil
		case unitMicros:
			return in.micros(), nil
		}
		return in.nanosExact()
	}}
}

func intervalSpec(m Modes) spec {
	if m.Interval == IntervalString {
		return spec{schema: named(connect.SchemaTypeString, intervalName, nil), zero: "P0Y0M0DT0H0M0S",
			conv: func(s string) (any, error) {
				iv, err := parseInterval(s)
				if err != nil {
					return nil, err
				}
				return iv.iso()
			}}
	}
	return spec{schema: named(connect.SchemaTypeInt64, microDurationName, nil), zero: int64(0),
		conv: func(s string) (any, error) {
			iv, err := parseInterval(s)
			if err != nil {
				return nil, err
			}
			return iv.micros(), nil
		}}
}

// pointValue is Debezium's Point struct: the coordinates and their
// little-endian WKB, no SRID.
func pointValue(x, y float64) map[string]any {
	wkb := make([]byte, 21)
	wkb[0] = 1
	binary.LittleEndian.PutUint32(wkb[1:], 1)
	binary.LittleEndian.PutUint64(wkb[5:], math.Float64bits(x))
	binary.LittleEndian.PutUint64(wkb[13:], math.Float64bits(y))
	return map[string]any{"x": x, "y": y, "wkb": wkb, "srid": nil}
}

// parsePoint reads "(x,y)".
func parsePoint(s string) (any, error) {
	inner := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "("), ")")
	xs, ys, ok := strings.Cut(inner, ",")
	x, err1 := strconv.ParseFloat(strings.TrimSpace(xs), 64)
	y, err2 := strconv.ParseFloat(strings.TrimSpace(ys), 64)
	if !ok || err1 != nil || err2 != nil {
		return nil, fmt.Errorf("not a point: %q", s)
	}
	return pointValue(x, y), nil
}
