// Package signals is Debezium's signal formats, as the native PostgreSQL
// connector reads and writes them: the signal table's name
// (signal.data.collection), the data of the execute-snapshot and
// stop-snapshot signals, how their data-collections pick tables, and the
// incremental snapshot's watermark rows. It only parses and formats; the
// connector reads signals from its stream and writes them with SQL.
package signals

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// The signal types the native connector acts on, and those of the
// watermarks it writes itself (Debezium's names).
const (
	ExecuteSnapshot = "execute-snapshot"
	StopSnapshot    = "stop-snapshot"
	WindowOpen      = "snapshot-window-open"
	WindowClose     = "snapshot-window-close"
)

// Columns are the signal table's columns, as Debezium names them.
var Columns = []string{"id", "type", "data"}

// Table is the table signals are written to and read from, through the
// stream: Debezium's signal.data.collection.
type Table struct {
	Schema, Name string
}

// ID is the table as signal.data.collection and the table lists name it:
// schema.table.
func (t Table) ID() string { return t.Schema + "." + t.Name }

// ParseTable reads signal.data.collection: <schema>.<table>, either part in
// double quotes when it holds a dot or other special characters
// (Debezium's form for PostgreSQL).
func ParseTable(v string) (Table, error) {
	var parts []string
	var cur strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"' && quoted && i+1 < len(v) && v[i+1] == '"':
			cur.WriteByte('"')
			i++
		case c == '"':
			quoted = !quoted
		case c == '.' && !quoted:
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	parts = append(parts, cur.String())
	if quoted || len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return Table{}, fmt.Errorf("%q is not a table as <schema>.<table> (quote a part that holds a dot: public.\"my.signals\")", v)
	}
	return Table{Schema: parts[0], Name: parts[1]}, nil
}

// Request is the data of an execute-snapshot or stop-snapshot signal,
// Debezium's fields.
type Request struct {
	DataCollections      []string    `json:"data-collections"`
	Type                 string      `json:"type"`
	AdditionalConditions []Condition `json:"additional-conditions"`
	SurrogateKey         string      `json:"surrogate-key"`
}

// Condition limits the rows of the tables DataCollection (a regular
// expression) an incremental snapshot reads to those Filter (an SQL
// condition) selects.
type Condition struct {
	DataCollection string `json:"data-collection"`
	Filter         string `json:"filter"`
}

// ParseRequest reads a snapshot signal's data; execute says it is an
// execute-snapshot, which needs tables. Only incremental snapshots are
// supported.
func ParseRequest(data string, execute bool) (Request, error) {
	var r Request
	if strings.TrimSpace(data) != "" {
		if err := json.Unmarshal([]byte(data), &r); err != nil {
			return r, fmt.Errorf("its data is not a JSON object with Debezium's fields: %w", err)
		}
	}
	if r.Type != "" && !strings.EqualFold(r.Type, "incremental") {
		return r, fmt.Errorf("snapshot type %q is not supported by the native connector: only incremental is", r.Type)
	}
	if r.SurrogateKey != "" {
		return r, errors.New("surrogate-key is not supported by the native connector: its incremental snapshots read a table by its primary key")
	}
	if execute && len(r.DataCollections) == 0 {
		return r, errors.New("data-collections is missing or empty: name the tables to snapshot (regular expressions matching <schema>.<table>)")
	}
	for i := range r.DataCollections {
		r.DataCollections[i] = strings.TrimSpace(r.DataCollections[i])
	}
	for _, c := range r.AdditionalConditions {
		if _, err := regexp.Compile(c.DataCollection); err != nil || c.DataCollection == "" {
			return r, fmt.Errorf("additional-conditions: data-collection %q is not a regular expression", c.DataCollection)
		}
		if strings.TrimSpace(c.Filter) == "" {
			return r, fmt.Errorf("additional-conditions: the condition of %q has no filter", c.DataCollection)
		}
	}
	return r, nil
}

// Filter is the additional condition of table, the first that matches it
// (case-insensitively, as Debezium matches them), or "".
func (r Request) Filter(table string) string {
	for _, c := range r.AdditionalConditions {
		if re, err := regexp.Compile("(?i)^(?:" + c.DataCollection + ")$"); err == nil && re.MatchString(table) {
			return c.Filter
		}
	}
	return ""
}

// Match resolves data-collections — regular expressions matched against
// the whole of <schema>.<table>, as Debezium matches them — against
// tables, in tables' order, each once; unmatched are the expressions that
// matched none.
func Match(patterns []string, tables []string) (matched, unmatched []string, err error) {
	for _, p := range patterns {
		re, err := regexp.Compile("^(?:" + p + ")$")
		if err != nil {
			return nil, nil, fmt.Errorf("data-collections: %q is not a regular expression: %w", p, err)
		}
		n := 0
		for _, t := range tables {
			if re.MatchString(t) {
				n++
				if !slices.Contains(matched, t) {
					matched = append(matched, t)
				}
			}
		}
		if n == 0 {
			unmatched = append(unmatched, p)
		}
	}
	return matched, unmatched, nil
}

// Watermark is the id and data of a chunk's low (closed zero) or high
// watermark row, as Debezium writes them: the chunk's id with -open or
// -close, and when the window opened and closed.
func Watermark(chunk string, opened, closed time.Time) (id, data string) {
	if closed.IsZero() {
		return chunk + "-open", fmt.Sprintf(`{"openWindowTimestamp": "%s"}`, opened.UTC().Format(time.RFC3339Nano))
	}
	return chunk + "-close", fmt.Sprintf(`{"openWindowTimestamp": "%s", "closeWindowTimestamp": "%s"}`,
		opened.UTC().Format(time.RFC3339Nano), closed.UTC().Format(time.RFC3339Nano))
}
