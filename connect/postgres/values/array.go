package values

import (
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
		// Debezium gives bit[] a scalar schema that its array values then
		// fail to match.
		return spec{}, fmt.Errorf("type %s: %w", r.t.Name, ErrUnsupported)
	default:
		return spec{}, fmt.Errorf("type %s: %w", r.t.Name, ErrOmitted)
	}
	es, err := build(resolved{t: el, mod: r.mod}, m)
	if err != nil {
		return spec{}, err
	}
	switch el.Name {
	case "numeric":
		// pgjdbc reads a numeric[]'s elements as BigDecimal, which has no
		// NaN or infinity: such an array fails to convert whatever the mode.
		conv := es.conv
		es.conv = func(s string) (any, error) {
			if _, special := specialDecimals[s]; special {
				return nil, fmt.Errorf("a numeric array element %s cannot be read as a decimal (Debezium reads the whole array as null)", s)
			}
			return conv(s)
		}
	case "timestamp", "timestamptz":
		// pgjdbc hands an infinite element over as a java.sql.Timestamp of
		// its infinity constant, which Debezium's conversions then
		// overflow; Sluice does not reproduce that arithmetic.
		conv := es.conv
		es.conv = func(s string) (any, error) {
			if s == "infinity" || s == "-infinity" {
				return nil, fmt.Errorf("an infinite element in a %s array is not supported", el.Name)
			}
			return conv(s)
		}
	case "date":
		// Array elements reach Debezium through pgjdbc on both paths,
		// as they do on the snapshot's.
		es.conv = es.snapshot
	case "time":
		// pgjdbc hands array elements over as java.sql.Time: milliseconds.
		es = timeSpec(timeOfDayUnit(m, resolved{t: el, mod: r.mod}.scale()), true)
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
			c = c / 1e6 * 1e6
			sign := "+"
			if off < 0 {
				sign, off = "-", -off
			}
			return conv(fmt.Sprintf("%s%s%02d:%02d:%02d", clockText(c), sign, off/3600, off/60%60, off%60))
		}
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
				if out[i], err = es.conv(*it); err != nil {
					return nil, fmt.Errorf("array element %d: %w", i+1, err)
				}
			}
			return out, nil
		},
	}, nil
}

// clockText prints nanoseconds of the day as HH:MM:SS.fffffffff.
func clockText(c clock) string {
	n := int64(c)
	return fmt.Sprintf("%02d:%02d:%02d.%09d", n/3600e9, n/60e9%60, n/1e9%60, n%1e9)
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
