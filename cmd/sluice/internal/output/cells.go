package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Compact is a JSON value on one line; a string is itself.
func Compact(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	data, _ := json.Marshal(v)
	return string(data)
}

// OrDash is s, or "-" when it is empty.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Cell is s as one table cell, written so that it cannot pass for more:
// control characters — a newline that would forge a row, a tab that would
// shift the columns, a terminal escape sequence — are shown escaped, as Go
// quotes them. A principal is whatever a JWT's sub or a certificate's name
// says, and a connector name is whatever its creator chose.
func Cell(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// OneLine is s on one line, cut to at most n runes.
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// FirstLine is a trace's first line, where Java and Go put the message.
func FirstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return OneLine(line, 100)
}

// Generic shows any value as its JSON shows it, as a table: an object's
// keys and values, or an array's elements; nested values stay compact
// JSON (numbers as they were written).
func Generic(v any) *Rows {
	switch v.(type) {
	case map[string]any, []any:
	default:
		if data, err := json.Marshal(v); err == nil {
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			var generic any
			if dec.Decode(&generic) == nil {
				v = generic
			}
		}
	}
	switch v := v.(type) {
	case map[string]any:
		rows := NewRows("KEY", "VALUE")
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			rows.Add(k, Compact(v[k]))
		}
		return rows
	case []any:
		rows := NewRows("VALUE")
		for _, e := range v {
			rows.Add(Compact(e))
		}
		return rows
	}
	return NewRows().Add(Compact(v))
}

// Section writes a table indented under its heading, or "  (none)".
func Section(w io.Writer, rows *Rows) error {
	if rows.Len() == 0 {
		fmt.Fprintln(w, "  (none)")
		return nil
	}
	var b strings.Builder
	if err := rows.Write(&b); err != nil {
		return err
	}
	for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		fmt.Fprintln(w, "  "+l)
	}
	return nil
}

// Count is n and the noun, plural unless n is 1: "1 partition",
// "2 partitions".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
