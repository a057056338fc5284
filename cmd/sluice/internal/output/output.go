// Package output prints the CLI's results in the format the user asked
// for with -o: an aligned table for people, or JSON or YAML for scripts.
package output

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"gopkg.in/yaml.v3"
)

// Format is an output format: Table, JSON or YAML.
type Format string

// The output formats.
const (
	Table Format = "table"
	JSON  Format = "json"
	YAML  Format = "yaml"
)

// Parse reads -o's value.
func Parse(s string) (Format, error) {
	switch f := Format(strings.ToLower(s)); f {
	case Table, JSON, YAML:
		return f, nil
	}
	return "", fmt.Errorf("-o %q: want table, json or yaml", s)
}

// Write prints v in format f: JSON indented, YAML with the JSON field
// names (v goes through encoding/json first, so both agree), or, for
// Table, what table renders.
func Write(w io.Writer, f Format, v any, table func() *Rows) error {
	switch f {
	case JSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	case YAML:
		data, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode as YAML: %w", err)
		}
		var generic any
		if err := json.Unmarshal(data, &generic); err != nil {
			return fmt.Errorf("encode as YAML: %w", err)
		}
		enc := yaml.NewEncoder(w)
		enc.SetIndent(2)
		if err := enc.Encode(generic); err != nil {
			return fmt.Errorf("encode as YAML: %w", err)
		}
		return enc.Close()
	default:
		return table().Write(w)
	}
}

// Rows is a table: a header and rows of cells, written aligned in columns.
type Rows struct {
	header []string
	rows   [][]string
}

// NewRows starts a table with these column headers.
func NewRows(header ...string) *Rows { return &Rows{header: header} }

// Add appends a row; an empty cell prints as "-" so columns stay aligned
// for awk and people alike.
func (r *Rows) Add(cells ...string) *Rows {
	row := make([]string, len(cells))
	for i, c := range cells {
		if c = strings.Join(strings.Fields(c), " "); c == "" {
			c = "-"
		}
		row[i] = c
	}
	r.rows = append(r.rows, row)
	return r
}

// Len is the number of rows.
func (r *Rows) Len() int { return len(r.rows) }

// Write prints the table: the header (when there is one) and the rows,
// columns two spaces apart.
func (r *Rows) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(r.header) > 0 {
		fmt.Fprintln(tw, strings.Join(r.header, "\t"))
	}
	for _, row := range r.rows {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}
