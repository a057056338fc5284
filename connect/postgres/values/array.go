package values

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sluice-io/sluice/connect"
)

// arrayElements are the element types Debezium converts arrays of; other
// arrays (money[], interval[], varbit[], xml[], point[], name[], arrays of
// domains or composites) it leaves out of its records.
var arrayElements = map[string]bool{
	"int2": true, "int4": true, "int8": true, "oid": true,
	"char": true, "varchar": true, "text": true, "bpchar": true, "citext": true,
	"inet": true, "cidr": true, "macaddr": true, "macaddr8": true,
	"int4range": true, "int8range": true, "numrange": true, "tsrange": true, "tstzrange": true, "daterange": true,
	"numeric": true, "float4": true, "float8": true, "bool": true,
	"date": true, "time": true, "timetz": true, "timestamp": true, "timestamptz": true,
	"uuid": true, "json": true, "jsonb": true, "bytea": true, "hstore": true, "ltree": true,
}

// buildArray is a one-dimensional array of a supported element type. The
// element converts as a column of its type would, with the array column's
// modifier (numeric(10,2)[] holds numeric(10,2) elements); its schema is
// optional, except an enum's, which Debezium leaves required.
func buildArray(r resolved, m Modes) (spec, error) {
	if r.t.Elem == nil {
		return spec{}, fmt.Errorf("array type %s has no element type", r.t.Name)
	}
	el := *r.t.Elem
	switch {
	case el.Kind == KindEnum:
	case el.Kind == KindBase && arrayElements[el.Name]:
	case el.Kind == KindBase && el.Name == "bit":
		// Debezium gives bit[] the scalar schema of its element and then
		// cannot read a value into it (pgjdbc decodes the elements as
		// booleans): the column is there, its values null.
		s := bitsSpec(resolved{t: el, mod: r.mod})
		s.conv = func(string) (any, error) {
			return nil, fmt.Errorf("Debezium cannot read a %s value (it writes null)", r.t.Name)
		}
		return s, nil
	default:
		return spec{}, fmt.Errorf("type %s: %w", r.t.Name, ErrOmitted)
	}
	es, err := build(resolved{t: el, mod: r.mod}, m)
	if err != nil {
		return spec{}, err
	}
	if err := asPgjdbcElements(&es, el, resolved{t: el, mod: r.mod}, m); err != nil {
		return spec{}, err
	}
	if el.Kind != KindEnum {
		es.schema.Optional = true
	}
	return spec{
		schema: &connect.Schema{Type: connect.SchemaTypeArray, ValueSchema: es.schema},
		zero:   []any{},
		conv: func(s string) (any, error) {
			items, err := parseArray(s)
			if err != nil {
				return nil, err
			}
			out := make([]any, len(items))
			for i, it := range items {
				if it == nil {
					continue
				}
				v, err := es.conv(*it)
				switch {
				case errors.Is(err, errConverterNull):
					v = nil
				case err != nil:
					return nil, fmt.Errorf("array element %d: %w", i+1, err)
				}
				out[i] = v
			}
			return out, nil
		},
	}, nil
}

// asPgjdbcElements adjusts an element conversion to what Debezium sees of
// array elements: on the snapshot and the streaming path alike, pgjdbc
// decodes the array literal into Java objects first. Those are BigDecimal
// for numeric (no NaN or infinity), and java.sql.Date, Time and Timestamp
// for the date and time types — whose fields pgjdbc fills in the Julian
// calendar before 1582-10-15, whose times keep milliseconds (seconds for a
// timetz), and whose era Debezium drops when it reads the fields back.
func asPgjdbcElements(es *spec, el Type, r resolved, m Modes) error {
	refuseInfinite := func(conv func(string) (any, error)) func(string) (any, error) {
		return func(s string) (any, error) {
			if s == "infinity" || s == "-infinity" {
				// pgjdbc's infinity constants overflow Debezium's
				// arithmetic; Sluice does not reproduce that.
				return nil, fmt.Errorf("an infinite element in a %s array is not supported", el.Name)
			}
			return conv(s)
		}
	}
	jdbcFields := calendarReading{days: daysFromCivil, keepEra: false}
	switch el.Name {
	case "numeric":
		conv := es.conv
		es.conv = func(s string) (any, error) {
			if _, special := specialDecimals[s]; special {
				return nil, fmt.Errorf("a numeric array element %s cannot be read as a decimal (Debezium reads the whole array as null)", s)
			}
			return conv(s)
		}
	case "date":
		es.conv = func(s string) (any, error) {
			if s == "infinity" || s == "-infinity" {
				return parseJDBCDate(s)
			}
			return parseDateIn(s, jdbcFields)
		}
	case "time":
		*es = timeSpec(timeOfDayUnit(m, r.scale()), true)
	case "timetz":
		conv := es.conv
		es.conv = func(s string) (any, error) {
			local, off, err := splitOffset(s)
			if err != nil {
				return nil, err
			}
			c, err := parseClock(local)
			if err != nil {
				return nil, err
			}
			n := int64(c) / 1e9 // java.sql.Time.toLocalTime keeps whole seconds
			sign := "+"
			if off < 0 {
				sign, off = "-", -off
			}
			return conv(fmt.Sprintf("%02d:%02d:%02d%s%02d:%02d:%02d", n/3600, n/60%60, n%60, sign, off/3600, off/60%60, off%60))
		}
	case "timestamp":
		// Debezium takes a java.sql.Timestamp's instant.
		ts := timestampSpec(timestampUnit(m, r.scale()), func(s string) (instant, error) {
			return parseTimestampIn(s, calendarReading{days: hybridDays, keepEra: true})
		})
		es.conv = refuseInfinite(ts.conv)
	case "timestamptz":
		// Debezium reads a java.sql.Timestamp's fields back.
		zs := zonedTimestampSpec(r.scale(), func(s string) (instant, error) { return parseZonedTimestampIn(s, jdbcFields) })
		es.conv = refuseInfinite(zs.conv)
	}
	return nil
}

// parseArray reads a one-dimensional array literal as PostgreSQL prints
// it: {a,"b c",NULL}, optionally after explicit bounds ("[0:1]={...}").
// Unquoted NULL is SQL NULL (nil); a quoted "NULL" is the text.
func parseArray(s string) ([]*string, error) {
	if strings.HasPrefix(s, "[") {
		if eq := strings.Index(s, "="); eq >= 0 {
			s = s[eq+1:]
		}
	}
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, fmt.Errorf("not an array literal: %.40q", s)
	}
	body := s[1 : len(s)-1]
	if body == "" {
		return []*string{}, nil
	}
	if strings.HasPrefix(body, "{") {
		return nil, fmt.Errorf("multi-dimensional arrays are not supported: %.40q", s)
	}
	var out []*string
	for i := 0; i <= len(body); {
		if i < len(body) && body[i] == '"' {
			var b strings.Builder
			j := i + 1
			for ; j < len(body) && body[j] != '"'; j++ {
				if body[j] == '\\' {
					j++
				}
				if j < len(body) {
					b.WriteByte(body[j])
				}
			}
			if j >= len(body) {
				return nil, fmt.Errorf("unterminated quoted element in %.40q", s)
			}
			v := b.String()
			out = append(out, &v)
			i = j + 1
		} else {
			j := strings.IndexByte(body[i:], ',')
			if j < 0 {
				j = len(body) - i
			}
			v := strings.TrimSpace(body[i : i+j])
			if v == "NULL" {
				out = append(out, nil)
			} else {
				out = append(out, &v)
			}
			i += j
		}
		if i < len(body) && body[i] != ',' {
			return nil, fmt.Errorf("malformed array literal %.40q", s)
		}
		i++
	}
	return out, nil
}
