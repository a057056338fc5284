package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/sluice-io/sluice/connect"
)

// Schema change notifications (sluice.schema.change.topic).
//
// pgoutput describes a table (a Relation message) before its first change in
// a session and again before the first change after its description changed
// (and, at times, after other cache invalidations, with nothing changed).
// With the option set, the streamer compares each description of a captured
// table with the one before it in the session, and when the captured
// columns differ — one added, dropped, renamed or of another type — writes
// one record to the option's topic, before the change event that came with
// the new description. The first description of each table in a session is
// the baseline — that of the first event of the table the session reads,
// skipped ones (read again before the stored position) included: a restart
// that reads again an event from before a change announces the change
// again (as records are at least once), and one that reads none does not
// announce it at all.

// Names of the notification's Connect schemas.
const (
	schemaChangeKeyName   = "io.sluice.connect.postgres.SchemaChangeKey"
	schemaChangeValueName = "io.sluice.connect.postgres.SchemaChangeValue"
	schemaChangeColName   = "io.sluice.connect.postgres.Column"
)

var (
	schemaChangeKeySchema = &connect.Schema{Type: connect.SchemaTypeStruct, Name: schemaChangeKeyName, Fields: []connect.Field{
		{Name: "schema", Schema: connect.StringSchema},
		{Name: "table", Schema: connect.StringSchema},
	}}
	columnSchema = &connect.Schema{Type: connect.SchemaTypeStruct, Name: schemaChangeColName, Fields: []connect.Field{
		{Name: "name", Schema: connect.StringSchema},
		{Name: "type", Schema: connect.StringSchema},
		{Name: "key", Schema: connect.BooleanSchema},
	}}
	namesSchema           = &connect.Schema{Type: connect.SchemaTypeArray, ValueSchema: connect.StringSchema}
	schemaChangeValSchema = &connect.Schema{Type: connect.SchemaTypeStruct, Name: schemaChangeValueName, Fields: []connect.Field{
		{Name: "schema", Schema: connect.StringSchema},
		{Name: "table", Schema: connect.StringSchema},
		{Name: "before", Schema: &connect.Schema{Type: connect.SchemaTypeArray, ValueSchema: columnSchema}},
		{Name: "after", Schema: &connect.Schema{Type: connect.SchemaTypeArray, ValueSchema: columnSchema}},
		{Name: "added", Schema: namesSchema},
		{Name: "dropped", Schema: namesSchema},
		{Name: "retyped", Schema: namesSchema},
		{Name: "lsn", Schema: connect.Int64Schema},
		{Name: "txId", Schema: &connect.Schema{Type: connect.SchemaTypeInt64, Optional: true}},
		{Name: "commit_ts_ms", Schema: connect.Int64Schema},
		{Name: "ts_ms", Schema: connect.Int64Schema},
	}}
)

// columnDesc is a captured column as a Relation message describes it, with
// its type spelled as PostgreSQL spells it (format_type).
type columnDesc struct {
	Name, Type string
	OID        uint32
	Modifier   int32
	Key        bool
}

// schemaChange is a captured table described anew with other columns.
type schemaChange struct {
	msg       *pglogrepl.RelationMessage
	prev, now []columnDesc
}

// compare describes rel's captured columns, when schema changes are
// announced, and keeps a change from prev's to be announced.
func (s *streamer) compare(ctx context.Context, prev, rel *relation) error {
	if s.cfg.SchemaTopic == "" {
		return nil
	}
	var err error
	if rel.desc, err = s.describe(ctx, rel.msg); err != nil {
		return err
	}
	if prev != nil && prev.desc != nil && columnsDiffer(prev.desc, rel.desc) {
		s.changed = append(s.changed, schemaChange{msg: rel.msg, prev: prev.desc, now: rel.desc})
	}
	return nil
}

// columnsDiffer reports whether a column was added, dropped, renamed or
// retyped (a key flag alone — REPLICA IDENTITY changed — is no change of
// the columns).
func columnsDiffer(prev, now []columnDesc) bool {
	return !slices.EqualFunc(prev, now, func(a, b columnDesc) bool {
		return a.Name == b.Name && a.OID == b.OID && a.Modifier == b.Modifier
	})
}

// describe is the captured columns of a relation message.
func (s *streamer) describe(ctx context.Context, m *pglogrepl.RelationMessage) ([]columnDesc, error) {
	out := []columnDesc{}
	for _, c := range m.Columns {
		key := c.Flags&1 == 1
		if !key && !s.cfg.Tables.Column(m.Namespace, m.RelationName, c.Name) {
			continue
		}
		out = append(out, columnDesc{Name: c.Name, OID: c.DataType, Modifier: c.TypeModifier, Key: key})
	}
	if len(out) == 0 {
		return out, nil
	}
	// The types' names, in one query.
	var oids, mods []string
	for _, c := range out {
		oids = append(oids, strconv.FormatUint(uint64(c.OID), 10))
		mods = append(mods, strconv.FormatInt(int64(c.Modifier), 10))
	}
	rows, err := query(ctx, s.cat.conn, `SELECT format_type(o, CASE WHEN m < 0 THEN NULL ELSE m END)
		FROM unnest($1::oid[], $2::int4[]) WITH ORDINALITY AS u(o, m, n) ORDER BY n`,
		"{"+strings.Join(oids, ",")+"}", "{"+strings.Join(mods, ",")+"}")
	if err != nil {
		return nil, fmt.Errorf("name the column types of %s.%s: %w", m.Namespace, m.RelationName, err)
	}
	for i, r := range rows {
		if i < len(out) {
			out[i].Type = str(r[0])
		}
	}
	return out, nil
}

// announce returns the notifications of the tables described anew, to go
// before the records of m, the message that came with the descriptions
// (pgoutput sends a description just before a change or truncate of its
// table; the description itself carries no position, the message at lsn
// does). A notification carries the position of the last event before it —
// taken before m is processed, with the transaction's counters as they were
// — so that a restart after it reads m again. A description that comes
// with an event skipped on a restart (emitted before it) still sets the
// baseline, but announces nothing.
func (s *streamer) announce(lsn pglogrepl.LSN, m pglogrepl.Message) []connect.SourceRecord {
	if len(s.changed) == 0 {
		return nil
	}
	if _, ok := m.(*pglogrepl.RelationMessage); ok {
		return nil
	}
	changed := s.changed
	s.changed = nil
	if s.skipEvent(lsn) {
		return nil
	}
	out := make([]connect.SourceRecord, 0, len(changed))
	for _, c := range changed {
		out = append(out, s.notification(lsn, c))
	}
	return s.rec.withOffset(out, s.last)
}

// notification is the record announcing c at lsn.
func (s *streamer) notification(lsn pglogrepl.LSN, c schemaChange) connect.SourceRecord {
	var added, dropped, retyped []any
	for _, col := range c.now {
		i := slices.IndexFunc(c.prev, func(p columnDesc) bool { return p.Name == col.Name })
		switch {
		case i < 0:
			added = append(added, col.Name)
		case c.prev[i].OID != col.OID || c.prev[i].Modifier != col.Modifier:
			retyped = append(retyped, col.Name)
		}
	}
	for _, p := range c.prev {
		if !slices.ContainsFunc(c.now, func(col columnDesc) bool { return col.Name == p.Name }) {
			dropped = append(dropped, p.Name)
		}
	}
	cols := func(cs []columnDesc) []any {
		out := make([]any, len(cs))
		for i, c := range cs {
			out[i] = map[string]any{"name": c.Name, "type": c.Type, "key": c.Key}
		}
		return out
	}
	names := func(v []any) []any {
		if v == nil {
			return []any{}
		}
		return v
	}
	m := c.msg
	value := map[string]any{
		"schema": m.Namespace, "table": m.RelationName, "before": cols(c.prev), "after": cols(c.now),
		"added": names(added), "dropped": names(dropped), "retyped": names(retyped),
		"lsn": int64(lsn), "txId": nil, "commit_ts_ms": s.tx.commitTime.UnixMilli(), "ts_ms": time.Now().UnixMilli(),
	}
	if s.tx.xid != 0 {
		value["txId"] = int64(s.tx.xid)
	}
	return connect.SourceRecord{
		Topic:     s.cfg.SchemaTopic,
		KeySchema: schemaChangeKeySchema, Key: map[string]any{"schema": m.Namespace, "table": m.RelationName},
		ValueSchema: schemaChangeValSchema, Value: value,
	}
}
