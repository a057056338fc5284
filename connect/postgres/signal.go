package postgres

// Debezium's source signal channel: signals are rows of a table of the
// captured database (signal.data.collection, columns id, type and data),
// read from the stream like any change, so a signal takes effect at its
// place in the WAL. The incremental snapshot's watermarks are rows of the
// same table (incremental.go).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluice-io/sluice/connect"
)

// The signal types the native connector acts on, and those of the
// watermarks it writes itself (Debezium's names).
const (
	SignalExecuteSnapshot = "execute-snapshot"
	SignalStopSnapshot    = "stop-snapshot"
	signalWindowOpen      = "snapshot-window-open"
	signalWindowClose     = "snapshot-window-close"
)

// signalColumns are the signal table's columns, as Debezium names them.
var signalColumns = []string{"id", "type", "data"}

// parseSignalTable reads signal.data.collection: <schema>.<table>, either
// part in double quotes when it holds a dot or other special characters
// (Debezium's form for PostgreSQL).
func parseSignalTable(v string) (SignalTable, error) {
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
		return SignalTable{}, fmt.Errorf("%q is not a table as <schema>.<table> (quote a part that holds a dot: public.\"my.signals\")", v)
	}
	return SignalTable{Schema: parts[0], Name: parts[1]}, nil
}

// signalColumnErrors refuses column lists that leave the signal table's
// columns out, as Debezium requires them in.
func signalColumnErrors(props map[string]string) []*configError {
	st, err := parseSignalTable(strings.TrimSpace(props["signal.data.collection"]))
	if err != nil {
		return nil // no signal table, or keyError names the problem
	}
	p := parser{props: props}
	f := TableFilter{ColumnInclude: p.regexps("column.include.list"), ColumnExclude: p.regexps("column.exclude.list")}
	if p.err != nil {
		return nil // keyError names it
	}
	for _, c := range signalColumns {
		if !f.Column(st.Schema, st.Name, c) {
			key := "column.exclude.list"
			if len(f.ColumnInclude) > 0 {
				key = "column.include.list"
			}
			return []*configError{{key, fmt.Sprintf("leaves out column %s of the signal table %s: its id, type and data columns must be captured", c, st.ID())}}
		}
	}
	return nil
}

// checkSignalTable checks that the signal table exists with its columns
// and that the publication carries its changes (with
// publication.autocreate.mode=filtered the connector adds it itself).
func checkSignalTable(ctx context.Context, c *pgconn.PgConn, cfg Config) error {
	st := cfg.Signals
	rows, err := query(ctx, c, `SELECT a.attname FROM pg_attribute a JOIN pg_class r ON r.oid = a.attrelid
		JOIN pg_namespace n ON n.oid = r.relnamespace
		WHERE n.nspname = $1 AND r.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped`, st.Schema, st.Name)
	if err != nil {
		return fmt.Errorf("read the signal table %s: %w", st.ID(), err)
	}
	if len(rows) == 0 {
		return fmt.Errorf("the signal table %s does not exist: create it (CREATE TABLE %s.%s (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048)))",
			st.ID(), quoteIdent(st.Schema), quoteIdent(st.Name))
	}
	for _, want := range signalColumns {
		if !slices.ContainsFunc(rows, func(r []*string) bool { return str(r[0]) == want }) {
			return fmt.Errorf("the signal table %s has no column %s: it needs id, type and data", st.ID(), want)
		}
	}
	if cfg.PubAutocreate == PubFiltered {
		return nil
	}
	pub, err := query(ctx, c, `SELECT p.puballtables OR EXISTS (SELECT 1 FROM pg_publication_tables t
		WHERE t.pubname = p.pubname AND t.schemaname = $2 AND t.tablename = $3) FROM pg_publication p WHERE p.pubname = $1`,
		cfg.Publication, st.Schema, st.Name)
	switch {
	case err != nil:
		return fmt.Errorf("read publication %s: %w", cfg.Publication, err)
	case len(pub) > 0 && str(pub[0][0]) != "t":
		return fmt.Errorf("publication %s does not publish the signal table %s, so the connector would never read its signals: "+
			"ALTER PUBLICATION %s ADD TABLE %s.%s", cfg.Publication, st.ID(), quoteIdent(cfg.Publication), quoteIdent(st.Schema), quoteIdent(st.Name))
	}
	return nil // no publication yet: all_tables creates one that publishes it
}

// signal is a row of the signal table.
type signal struct {
	ID, Type, Data string
}

// snapshotRequest is the data of an execute-snapshot or stop-snapshot
// signal, Debezium's fields.
type snapshotRequest struct {
	DataCollections      []string              `json:"data-collections"`
	Type                 string                `json:"type"`
	AdditionalConditions []additionalCondition `json:"additional-conditions"`
	SurrogateKey         string                `json:"surrogate-key"`
}

// additionalCondition limits the rows of the tables DataCollection (a
// regular expression) an incremental snapshot reads to those Filter (an
// SQL condition) selects.
type additionalCondition struct {
	DataCollection string `json:"data-collection"`
	Filter         string `json:"filter"`
}

// parseSnapshotRequest reads a snapshot signal's data; execute says it
// is an execute-snapshot, which needs tables. Only incremental snapshots
// are supported.
func parseSnapshotRequest(data string, execute bool) (snapshotRequest, error) {
	var r snapshotRequest
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

// matchTables resolves a signal's data-collections — regular expressions
// matched against the whole of <schema>.<table>, as Debezium matches them —
// against tables, in tables' order, each once; unmatched are the
// expressions that matched none.
func matchTables(patterns []string, tables []string) (matched, unmatched []string, err error) {
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

// filterOf is the additional condition of table, the first that matches
// it (case-insensitively, as Debezium matches them), or "".
func filterOf(conds []additionalCondition, table string) string {
	for _, c := range conds {
		if re, err := regexp.Compile("(?i)^(?:" + c.DataCollection + ")$"); err == nil && re.MatchString(table) {
			return c.Filter
		}
	}
	return ""
}

// insertSignal writes a signal row; it is read back from the stream.
func insertSignal(ctx context.Context, c *pgconn.PgConn, st SignalTable, s signal) error {
	stmt := "INSERT INTO " + quoteIdent(st.Schema) + "." + quoteIdent(st.Name) + " (id, type, data) VALUES ($1, $2, $3)"
	if _, err := query(ctx, c, stmt, s.ID, s.Type, s.Data); err != nil {
		return fmt.Errorf("write signal %s to %s: %w", s.ID, st.ID(), err)
	}
	return nil
}

// Signal implements connect.SignalReceiver: it checks the signal against
// the captured tables — an execute-snapshot must name tables the connector
// captures, each with a primary key — and writes it to the signal table,
// where the stream reads it in order with the changes around it.
func (t *Task) Signal(ctx context.Context, s connect.Signal) error {
	if t.cfg.Signals == nil {
		return &connect.SignalError{Conflict: true,
			Message: "the connector has no signal table: set signal.data.collection (docs/cdc-postgres.md#signals-and-incremental-snapshots)"}
	}
	if s.ID == "" {
		s.ID = connect.NewSignalID()
	}
	data := string(s.Data)
	switch s.Type {
	case SignalExecuteSnapshot, SignalStopSnapshot:
	default:
		return &connect.SignalError{Message: fmt.Sprintf("signal type %q is not supported by the native connector: use %s or %s",
			s.Type, SignalExecuteSnapshot, SignalStopSnapshot)}
	}
	req, err := parseSnapshotRequest(data, s.Type == SignalExecuteSnapshot)
	if err != nil {
		return &connect.SignalError{Message: s.Type + ": " + err.Error()}
	}
	c, err := dial(ctx, t.cfg, false, t.cfg.InitialStatements)
	if err != nil {
		return err
	}
	defer closeConn(c)
	if s.Type == SignalExecuteSnapshot {
		if err := t.checkSnapshotTables(ctx, c, req); err != nil {
			return err
		}
	}
	return insertSignal(ctx, c, *t.cfg.Signals, signal{ID: s.ID, Type: s.Type, Data: data})
}

// checkSnapshotTables refuses an execute-snapshot whose tables the
// connector does not capture or could not read by key.
func (t *Task) checkSnapshotTables(ctx context.Context, c *pgconn.PgConn, req snapshotRequest) error {
	cat := newCatalog(c)
	tables, err := cat.tables(ctx, t.cfg, t.viaRoot)
	if err != nil {
		return err
	}
	ids := make([]string, len(tables))
	for i, tb := range tables {
		ids[i] = tb.ID()
	}
	matched, unmatched, err := matchTables(req.DataCollections, ids)
	if err != nil {
		return &connect.SignalError{Message: err.Error()}
	}
	if len(unmatched) > 0 {
		return &connect.SignalError{Message: fmt.Sprintf("data-collections %s match no table the connector captures (%s)",
			strings.Join(unmatched, ", "), strings.Join(ids, ", "))}
	}
	for _, id := range matched {
		tb := tables[slices.Index(ids, id)]
		if len(tb.Key) == 0 {
			return &connect.SignalError{Message: fmt.Sprintf("table %s has no primary key: an incremental snapshot reads a table in chunks of its primary key", id)}
		}
	}
	return nil
}
