package postgres

// Debezium's source signal channel: signals are rows of a table of the
// captured database (signal.data.collection, columns id, type and data),
// read from the stream like any change, so a signal takes effect at its
// place in the WAL. The incremental snapshot's watermarks are rows of the
// same table (incremental.go).

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/postgres/signals"
)

// signalColumnErrors refuses column lists that leave the signal table's
// columns out, as Debezium requires them in.
func signalColumnErrors(props map[string]string) []*configError {
	st, err := signals.ParseTable(strings.TrimSpace(props["signal.data.collection"]))
	if err != nil {
		return nil // no signal table, or keyError names the problem
	}
	p := parser{props: props}
	f := TableFilter{ColumnInclude: p.regexps("column.include.list"), ColumnExclude: p.regexps("column.exclude.list")}
	if p.err != nil {
		return nil // keyError names it
	}
	for _, c := range signals.Columns {
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
	for _, want := range signals.Columns {
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

// insertSignal writes a signal row; it is read back from the stream.
func insertSignal(ctx context.Context, c *pgconn.PgConn, st signals.Table, s signal) error {
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
	case signals.ExecuteSnapshot, signals.StopSnapshot:
	default:
		return &connect.SignalError{Message: fmt.Sprintf("signal type %q is not supported by the native connector: use %s or %s",
			s.Type, signals.ExecuteSnapshot, signals.StopSnapshot)}
	}
	req, err := signals.ParseRequest(data, s.Type == signals.ExecuteSnapshot)
	if err != nil {
		return &connect.SignalError{Message: s.Type + ": " + err.Error()}
	}
	c, err := dial(ctx, t.cfg, false, t.cfg.InitialStatements)
	if err != nil {
		return err
	}
	defer closeConn(c)
	if s.Type == signals.ExecuteSnapshot {
		if err := t.checkSnapshotTables(ctx, c, req); err != nil {
			return err
		}
	}
	return insertSignal(ctx, c, *t.cfg.Signals, signal{ID: s.ID, Type: s.Type, Data: data})
}

// checkSnapshotTables refuses an execute-snapshot whose tables the
// connector does not capture or could not read by key.
func (t *Task) checkSnapshotTables(ctx context.Context, c *pgconn.PgConn, req signals.Request) error {
	cat := newCatalog(c)
	tables, err := cat.tables(ctx, t.cfg, t.viaRoot)
	if err != nil {
		return err
	}
	ids := make([]string, len(tables))
	for i, tb := range tables {
		ids[i] = tb.ID()
	}
	matched, unmatched, err := signals.Match(req.DataCollections, ids)
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
