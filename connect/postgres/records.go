package postgres

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/postgres/envelope"
	"github.com/sluice-io/sluice/connect/postgres/values"
	"github.com/sluice-io/sluice/shared/logthrottle"
)

// records makes the connector's records: the values package converts
// column values, the envelope package shapes Debezium's records, and this
// adds the source partition and offset of the event each comes from.
type records struct {
	cfg Config
	log *slog.Logger
	// warned limits the log of values written null to once a minute a
	// table.
	warned *logthrottle.Limiter
	em     *envelope.Emitter
	shapes map[uint32]*shape
	part   map[string]any
	// incremental adds an incremental snapshot's state to the stream's
	// offsets while one runs (nil: no signal table).
	incremental func(offset map[string]any)
}

// shape is a table's record shapes and its columns' converters.
type shape struct {
	table *envelope.Table
	conv  []*values.Converter
}

func newRecords(cfg Config, log *slog.Logger, now func() time.Time) (*records, error) {
	ec := envelope.DefaultConfig(cfg.Prefix)
	ec.Database = cfg.DBName
	ec.ConnectorVersion = connect.Version
	ec.HeartbeatTopicPrefix = cfg.HeartbeatPrefix
	ec.TransactionTopic = cfg.TxnTopic
	ec.TombstonesOnDelete = cfg.Tombstones
	ec.ProvideTransactionMetadata = cfg.TxnMetadata
	ec.TopicDelimiter, ec.HeartbeatTopicName = cfg.TopicDelimiter, cfg.HeartbeatTopic
	ec.ExtendedHeaders, ec.SkipMessagesWithoutChange = cfg.ExtendedHeaders, cfg.SkipUnchanged
	ec.SkippedOperations = nil
	for _, op := range []envelope.Op{envelope.OpCreate, envelope.OpUpdate, envelope.OpDelete, envelope.OpTruncate} {
		if cfg.Skipped[string(op)] {
			ec.SkippedOperations = append(ec.SkippedOperations, op)
		}
	}
	ec.BinaryHandling = envelope.BinaryHandling(cfg.Modes.Binary)
	ec.Now = now
	em, err := envelope.New(ec)
	if err != nil {
		return nil, err
	}
	return &records{cfg: cfg, log: log, warned: logthrottle.New(time.Minute), em: em, shapes: map[uint32]*shape{}, part: map[string]any{PartitionKey: cfg.Prefix}}, nil
}

// partition is the connector's source partition, Debezium's.
func (r *records) partition() map[string]any { return r.part }

// register builds (or rebuilds) a table's record shapes. A column of a type
// Debezium leaves out of its records is left out of t's captured columns.
func (r *records) register(t *Table) error {
	var cols []values.Column
	var econs []envelope.Column
	var convs []*values.Converter
	for _, c := range t.Columns {
		cv, err := values.Compile(c, r.cfg.Modes)
		if errors.Is(err, values.ErrOmitted) {
			continue
		}
		if err != nil {
			return fmt.Errorf("table %s: %w", t.ID(), err)
		}
		cols, convs = append(cols, c), append(convs, cv)
		schema := cv.Schema()
		if d, ok := cv.Default(); ok {
			// Debezium writes a column's default in its field's schema.
			cp := *schema
			cp.Default = d
			schema = &cp
		}
		econs = append(econs, envelope.Column{Name: c.Name, Schema: schema, Excluded: t.Excluded[c.Name]})
	}
	var key []string
	for _, k := range t.Key {
		key = append(key, t.Columns[k].Name)
	}
	if len(cols) != len(t.Columns) {
		t.Columns, t.Key = cols, keyIndexes(cols, key)
	}
	et, err := r.em.NewTable(t.Schema, t.Name, econs, key)
	if err != nil {
		return err
	}
	r.shapes[t.OID] = &shape{table: et, conv: convs}
	return nil
}

// keyIndexes are the positions in cols of the columns named key.
func keyIndexes(cols []values.Column, key []string) []int {
	var out []int
	for _, k := range key {
		for i, c := range cols {
			if c.Name == k {
				out = append(out, i)
			}
		}
	}
	return out
}

// value converts column j of t from its text form as the stream carries it;
// snapshot says it was read by the snapshot, where Debezium converts a few
// values (infinite dates) differently.
func (r *records) value(t *Table, j int, text *string, snapshot bool) (any, error) {
	s, err := r.shape(t)
	if err != nil {
		return nil, err
	}
	conv := s.conv[j].Value
	if snapshot {
		conv = s.conv[j].SnapshotValue
	}
	v, err := conv(text)
	if err != nil {
		if !t.Columns[j].Optional {
			return nil, fmt.Errorf("table %s: %w", t.ID(), err)
		}
		// Debezium's event.converting.failure.handling.mode=warn (its
		// default): the column is written null, and the failure logged.
		if r.warned.Due(t.ID(), time.Now()) {
			r.log.Warn("a value could not be converted; it is written null, as Debezium writes it", "table", t.ID(), "err", err)
		}
		return nil, nil
	}
	return v, nil
}

// rowValues converts a row of t read as text.
func (r *records) rowValues(t *Table, text []*string) ([]any, error) {
	out := make([]any, len(text))
	for j, s := range text {
		v, err := r.value(t, j, s, true)
		if err != nil {
			return nil, err
		}
		out[j] = v
	}
	return out, nil
}

// unavailable is the value of an unchanged TOASTed column, which pgoutput
// does not send: Debezium's placeholder in the column's type.
func (r *records) unavailable(j int, t *Table) (any, error) {
	s, err := r.shape(t)
	if err != nil {
		return nil, err
	}
	return s.conv[j].Unavailable([]byte(r.cfg.Unavailable))
}

// source is the envelope's view of a position.
func source(p position, snapshot envelope.Snapshot) envelope.Source {
	s := envelope.Source{Commit: p.Time, Snapshot: snapshot, LSN: envelope.Int64(int64(p.LSN))}
	if p.HasTxID {
		s.TxID = envelope.Int64(p.TxID)
	}
	if p.Commit != 0 {
		s.LastCommitLSN = envelope.Int64(int64(p.Commit))
	}
	return s
}

// withOffset gives every record the partition and p's offset, with the
// transaction in progress as Debezium stores it (none in a snapshot).
func (r *records) withOffset(recs []connect.SourceRecord, p position) []connect.SourceRecord {
	o := p.offset()
	if p.streaming() {
		r.em.TransactionOffset(o)
		if r.incremental != nil {
			r.incremental(o)
		}
	}
	for i := range recs {
		recs[i].SourcePartition, recs[i].SourceOffset = r.part, o
	}
	return recs
}

func (r *records) shape(t *Table) (*shape, error) {
	s := r.shapes[t.OID]
	if s == nil {
		return nil, fmt.Errorf("table %s has no record shapes", t.ID())
	}
	return s, nil
}

// read is a snapshot record of a row of t.
func (r *records) read(t *Table, row []any, marker string, p position) ([]connect.SourceRecord, error) {
	s, err := r.shape(t)
	if err != nil {
		return nil, err
	}
	rec, err := r.em.Read(s.table, source(p, envelope.Snapshot(marker)), row)
	if err != nil {
		return nil, err
	}
	return r.withOffset([]connect.SourceRecord{rec}, p), nil
}

// change is a streamed insert (c), update (u) or delete (d) of t.
func (r *records) change(t *Table, op string, before, after *row, p position) ([]connect.SourceRecord, error) {
	s, err := r.shape(t)
	if err != nil {
		return nil, err
	}
	var recs []connect.SourceRecord
	src := source(p, "")
	switch op {
	case "c":
		recs, err = r.em.Insert(s.table, src, rowOf(after))
	case "u":
		recs, err = r.em.Update(s.table, src, rowOf(before), rowOf(after))
	case "d":
		recs, err = r.em.Delete(s.table, src, rowOf(before))
	}
	if err != nil {
		return nil, err
	}
	return r.withOffset(recs, p), nil
}

func rowOf(r *row) []any {
	if r == nil {
		return nil
	}
	return r.values
}

// truncate is a truncated table's event.
func (r *records) truncate(t *Table, p position) ([]connect.SourceRecord, error) {
	s, err := r.shape(t)
	if err != nil {
		return nil, err
	}
	return r.withOffset(r.em.Truncate(s.table, source(p, "")), p), nil
}

// txBegin is a transaction's BEGIN (a record only with
// provide.transaction.metadata).
func (r *records) txBegin(p position) ([]connect.SourceRecord, error) {
	return r.withOffset(r.em.Begin(p.TxID, int64(p.LSN), p.Time), p), nil
}

// txEnd is a transaction's COMMIT.
func (r *records) txEnd(p position) ([]connect.SourceRecord, error) {
	return r.withOffset(r.em.Commit(int64(p.LSN), p.Time), p), nil
}

// message is a logical decoding message's record.
func (r *records) message(transactional bool, prefix string, content []byte, p position) ([]connect.SourceRecord, error) {
	src := source(p, "")
	if !transactional {
		src.TxID = nil
	}
	return r.withOffset(r.em.Message(src, envelope.Message{Prefix: prefix, Content: content, Transactional: transactional}), p), nil
}

// dropped is a record that is not written but moves the offset to p (a
// WAL heartbeat of the connector's own).
func (r *records) dropped(p position) []connect.SourceRecord {
	o := p.offset()
	if r.incremental != nil {
		r.incremental(o)
	}
	return []connect.SourceRecord{{SourcePartition: r.part, SourceOffset: o, Dropped: true}}
}

// heartbeat is Debezium's heartbeat record, carrying p's offset.
func (r *records) heartbeat(p position) ([]connect.SourceRecord, error) {
	return r.withOffset([]connect.SourceRecord{r.em.Heartbeat()}, p), nil
}

// restore takes the transaction in progress from a stored offset.
func (r *records) restore(offset map[string]any) error { return r.em.RestoreTransaction(offset) }
