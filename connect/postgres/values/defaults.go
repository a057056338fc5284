package values

import (
	"regexp"
	"strings"
)

// Debezium's patterns for a default expression: a function call (now(),
// nextval('s'::regclass)) or one of the SQL current-time keywords is
// computed by the database, so it gets a placeholder; otherwise a quoted
// literal's text, or the bare expression, is the value.
var (
	functionDefault = regexp.MustCompile(`^[(]?[A-Za-z0-9_.]+\((?:.+(?:, ?.+)*)?\)`)
	literalDefault  = regexp.MustCompile(`'(.*?)'`)
	currentDateTime = map[string]bool{"current_timestamp": true, "current_time": true, "current_date": true,
		"localtime": true, "localtimestamp": true}
)

// defaultPlaceholders are the types Debezium parses defaults of (keyed by
// the column's type name, so a domain's column has none), with the value it
// assumes for a computed default.
var defaultPlaceholders = map[string]string{
	"bit": "00", "varbit": "0", "bool": "false",
	"bpchar": "", "varchar": "", "text": "",
	"numeric": "0.0", "float4": "0.0", "float8": "0.0",
	"int2": "0", "int4": "0", "int8": "0", "serial": "0", "bigserial": "0", "smallserial": "0",
	"json": "{}", "jsonb": "{}", "xml": "",
	"uuid": "00000000-0000-0000-0000-000000000000",
	"date": "1970-01-01", "time": "00:00", "timestamp": "1970-01-01", "timestamptz": "1970-01-01",
	"interval": "epoch",
}

// trimmedDefault are the types whose default Debezium trims of blanks and
// reads as no default when it is a NULL cast.
var trimmedDefault = map[string]bool{
	"bit": true, "varbit": true, "bool": true, "numeric": true, "float4": true, "float8": true,
	"int2": true, "int4": true, "serial": true, "int8": true, "bigserial": true, "smallserial": true,
	"uuid": true, "date": true, "time": true, "timestamp": true, "timestamptz": true, "interval": true,
}

// extractDefault is the literal a default expression holds, or the
// placeholder for a computed one; ok is false for a NULL default.
func extractDefault(expr, placeholder string) (string, bool) {
	if functionDefault.MatchString(expr) || currentDateTime[strings.ToLower(expr)] {
		return placeholder, true
	}
	if !strings.Contains(expr, "'") {
		return expr, !strings.HasPrefix(expr, "NULL::")
	}
	m := literalDefault.FindStringSubmatch(expr)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// enumDefault is an enum column's default: the quoted label before a cast
// to the enum's own type.
func enumDefault(typeName, expr string) (string, bool) {
	at := strings.LastIndex(expr, "::")
	if at < 0 {
		return "", false
	}
	cast := strings.ReplaceAll(expr[at+2:], `"`, "")
	if i := strings.LastIndexByte(cast, '.'); i >= 0 {
		cast = cast[i+1:]
	}
	if cast != typeName {
		return "", false
	}
	v := expr[:at]
	if len(v) < 2 || v[0] != '\'' || v[len(v)-1] != '\'' {
		return "", false
	}
	return v[1 : len(v)-1], true
}

// defaultValue is Debezium's schema default for a column: its literal
// default converted like a value. Debezium has none for a type it has no
// default parser for (a domain, an array, money, bytea ...), for a NULL
// default, for one it cannot convert, or for a struct value (Connect cannot
// hold a struct default).
func defaultValue(c Column, r resolved, s spec, m Modes) (any, bool) {
	if c.Default == nil {
		return nil, false
	}
	expr := *c.Default
	var text string
	switch {
	case c.Type.Kind == KindEnum:
		v, ok := enumDefault(c.Type.Name, expr)
		if !ok {
			return nil, false
		}
		text = v
	default:
		placeholder, known := defaultPlaceholders[c.Type.Name]
		if !known || c.Type.Kind != KindBase {
			return nil, false
		}
		if trimmedDefault[c.Type.Name] {
			expr = strings.TrimSpace(expr)
			if strings.HasPrefix(expr, "NULL::") {
				return nil, false
			}
		}
		v, ok := extractDefault(expr, placeholder)
		if !ok {
			return nil, false
		}
		text = v
	}
	switch c.Type.Name {
	case "bool":
		return strings.EqualFold(strings.TrimSpace(text), "true"), true
	case "uuid":
		text = strings.ToLower(text)
	case "time":
		if strings.Count(text, ":") == 1 {
			text += ":00"
		}
	case "timestamp":
		if !strings.Contains(text, " ") {
			text += " 00:00:00"
		}
	case "timestamptz":
		if !strings.Contains(text, " ") {
			text += " 00:00:00+00"
		}
	case "bit", "varbit":
		if len(text) == 1 && r.length() > 1 {
			// Debezium reads a one-character bit default as a boolean,
			// which a multi-bit column's converter turns into one byte.
			if text == "1" {
				return []byte{1}, true
			}
			return []byte{0}, true
		}
	}
	v, err := s.conv(text)
	if err != nil {
		return nil, false
	}
	if _, isStruct := v.(map[string]any); isStruct && s.schema.Type == "struct" {
		return nil, false
	}
	return v, true
}
